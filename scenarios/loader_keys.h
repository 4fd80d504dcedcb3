// The vocabulary of scenario files: the keys the loader accepts at each object level and the
// names of every enumerated value, each labelled with the JSON pointer of the place in
// scenarios/schema/scenario.schema.json that declares the same thing.
//
// The loader reads its keys and names from these tables, and catalog_test.cc checks them against
// the schema, so the loader and the schema cannot drift apart. Internal to scenarios/ and its
// tests; not part of the library's public interface.
#pragma once

#include <span>
#include <string_view>

namespace faultline::scenario::keys {

inline constexpr std::string_view kDocument[] = {
    "faultline",     "name",       "description",      "dialect",
    "dialects",      "tags",       "request",          "responses",
    "chaos",         "rate_limit", "listener_outages", "routes",
    "group_outages", "cancel_at",  "policy",           "expect",
    "fleet"};
inline constexpr std::string_view kRequest[] = {
    "stream",        "model",     "message", "max_tokens",   "tools", "calls",
    "call_interval", "reasoning", "image",   "strict_tools", "stop",  "prefill"};
// `stream` is an alias of `content` (same meaning; a response may use only one of them).
inline constexpr std::string_view kResponse[] = {
    "repeat",    "connection",   "headers_delay",  "headers_stall", "status",
    "error",     "retry_after",  "retry_after_ms", "should_retry",  "rate_limit_headers",
    "date_skew", "content_type", "body",           "headers",       "content",
    "stream",    "cassette",     "time_scale"};
inline constexpr std::string_view kError[] = {"kind", "wording", "message", "retry_delay"};
inline constexpr std::string_view kRetryAfter[] = {"seconds", "http_date", "form", "raw"};
inline constexpr std::string_view kRateLimitHeaders[] = {"requests_limit",   "requests_remaining",
                                                         "requests_reset",   "tokens_limit",
                                                         "tokens_remaining", "tokens_reset"};
inline constexpr std::string_view kHeader[] = {"name", "value"};
inline constexpr std::string_view kContent[] = {
    "text",         "chunk_size",    "chunk_delay", "reasoning", "tool_call", "finish_reason",
    "input_tokens", "output_tokens", "drip",        "framing",   "faults",    "end"};
inline constexpr std::string_view kToolCall[] = {"name", "arguments", "chunk_size"};
inline constexpr std::string_view kDrip[] = {"bytes", "every"};
inline constexpr std::string_view kFraming[] = {"line_ending",    "bom",          "comments",
                                                "multiline_data", "split_writes", "split_utf8",
                                                "split_delay"};
inline constexpr std::string_view kHeartbeat[] = {"every", "style"};
inline constexpr std::string_view kFault[] = {"after_event", "stall",     "delay", "inject",
                                              "raw",         "heartbeat", "error", "shape"};
inline constexpr std::string_view kEnd[] = {"kind", "after_event", "at_byte", "wait", "heartbeat"};
inline constexpr std::string_view kChaos[] = {"seed", "faults", "otherwise"};
inline constexpr std::string_view kChaosChoice[] = {"probability", "response"};
inline constexpr std::string_view kRateLimit[] = {"requests", "tokens", "window"};
inline constexpr std::string_view kListenerOutage[] = {"from", "for"};
inline constexpr std::string_view kExpect[] = {
    "outcome",          "attempts",     "text",   "failure_class", "failure_code",    "failure",
    "attempt_failures", "retry_delays", "chunks", "requests",      "request_headers", "thresholds"};
inline constexpr std::string_view kExpectFailure[] = {"status", "retry_after", "request_id"};
inline constexpr std::string_view kExpectAttemptFailure[] = {"failure_class", "failure_code"};
inline constexpr std::string_view kDelayRange[] = {"min", "max"};
inline constexpr std::string_view kRequestHeaders[] = {"present", "same"};
inline constexpr std::string_view kFleet[] = {
    "clients",  "horizon", "drain",           "seed",           "arrivals", "provider", "timeout",
    "policies", "bucket",  "tokens_per_call", "bytes_per_call", "gateway"};
inline constexpr std::string_view kFleetArrivals[] = {"process", "rate", "think"};
inline constexpr std::string_view kFleetStep[] = {"at", "rate"};
inline constexpr std::string_view kFleetProvider[] = {
    "concurrency", "rate",     "burst",     "queue",
    "service",     "overload", "brownouts", "tokens_per_minute"};
inline constexpr std::string_view kFleetService[] = {"distribution", "mean", "sigma"};
inline constexpr std::string_view kFleetOverload[] = {"status", "retry_after"};
inline constexpr std::string_view kFleetBrownout[] = {"from", "for", "capacity"};
inline constexpr std::string_view kFleetTokens[] = {"distribution", "mean", "sigma"};
inline constexpr std::string_view kFleetGateway[] = {"name", "retry"};
inline constexpr std::string_view kFleetGatewayRetry[] = {
    "max_attempts", "backoff", "honor_retry_after", "pass_retry_after", "per_try_timeout"};
inline constexpr std::string_view kFleetBackoff[] = {"base", "cap", "jitter"};
inline constexpr std::string_view kRoute[] = {
    "id", "dialect", "model", "capabilities", "priority", "weight", "group", "responses", "health"};
inline constexpr std::string_view kCapabilities[] = {
    "tools", "reasoning", "images", "strict_tools", "stop_sequences", "prefill", "context_window"};
inline constexpr std::string_view kHealth[] = {"down", "recover_at", "flapping", "brownout",
                                               "fail"};
// The fault rules of `faultline proxy` (proxy_rules.h); not part of the scenario schema.
inline constexpr std::string_view kProxyDocument[] = {"faultline", "description", "rules"};
inline constexpr std::string_view kProxyRule[] = {"name", "match", "probability", "response"};
inline constexpr std::string_view kProxyMatch[] = {"path", "dialect", "requests"};
inline constexpr std::string_view kTimeWindow[] = {"from", "for"};
inline constexpr std::string_view kFlapping[] = {"up", "down"};
inline constexpr std::string_view kBrownout[] = {"error_probability", "latency_multiplier", "seed"};
inline constexpr std::string_view kGroupOutage[] = {"group", "from", "for"};

// The dialect names, in the order of scenario::Dialect (checked against /$defs/dialect).
inline constexpr std::string_view kDialectNames[] = {"openai-chat",      "anthropic-messages",
                                                     "openai-responses", "gemini",
                                                     "ollama",           "bedrock-converse"};

// Enumerated values. Each list is in the order of the C++ enum it maps to, starting at the
// enumerator named in the comment (the loader converts a position into an enumerator).
inline constexpr std::string_view kConnectionNames[] = {  // ConnectionFault::kResetBeforeHeaders
    "reset_before_headers", "close_before_headers"};
inline constexpr std::string_view kWordingNames[] = {  // ContextWording::kOpenAi
    "openai", "deepseek", "anthropic_prompt_too_long", "anthropic_exceed_context_limit"};
inline constexpr std::string_view kDateFormNames[] = {  // RetryAfter::Form::kImfFixdate
    "imf", "rfc850", "asctime"};
inline constexpr std::string_view kLineEndingNames[] = {  // Framing::LineEnding::kLf
    "lf", "crlf", "cr", "mixed"};
inline constexpr std::string_view kHeartbeatStyleNames[] = {  // Heartbeat::Style::kComment
    "comment", "ping"};
inline constexpr std::string_view kInjectNames[] = {  // EventFault::Kind::kInvalidJson
    "invalid_json",   "wrong_shape",    "two_objects",
    "error_envelope", "provider_error", "sequence_gap"};
inline constexpr std::string_view kShapeNames[] = {  // EventFault::Shape::kResponseFailed
    "response_failed", "flat", "nested"};
inline constexpr std::string_view kEndKindNames[] = {  // Termination::Kind::kDone
    "done", "no_terminator", "no_final_chunk", "close", "reset", "stall"};
inline constexpr std::string_view kOutcomeNames[] = {"committed", "failed"};
inline constexpr std::string_view kArrivalProcessNames[] = {  // FleetWorkload::Kind::kPoisson
    "poisson", "uniform", "closed"};
inline constexpr std::string_view kServiceNames[] = {  // FleetProvider::Service::kConstant
    "constant", "exponential", "lognormal"};
inline constexpr std::string_view kJitterNames[] = {  // FleetJitter::kNone
    "none", "full", "equal", "decorrelated"};
inline constexpr std::string_view kFailureClassNames[] = {  // docs/failure-taxonomy.md
    "auth",
    "rate-limit",
    "quota",
    "invalid-request",
    "context-overflow",
    "timeout",
    "transport",
    "provider-overloaded",
    "provider-unavailable",
    "protocol",
    "truncated",
    "empty",
    "safety",
    "aborted",
    "unknown"};

struct KeySet {
  std::string_view schema_pointer;  // the schema object whose `properties` lists these keys
  std::span<const std::string_view> keys;
};

inline constexpr KeySet kObjectKeySets[] = {
    {"", kDocument},
    {"/$defs/request", kRequest},
    {"/$defs/response", kResponse},
    {"/$defs/errorObject", kError},
    {"/$defs/retryAfter", kRetryAfter},
    {"/$defs/rateLimitHeadersObject", kRateLimitHeaders},
    {"/$defs/header", kHeader},
    {"/$defs/content", kContent},
    {"/$defs/toolCallObject", kToolCall},
    {"/$defs/drip", kDrip},
    {"/$defs/framing", kFraming},
    {"/$defs/heartbeat", kHeartbeat},
    {"/$defs/fault", kFault},
    {"/$defs/endObject", kEnd},
    {"/$defs/chaos", kChaos},
    {"/$defs/chaosChoice", kChaosChoice},
    {"/$defs/rateLimit", kRateLimit},
    {"/$defs/listenerOutage", kListenerOutage},
    {"/$defs/route", kRoute},
    {"/$defs/capabilities", kCapabilities},
    {"/$defs/health", kHealth},
    {"/$defs/timeWindow", kTimeWindow},
    {"/$defs/flapping", kFlapping},
    {"/$defs/brownout", kBrownout},
    {"/$defs/groupOutage", kGroupOutage},
    {"/$defs/expect", kExpect},
    {"/$defs/expectFailure", kExpectFailure},
    {"/$defs/expectAttemptFailure", kExpectAttemptFailure},
    {"/$defs/delayRange", kDelayRange},
    {"/$defs/requestHeaders", kRequestHeaders},
    {"/$defs/fleet", kFleet},
    {"/$defs/fleetArrivals", kFleetArrivals},
    {"/$defs/fleetStep", kFleetStep},
    {"/$defs/fleetProvider", kFleetProvider},
    {"/$defs/fleetService", kFleetService},
    {"/$defs/fleetOverload", kFleetOverload},
    {"/$defs/fleetBrownout", kFleetBrownout},
    {"/$defs/fleetTokens", kFleetTokens},
    {"/$defs/fleetGateway", kFleetGateway},
    {"/$defs/fleetGatewayRetry", kFleetGatewayRetry},
    {"/$defs/fleetBackoff", kFleetBackoff},
};

struct NameSet {
  std::string_view schema_pointer;  // the schema node whose `enum` lists these names
  std::span<const std::string_view> names;
};

inline constexpr NameSet kEnumNameSets[] = {
    {"/$defs/connection", kConnectionNames},
    {"/$defs/errorObject/properties/wording", kWordingNames},
    {"/$defs/retryAfter/properties/form", kDateFormNames},
    {"/$defs/framing/properties/line_ending", kLineEndingNames},
    {"/$defs/heartbeat/properties/style", kHeartbeatStyleNames},
    {"/$defs/fault/properties/inject", kInjectNames},
    {"/$defs/fault/properties/shape", kShapeNames},
    {"/$defs/endKind", kEndKindNames},
    {"/$defs/expect/properties/outcome", kOutcomeNames},
    {"/$defs/expect/properties/failure_class", kFailureClassNames},
    {"/$defs/fleetArrivals/properties/process", kArrivalProcessNames},
    {"/$defs/fleetService/properties/distribution", kServiceNames},
    {"/$defs/fleetTokens/properties/distribution", kServiceNames},
    {"/$defs/fleetBackoff/properties/jitter", kJitterNames},
};

}  // namespace faultline::scenario::keys
