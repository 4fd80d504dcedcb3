// The lifecycle events of one logical call, in the vocabulary of the adapter protocol
// (docs/adapter-protocol.md).
//
// The call engine (call.h) emits them; a driver prints them (JSON lines for the runner, one
// readable line each for people). ToJson() produces exactly the adapter-protocol object:
//
//   adapter/hello         {name, version, policy}
//   response/start        {response_id, attempt, route_id?}
//   assistant/chunk       {response_id, attempt, route_id?, text | tool_call,
//                          commitment:"uncommitted"}
//   response/interrupted  {response_id, attempt, route_id?, failure, scheduled_retry_ms,
//                          delay_source, wasted, next_route_id?}
//   response/committed    {response_id, attempt, route_id?, text, tool_calls, finish_reason, usage}
//   response/failed       {response_id?, attempt?, route_id?, failure, wasted, give_up?,
//                          route_failures?}
//
// `failure` is {code, class, phase, retryable, partial_output, status?, retry_after_ms?,
// request_id?, message, route_id?}. `wasted` ({bytes, approx_tokens}) reports the work of
// discarded attempts. With routes (docs/routes.md) `route_id` names the route of the attempt,
// `next_route_id` the route the next attempt goes to, and a call that ends because every route is
// down lists each route's last failure in `route_failures`.
//
// Values only; no I/O. Thread-safety: values.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"
#include "reference_impl/assembler.h"
#include "reference_impl/dialect_decoder.h"
#include "reference_impl/failure.h"
#include "reference_impl/retry_after.h"

namespace faultline::ref {

enum class EventType { kHello, kStart, kChunk, kInterrupted, kCommitted, kFailed };
std::string_view ToString(EventType type);  // "adapter/hello", "response/start", ...

struct LifecycleEvent {
  EventType type = EventType::kStart;
  std::string response_id;  // empty: absent (a response/failed with no open response)
  int attempt = 0;          // 0: absent
  // assistant/chunk: exactly one of the two.
  std::optional<std::string> text;
  std::optional<ToolCallDelta> tool_call;
  // response/interrupted and response/failed.
  std::optional<Failure> failure;
  std::chrono::milliseconds scheduled_retry{0};
  DelaySource delay_source = DelaySource::kBackoff;
  WastedWork wasted;  // total over the call's discarded attempts so far
  // response/failed: why the policy gave up (policy.h GiveUpReason: "deadline", ...); "" absent.
  std::string give_up;
  // With routes: the attempt's route; the next attempt's (interrupted); each route's last
  // failure (a response/failed with give_up "all-routes-down").
  std::string route_id;
  std::string next_route_id;
  std::vector<Failure> route_failures;
  // response/committed.
  std::optional<Completed> committed;
  // adapter/hello.
  std::string name;
  std::string version;
  nlohmann::json policy;

  bool terminal() const { return type == EventType::kCommitted || type == EventType::kFailed; }
  nlohmann::json ToJson() const;
  // ToJson() as one line of text. Never throws: the text fields carry bytes from the network and
  // the caller (a server's error message, a request id, a call id), and any that are not valid
  // UTF-8 are written with U+FFFD in their place.
  std::string ToJsonLine() const;
};

// `value` as JSON text with invalid UTF-8 replaced by U+FFFD: the one way reference_impl/ dumps
// JSON that may hold untrusted text (nlohmann's plain dump() throws on it).
std::string DumpJson(const nlohmann::json& value);

// The `failure` object of docs/adapter-protocol.md.
nlohmann::json FailureToJson(const Failure& failure);

}  // namespace faultline::ref
