// The scenario model: what one scenario file says, as plain values.
//
// A scenario scripts how a fake LLM provider answers each attempt of one logical call (or of a few
// concurrent calls), which faults it injects, and what a correct client must end up with. The
// loader (loader.h) builds these values from YAML or JSON and rejects anything invalid; after
// that, every field here is valid and code that consumes a Scenario never re-validates it.
//
// Values only: no I/O, no clocks. Safe to copy and to share read-only across threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/cassette/cassette.h"
#include "scenarios/duration.h"
#include "scenarios/fleet_spec.h"
#include "scenarios/load_error.h"
#include "scenarios/threshold.h"

namespace faultline::scenario {

// The schema version this build reads (`faultline: 1`).
inline constexpr int kSchemaVersion = 1;

enum class Dialect {
  kOpenAiChat,
  kAnthropicMessages,
  kOpenAiResponses,
  kGemini,
  kOllama,
  kBedrockConverse,
};
// "openai-chat", "anthropic-messages", ..., "ollama", "bedrock-converse"
std::string_view ToString(Dialect dialect);
std::optional<Dialect> ParseDialect(std::string_view text);
// Every dialect, in the order of the enum.
std::span<const Dialect> AllDialects();
// The names of every dialect, joined with ", " (for help texts and errors).
std::string DialectNames();

// How a dialect frames its stream: Server-Sent Events, Ollama's newline-delimited JSON, or
// Bedrock's binary event stream (application/vnd.amazon.eventstream). The SSE-only scenario keys
// (line endings, BOM, comments, multi-line data, heartbeats) exist only for kSse.
enum class StreamFraming { kSse, kNdjson, kEventStream };
StreamFraming StreamFramingOf(Dialect dialect);

// A raw header line, kept in order; duplicates are allowed on purpose.
struct Header {
  std::string name;
  std::string value;
  friend bool operator==(const Header&, const Header&) = default;
};

// A time that may also be "forever" (until the client gives up and closes).
struct Wait {
  Duration duration{0};
  bool forever = false;
  friend bool operator==(const Wait&, const Wait&) = default;
};

// The provider error that a status or an in-stream error event carries. The dialect writer turns
// it into that provider's own JSON shape and wording.
enum class ErrorKind {
  kInvalidRequest,  // 400
  kContextWindow,   // 400, "maximum context length" in the dialect's (or `wording`'s) words
  kAuth,            // 401
  kPermission,      // 403
  kNotFound,        // 404
  kRequestTimeout,  // 408
  kConflict,        // 409
  kTooLarge,        // 413
  kUnprocessable,   // 422
  kRateLimit,       // 429, retryable
  kQuota,           // 429 insufficient_quota / credit exhausted: never succeeds on retry
  kServer,          // 500
  kBadGateway,      // 502, text/plain body as a proxy would send it
  kUnavailable,     // 503
  kGatewayTimeout,  // 504
  kOverloaded,      // 529 (Anthropic's overloaded_error); also valid in-stream
};
std::string_view ToString(ErrorKind kind);  // "invalid_request", "context_window", ...
std::optional<ErrorKind> ParseErrorKind(std::string_view text);
// The status a kind is sent with when the scenario gives no `status`, and the kind a bare status
// implies (500 for unknown 5xx, invalid_request for unknown 4xx).
int DefaultStatus(ErrorKind kind);
ErrorKind DefaultErrorKind(int status);

// Which provider's words a context-window error uses. kDialect = the scenario dialect's own.
enum class ContextWording {
  kDialect,
  kOpenAi,                       // "This model's maximum context length is ..."
  kDeepSeek,                     // DeepSeek's variant of the OpenAI wording
  kAnthropicPromptTooLong,       // "prompt is too long: N tokens > M maximum"
  kAnthropicExceedContextLimit,  // "input length and `max_tokens` exceed context limit: ..."
};

struct ErrorSpec {
  ErrorKind kind = ErrorKind::kServer;
  ContextWording wording = ContextWording::kDialect;
  std::optional<std::string> message;  // overrides the provider's default message
  // Gemini only: the `google.rpc.RetryInfo` detail's `retryDelay`, verbatim ("37s", "1.5s", or
  // garbage on purpose); nullopt sends no RetryInfo.
  std::optional<std::string> retry_delay;
  friend bool operator==(const ErrorSpec&, const ErrorSpec&) = default;
};

// The Retry-After header of one response.
struct RetryAfter {
  enum class Form {
    kSeconds,     // delay-seconds, written exactly as `text` ("2", "0", "-5", "1.5", "9e99")
    kImfFixdate,  // "Sun, 06 Nov 1994 08:49:37 GMT"
    kRfc850,      // "Sunday, 06-Nov-94 08:49:37 GMT"
    kAsctime,     // "Sun Nov  6 08:49:37 1994"
    kRaw,         // `text` verbatim (garbage on purpose)
  };
  Form form = Form::kSeconds;
  std::string text;         // kSeconds and kRaw
  Duration date_offset{0};  // HTTP-date forms: the response's Date header + this (may be < 0)
  friend bool operator==(const RetryAfter&, const RetryAfter&) = default;
};

// Rate-limit headers in the dialect's style: OpenAI `x-ratelimit-*` with Go-style reset durations
// ("6m0s"), Anthropic `anthropic-ratelimit-*` with RFC 3339 reset instants.
struct RateLimitHeaders {
  int requests_limit = 60;
  int requests_remaining = 0;
  Duration requests_reset{std::chrono::seconds(1)};
  int tokens_limit = 100000;
  int tokens_remaining = 0;
  Duration tokens_reset{std::chrono::seconds(6)};
  friend bool operator==(const RateLimitHeaders&, const RateLimitHeaders&) = default;
};

// How SSE bytes are framed on the wire. Defaults are what the providers send.
struct Framing {
  enum class LineEnding { kLf, kCrlf, kCr, kMixed };
  LineEnding line_ending = LineEnding::kLf;
  bool bom = false;             // a UTF-8 BOM before the first event
  bool comments = false;        // a ": comment" line before every event
  bool multiline_data = false;  // each JSON payload spread over several `data:` lines
  // Each event goes out in two writes `split_delay` apart, cut in the middle of a line; with
  // split_utf8 the cut falls inside a multi-byte UTF-8 character when the event has one.
  bool split_writes = false;
  bool split_utf8 = false;
  Duration split_delay{std::chrono::milliseconds(2)};
  friend bool operator==(const Framing&, const Framing&) = default;
};

// Keep-alive traffic that flows while content does not: SSE comments, or Anthropic `ping` events.
struct Heartbeat {
  Duration every{0};  // 0 = no heartbeat
  enum class Style { kComment, kPing };
  Style style = Style::kComment;
  friend bool operator==(const Heartbeat&, const Heartbeat&) = default;
};

// Something injected into, or done to, a stream right after `after_event` events were sent
// (0 = right after the response headers). Events are counted as they appear on the wire,
// including role/preamble events such as `message_start`.
struct EventFault {
  enum class Kind {
    kDelay,          // extra `wait` before the next event
    kStall,          // no bytes for `wait` (or forever), heartbeats if `heartbeat` is set
    kInvalidJson,    // a `data:` line that is not JSON
    kWrongShape,     // valid JSON that is not the dialect's event shape
    kTwoObjects,     // two JSON objects on one `data:` line
    kErrorEnvelope,  // OpenAI-style {"error": {...}} inside the 200 stream
    kProviderError,  // the dialect's own in-stream error event (Anthropic `event: error`,
                     // Responses `response.failed` or `error`), carrying `error`
    kSequenceGap,    // Responses: the next event's sequence_number skips one
    kRaw,            // `raw` bytes verbatim
  };
  Kind kind = Kind::kStall;
  int after_event = 0;
  Wait wait;
  Heartbeat heartbeat;
  ErrorSpec error;
  // Responses API error shape for kProviderError: `response.failed`, flat `error`, nested `error`.
  enum class Shape { kDefault, kResponseFailed, kFlat, kNested };
  Shape shape = Shape::kDefault;
  std::string raw;
  friend bool operator==(const EventFault&, const EventFault&) = default;
};

// "delay", "stall", "invalid_json", ..., "sequence_gap", "raw": the words of the scenario format.
std::string_view ToString(EventFault::Kind kind);

// Whether a fault, once sent, leaves the response unusable: everything but a delay and a stall
// that ends. A client that reads past such a fault and commits the answer is wrong.
bool SpoilsStream(const EventFault& fault);

// How the response ends.
struct Termination {
  enum class Kind {
    kDone,          // clean end: terminator event ([DONE], message_stop, response.completed),
                    // final zero-length chunk, connection kept alive
    kNoTerminator,  // clean chunked end, but the terminator event never comes
    kNoFinalChunk,  // body bytes end without the final zero-length chunk; connection closed
    kClose,         // connection closed (FIN) at the cut point, mid-line when at_byte is set
    kReset,         // TCP RST (SO_LINGER 0) at the cut point
    kStall,         // stop sending at the cut point and hold the connection `wait` (or forever),
                    // then close
  };
  Kind kind = Kind::kDone;
  // The cut point: after this many events (nullopt = after all content events), plus `at_byte`
  // bytes of the next event when set. For kDone, the events from the cut point up to the
  // terminator are skipped and the terminator follows: "an in-stream error, then [DONE]". The
  // loader takes that only with a spoiling fault at or before the cut (SpoilsStream), because a
  // clean stream with its middle left out would only be a shorter answer, which `text` says.
  std::optional<int> after_event;
  std::optional<int> at_byte;
  Wait wait{Duration{0}, true};  // kStall only
  Heartbeat heartbeat;           // kStall only
  friend bool operator==(const Termination&, const Termination&) = default;
};

// "done", "no_terminator", "no_final_chunk", "close", "reset", "stall" (the `end.kind` names).
std::string_view ToString(Termination::Kind kind);

struct ToolCallSpec {
  std::string name = "get_weather";
  std::string arguments = R"({"city":"Paris"})";
  int chunk_size = 8;  // argument bytes per fragment
  friend bool operator==(const ToolCallSpec&, const ToolCallSpec&) = default;
};

// The content of a successful response, streamed or as one JSON body.
struct Content {
  std::string text = "Hello, world";
  int chunk_size = 4;       // UTF-8 code points per content event (>= 1)
  Duration chunk_delay{0};  // between content events
  std::string reasoning;    // reasoning/thinking deltas before the text, when set
  std::optional<ToolCallSpec> tool_call;
  std::optional<std::string> finish_reason;  // default: the dialect's stop/tool reason
  std::optional<int> input_tokens;           // usage; default derived from the request size
  std::optional<int> output_tokens;          // usage; default derived from the text
  // Slow drip: instead of whole events, `bytes` bytes every `every` (0 = off).
  int drip_bytes = 0;
  Duration drip_every{0};
  Framing framing;
  std::vector<EventFault> faults;
  Termination end;
  friend bool operator==(const Content&, const Content&) = default;
};

// How the server treats the connection before any response byte.
enum class ConnectionFault {
  kNone,
  kResetBeforeHeaders,  // read the request, then RST
  kCloseBeforeHeaders,  // read the request, then close (FIN) without a byte
};

// A recorded exchange played back in place of an entry's own answer (docs/cassettes.md): its
// head and body writes at their recorded times, scaled; the entry's `content.faults` and
// `content.end` overlay the catalogue's faults on it at event N.
struct CassetteReplay {
  std::string file;  // as the scenario names it (relative to the scenario file)
  Cassette cassette;
  double time_scale = 1.0;  // recorded offsets are multiplied by this
  friend bool operator==(const CassetteReplay&, const CassetteReplay&) = default;
};

// The response to one attempt (or to `repeat` consecutive attempts).
struct ResponseSpec {
  int repeat = 1;  // how many consecutive attempts this entry answers; 0 = all the rest
  ConnectionFault connection = ConnectionFault::kNone;
  Duration headers_delay{0};          // wait before the status line
  std::optional<Wait> headers_stall;  // stall before the status line (then answer, or forever)
  int status = 200;
  std::optional<ErrorSpec> error;  // set for non-2xx (defaulted from status by the loader)
  std::optional<RetryAfter> retry_after;
  std::optional<std::string> retry_after_ms;  // the `retry-after-ms` header, verbatim
  std::optional<bool> should_retry;           // the `x-should-retry` header
  std::optional<RateLimitHeaders> rate_limit_headers;
  Duration date_skew{0};                    // the Date header is off by this much
  std::optional<std::string> content_type;  // overrides the dialect's content type
  std::optional<std::string> body;          // overrides the whole body, verbatim
  std::vector<Header> headers;              // extra headers, in order, duplicates allowed
  Content content;                          // for 2xx answers
  std::optional<CassetteReplay> cassette;   // a recorded answer instead of the above
  friend bool operator==(const ResponseSpec&, const ResponseSpec&) = default;
};

// Seeded chaos: each attempt draws one entry by probability (same seed, same draws).
struct Chaos {
  std::uint64_t seed = 0;
  struct Choice {
    double probability = 0;
    ResponseSpec response;
    friend bool operator==(const Choice&, const Choice&) = default;
  };
  std::vector<Choice> faults;  // probabilities sum to <= 1
  ResponseSpec otherwise;      // the remaining probability
  friend bool operator==(const Chaos&, const Chaos&) = default;
};

// A stateful limit shared by every attempt of the session: over budget, the provider answers 429
// with an honest Retry-After (the time until the window frees enough budget).
struct RateLimit {
  int requests = 0;  // per window, 0 = unlimited
  int tokens = 0;    // per window, 0 = unlimited; a request costs its estimated input + output
  Duration window{std::chrono::seconds(60)};
  friend bool operator==(const RateLimit&, const RateLimit&) = default;
};

// A window during which nothing listens on the session's port (connection refused). Times are
// offsets from the session's start.
struct ListenerOutage {
  Duration from{0};
  Duration length{0};
  friend bool operator==(const ListenerOutage&, const ListenerOutage&) = default;
};

// ---- Routes: one logical model served by several concrete endpoints ----

// What a route can serve. A request that needs a capability (tools, say) must only go to a route
// that declares it; `context_window` bounds the request's estimated size in tokens.
struct Capabilities {
  bool tools = true;
  bool reasoning = false;
  bool images = false;
  bool strict_tools = false;
  bool stop_sequences = true;
  bool prefill = false;
  int context_window = 128'000;
  friend bool operator==(const Capabilities&, const Capabilities&) = default;
};

// A stretch of scenario time; without a length it lasts from `from` on, for good.
struct TimeWindow {
  Duration from{0};
  std::optional<Duration> length;
  bool Contains(Duration at) const { return at >= from && (!length || at < from + *length); }
  friend bool operator==(const TimeWindow&, const TimeWindow&) = default;
};

// How a route's health evolves with time. While the route is down, every request gets
// `failure`; while it is up, the route answers from its `responses`, except that a brownout
// fails `error_probability` of the attempts as `failure` says and stretches every delay of the
// answer by `latency_multiplier`.
struct Health {
  // kRefused: nothing listens (the route has a port of its own); kResponse: `failure_response`
  // (a 503 by default; a 429 with its Retry-After for a rate limit, `error: quota` for an
  // exhausted quota, `headers_delay` for a slow failure, `connection: reset_before_headers`).
  enum class Failure { kResponse, kRefused };
  Failure failure = Failure::kResponse;
  ResponseSpec failure_response;
  std::vector<TimeWindow> down;  // hard down; a route recovering at T is down until T
  // Flapping: up for `flap_up`, then down for `flap_down`, over and over from t = 0.
  std::optional<Duration> flap_up;
  std::optional<Duration> flap_down;
  double error_probability = 0;
  double latency_multiplier = 1;
  std::uint64_t seed = 0;  // the brownout's draws
  friend bool operator==(const Health&, const Health&) = default;
};

// One concrete endpoint of the logical model: direct, another region, another provider, a gateway.
struct Route {
  std::string id;  // [a-z0-9][a-z0-9._-]*, unique in the scenario
  Dialect dialect = Dialect::kOpenAiChat;
  std::string model;  // the wire model name requests to this route carry
  Capabilities capabilities;
  int priority = 0;   // lower is tried first
  int weight = 1;     // shares among routes of the same priority
  std::string group;  // shared-fate group (provider, account, region); "" = none
  // One entry per attempt on this route, in arrival order (as the scenario's `responses`).
  std::vector<ResponseSpec> responses;
  std::optional<Health> health;
  friend bool operator==(const Route&, const Route&) = default;
};

// A trigger that takes every route of a shared-fate group down for a window; each member then
// fails as its health says (a 503 when it declares none).
struct GroupOutage {
  std::string group;
  TimeWindow window;
  friend bool operator==(const GroupOutage&, const GroupOutage&) = default;
};

// What the subject is asked to send.
// Anthropic's extended thinking spends at least this many tokens (`budget_tokens`), which must
// stay below the request's `max_tokens`.
inline constexpr int kAnthropicMinThinkingBudget = 1024;
// How many stop sequences a request may carry (OpenAI Chat's limit).
inline constexpr std::size_t kMaxStopSequences = 4;

struct RequestSpec {
  bool stream = true;
  std::string model;  // default: a plausible model name for the dialect
  std::string message = "Say hello.";
  int max_tokens = 256;
  bool tools = false;  // offer one tool (get_weather)
  int calls = 1;       // calls of the same request by one client (stateful rate limits, breakers)
  // Call i starts i x call_interval after the first (0: all at once). Staggered calls show what
  // a client carries from one call to the next (its circuit breakers, its retry budget).
  Duration call_interval{0};
  // What else the request needs of the route that serves it (docs/routes.md, capabilities); each
  // takes the dialect's own wire shape (harness/worlds/request_body.h). The context window is
  // needed through `max_tokens` and the body's size.
  bool reasoning = false;         // ask the model to reason first
  bool image = false;             // one small inline image beside the user message
  bool strict_tools = false;      // the offered tool is strict (the loader sets `tools` too)
  std::vector<std::string> stop;  // stop sequences, each non-empty
  std::string prefill;            // "" or the assistant's own first words, ending the conversation
  friend bool operator==(const RequestSpec&, const RequestSpec&) = default;
};

// Facts of the call's final failure (`expect.failure`).
struct ExpectFailure {
  std::optional<int> status;            // the HTTP status it carried
  std::optional<Duration> retry_after;  // the server's hint it carried (whole milliseconds)
  bool no_retry_after = false;          // `retry_after: none`: it carried no hint
  std::optional<bool> request_id;       // whether it carried the provider's request id
  friend bool operator==(const ExpectFailure&, const ExpectFailure&) = default;
};

// The class and code of one failed attempt (`expect.attempt_failures[i]`); unset = any.
struct ExpectAttemptFailure {
  std::optional<std::string> failure_class;
  std::optional<std::string> failure_code;
  friend bool operator==(const ExpectAttemptFailure&, const ExpectAttemptFailure&) = default;
};

// A bound on one retry delay: from the end of failed attempt i to the arrival of attempt i + 1.
struct DelayRange {
  Duration min{0};
  Duration max{0};
  friend bool operator==(const DelayRange&, const DelayRange&) = default;
};

// Scenario-specific checks the runner adds to the universal invariants.
struct Expect {
  std::optional<std::string> outcome;  // "committed" | "failed"
  std::optional<int> attempts;
  std::optional<std::string> text;
  std::optional<std::string> failure_class;  // docs/failure-taxonomy.md class
  std::optional<std::string> failure_code;   // docs/failure-taxonomy.md code
  std::optional<ExpectFailure> failure;
  std::vector<ExpectAttemptFailure> attempt_failures;  // the failed attempts', in order
  std::vector<DelayRange> retry_delays;                // the retries', in order
  std::optional<int> chunks;    // assistant/chunk events the subject emitted, over all attempts
  std::optional<int> requests;  // requests that reached the provider
  std::vector<std::string> headers_present;  // request headers every attempt carries
  std::vector<std::string> headers_same;     // request headers equal on every attempt
  // Bounds on aggregates over every run of the scenario in one world (threshold.h).
  std::vector<Threshold> thresholds;
  friend bool operator==(const Expect&, const Expect&) = default;
};

// The retry policy the reference client runs the scenario with, in docs/policy.md's format, as
// JSON text: the harness parses and validates it (this library knows nothing of retry policies).
// `positions` maps each value's JSON path inside the policy ("backoff.cap_ms"; "" for the policy
// itself) to its place in the file, so that a bad value is reported at its line and column.
struct PolicySpec {
  std::string json;
  struct Position {
    std::string path;
    int line = 0;
    int column = 0;
    friend bool operator==(const Position&, const Position&) = default;
  };
  std::vector<Position> positions;
  // An error about the value at `path` inside the policy, placed at that value's position, or at
  // its nearest recorded parent's (a missing key is reported at the object that lacks it). The
  // error's path is `path` below `root`, the policy's own path ("policy" in a scenario, "" in a
  // policy file).
  LoadError ErrorAt(std::string_view file, std::string_view root, std::string_view path,
                    std::string message) const;
  friend bool operator==(const PolicySpec&, const PolicySpec&) = default;
};

struct Scenario {
  int version = kSchemaVersion;
  std::string name;  // "category/short-name", unique in a catalogue
  std::string description;
  Dialect dialect = Dialect::kOpenAiChat;
  std::vector<std::string> tags;
  RequestSpec request;
  // One entry per attempt in arrival order; attempts past the end get the last entry again.
  std::vector<ResponseSpec> responses;
  std::optional<Chaos> chaos;           // when set, replaces `responses`
  std::optional<RateLimit> rate_limit;  // checked before `responses`/`chaos`
  std::vector<ListenerOutage> listener_outages;
  // Several routes for the one logical model (the request's): when set, they replace
  // `responses`, `chaos`, `rate_limit` and `listener_outages`, which each route scripts itself.
  std::vector<Route> routes;
  std::vector<GroupOutage> group_outages;
  // Every route on its own port, answering at that port's root as well as under its base URL:
  // what a gateway in front of faultline needs, whose upstreams are host:port pairs sharing one
  // path (harness/gateways). Set by the runner, not by scenario files.
  bool route_ports = false;
  // Set only in the scenario of one route (route_scenario.h): its id, and its health process.
  std::string route_id;
  std::optional<Health> health;
  // The runner cancels the call this long after its first request reached the provider (t = 0 in
  // the virtual world; over sockets this keeps an adapter's start-up out of the timing).
  std::optional<Duration> cancel_at;
  std::optional<PolicySpec> policy;  // the reference client's policy for this scenario
  Expect expect;
  std::optional<FleetSpec> fleet;  // a fleet experiment (faultline simulate); replaces responses
  std::string source;   // the file it was loaded from ("<builtin>/..." for the embedded catalogue)
  int source_line = 0;  // the line of its `name:` there (1-based; 0 when unknown)
  friend bool operator==(const Scenario&, const Scenario&) = default;
};

// The response entry that answers attempt `attempt` (1-based) when no chaos is set.
const ResponseSpec& ResponseForAttempt(const Scenario& scenario, int attempt);

}  // namespace faultline::scenario
