// The adapter protocol (DESIGN §5, docs/adapter-protocol.md) from the runner's side: the event
// vocabulary, the call line, and the validation of every line a subject writes.
//
// One home for the protocol's names: the judge, the worlds, the metrics and the reports read
// events by these constants, never by string literals of their own. Each stdout line is parsed
// and validated once, at receipt; a line that is not JSON, or not a protocol event, is a subject
// error (its own verdict), never an invariant failure.
//
// Pure functions; thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/trace/event.h"
#include "nlohmann/json.hpp"
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

// Why a line was rejected: "not-json" or "not-protocol", and what exactly is wrong.
struct LineError {
  std::string kind;
  std::string message;
};

// Parses one stdout line into its event, checking the type and the fields each event must carry
// (with their JSON types).
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
