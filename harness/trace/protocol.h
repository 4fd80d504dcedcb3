// The adapter protocol (docs/adapter-protocol.md) from the runner's side: the event
// vocabulary, the call line, and the validation of every line a subject writes.
//
// One home for the protocol's names: the judge, the worlds, the metrics and the reports read
// events by these constants, never by string literals of their own. One home for the lines'
// shapes: harness/schema/adapter-protocol.schema.json (`faultline schema protocol`), embedded in
// the binary, against which each stdout line is validated once, at receipt. A line that is not
// JSON, or not a protocol event, is a subject error (its own verdict), never an invariant failure.
//
// Pure functions; thread-safety: reentrant (the compiled schema is built once, then immutable).
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/trace/event.h"
#include "harness/trace/json_schema.h"
#include "nlohmann/json.hpp"
#include "scenarios/parse_limits.h"
#include "scenarios/scenario.h"

namespace faultline::harness::protocol {

inline constexpr std::string_view kHello = "adapter/hello";
inline constexpr std::string_view kStart = "response/start";
inline constexpr std::string_view kChunk = "assistant/chunk";
inline constexpr std::string_view kInterrupted = "response/interrupted";
inline constexpr std::string_view kCommitted = "response/committed";
inline constexpr std::string_view kFailed = "response/failed";
inline constexpr std::string_view kCancel = "cancel";

// The one field any event may carry: when the subject wrote the line, in milliseconds on its own
// monotonic clock since it read the call line (`faultline call`: since the call began), a number
// >= 0. Optional and for people reading the lines: the runner judges by its own receipt times,
// never by this.
inline constexpr std::string_view kAtMs = "at_ms";

// `event` as one protocol line stamped with `at_ms` (to 0.1 ms).
std::string StampedLine(nlohmann::json event, double at_ms);

// Why a line was rejected: "not-json" or "not-protocol", and what exactly is wrong: the event,
// the field and the fault, e.g. `response/committed: at attempt: expected an integer, got the
// string "1"` or `assistant/chunk: missing required field "commitment"`.
struct LineError {
  std::string kind;
  std::string message;
};

// How deep arrays and objects may nest in one line: the bound every JSON document from outside
// has (scenario::ParseLimits). Checked on the raw bytes before the line is parsed, so a hostile
// line costs one scan, never a deep tree (nlohmann's dump and destructor recurse).
inline constexpr int kMaxLineDepth = scenario::kMaxJsonDepth;

// The adapter protocol's JSON Schema (harness/schema/adapter-protocol.schema.json), compiled; an
// event's or line's definition is JsonSchema::DefinitionPointer("response/committed").
const JsonSchema& Schema();

// Parses one stdout line into its event: at most kMaxLineDepth deep, JSON, an object whose
// `type` is an event, valid against that event's definition in Schema().
std::expected<ClientEvent, LineError> ParseLine(std::string_view line);

// One route of the logical model, as the call line carries it (docs/adapter-protocol.md; read
// by the reference client with ref::RoutesFromJson).
struct RouteLine {
  std::string id;
  std::string base_url;
  std::string dialect;
  std::string model;            // the wire model
  nlohmann::json request;       // the body in the route's dialect, with its wire model
  nlohmann::json capabilities;  // {tools, reasoning, images, strict_tools, stop_sequences,
                                //  prefill, context_window}
  int priority = 0;
  int weight = 1;
  std::string group;
};
nlohmann::json ToJson(const RouteLine& route);

// The call line the runner writes on the adapter's stdin. With routes, `base_url`, `dialect`
// and `request` are the primary route's (a subject without failover calls that one).
struct CallLine {
  // Which call of the scenario run, for a session-mode adapter that serves them all (absent: a
  // process of its own, or call 0).
  std::optional<int> call;
  std::string base_url;
  std::string api_key;
  std::string dialect;
  nlohmann::json request;
  std::string scenario;
  // A seed for the adapter's own randomness (retry jitter), so that a run can be reproduced;
  // adapters that cannot seed their client ignore it.
  std::optional<std::uint64_t> seed;
  // The scenario's `policy:` (docs/policy.md), for adapters that can configure their client; an
  // adapter still declares, and is judged by, what it really runs.
  std::optional<nlohmann::json> policy;
  // The part of it most clients can be told (CallLimits): their attempts and their deadlines.
  std::optional<nlohmann::json> limits;
  std::vector<RouteLine> routes;  // empty: the scenario has no routes
};
nlohmann::json ToJson(const CallLine& call);

// The limits of a scenario's `policy:` block that a client can usually be told: `max_attempts`
// and the `timeouts` it sets (connect_ms, response_headers_ms, idle_ms, total_ms), in the policy
// format, e.g. {"max_attempts": 3, "timeouts": {"total_ms": 4500}}; nullopt when it sets none.
// A scenario that sets a total deadline is written for a client that applies it: a subject that
// declares another one is not judged on the scenario's expectations (judge/expect.cc).
std::optional<nlohmann::json> CallLimits(const scenario::Scenario& scenario);

// `text` with every invalid UTF-8 sequence replaced by U+FFFD, so that it can be stored in JSON.
std::string ValidUtf8(std::string_view text);

}  // namespace faultline::harness::protocol
