// A response plan: the exact bytes the fake provider sends for one request, and when.
//
// Plans are produced by the sans-I/O core (provider_core.h) and executed by a driver: the real
// server (server.h) with steady timers on a socket, or the virtual driver (virtual_driver.h) into
// an in-memory pipe under a virtual clock. Both must produce the same bytes at the same offsets.
// The plan already contains the HTTP status line, headers and chunked framing: the driver adds
// nothing, so a plan can end a body without its final chunk, or in the middle of a chunk.
//
// Values only; safe to copy and share read-only.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace faultline::provider {

using Duration = std::chrono::microseconds;

struct PlanStep {
  enum class Kind {
    kSend,       // write `bytes` at `at`
    kHeartbeat,  // write `bytes` every `every`, starting at `at` + `every`, for `length`
                 // (nullopt: until the client closes)
    kStall,      // write nothing for `length` (nullopt: until the client closes)
    kClose,      // close the connection (FIN) at `at`
    kReset,      // abort the connection with a TCP RST (SO_LINGER 0) at `at`
  };
  Kind kind = Kind::kSend;
  Duration at{0};  // offset from the request's arrival at which the step begins
  std::string bytes;
  Duration every{0};
  std::optional<Duration> length;

  // What the step writes in total is known for kSend only.
  friend bool operator==(const PlanStep&, const PlanStep&) = default;
};

// A stretch of the response during which no content reaches the client: a delay before the
// headers, a stall, a heartbeat-only window, or a long gap between events.
struct Silence {
  Duration from{0};             // offset from the request's arrival
  std::optional<Duration> to;   // nullopt: until the client gives up
  bool before_headers = false;  // no response byte was sent yet (a headers timeout applies)
  bool heartbeat = false;       // keep-alive comments or pings keep flowing meanwhile
  friend bool operator==(const Silence&, const Silence&) = default;
};

// A response field a client may read a retry hint from, exactly as it went on the wire: a header
// (`retry-after`, `retry-after-ms`, `x-ratelimit-*`, `anthropic-ratelimit-*`, and `date`, which
// an HTTP-date is measured from), or `body`: the body of an error status, up to kHintBodyBytes.
// The provider records these and values none of them: the runner reads them with the reference
// client's own parsers (reference_impl/retry_after.h), the one home of those rules, and each
// hint it finds there carries its source.
struct HintField {
  std::string name;  // lowercase header name, or "body"
  std::string value;
  friend bool operator==(const HintField&, const HintField&) = default;
};

// The error body's bytes a hint field keeps: a provider's error body is far shorter.
inline constexpr std::size_t kHintBodyBytes = 16 * 1024;

// The ground truth of one response, for the runner's judges: what a correct client must conclude
// from it if it waits it out. Derived from the scenario entry when the plan is compiled (never
// from the client), so judging never trusts the subject's own classification.
struct PlanTruth {
  // The text (and tool-call arguments) a correct client commits when this response arrives;
  // nullopt when it is not a committable answer (error status, connection fault, truncated,
  // malformed, empty, or a stream that never ends).
  std::optional<std::string> answer;
  std::string tool_arguments;
  // The docs/failure-taxonomy.md class a correct client reports for it; "" for an answer, or when
  // the scenario overrides the body so that no class can be promised.
  std::string failure_class;
  bool retryable = false;
  // The failure shows in the response's head although its status is 2xx (the wrong content type
  // for what was asked): a client reports it in the response-headers phase.
  bool failure_in_head = false;
  // The same verdict for a client that ignores `x-should-retry` (a policy may say so), and the
  // header itself when the response sends one.
  bool retryable_ignoring_header = false;
  std::optional<bool> should_retry;
  // Every field an error response carries a retry hint in, in wire order, duplicates kept.
  std::vector<HintField> hint_fields;
  std::vector<Silence> silences;  // longer than kSilenceThreshold
  // A 2xx event stream: its failures after the headers are stream failures, which a policy may
  // retry only before any output (`stream_retries`). Output is a text delta or the start of a
  // tool call; `output_before_failure`: some had gone out before the failure this truth names
  // (its class); `output_from`: when the first of it was due, to place a silence against it.
  bool streamed = false;
  bool output_before_failure = false;
  std::optional<Duration> output_from;
  // Of a stream, for `stream_retry_on` and `stream_retries: first-event`: the failure this truth
  // names is the provider's own error event (an error envelope, `event: error`,
  // `response.failed`), not a broken stream; some event went out before it; and when the first
  // event was due, to place a silence against it.
  bool error_event = false;
  bool events_before_failure = false;
  std::optional<Duration> events_from;
  friend bool operator==(const PlanTruth&, const PlanTruth&) = default;
};

// Gaps shorter than this are pacing, not silences.
inline constexpr Duration kSilenceThreshold{std::chrono::milliseconds(50)};

struct ResponsePlan {
  int attempt = 0;              // 1-based attempt index within the session
  int status = 0;               // 0 when no status line is sent (connection faults)
  std::vector<PlanStep> steps;  // ordered by `at`; kSend steps at the same instant are coalesced
  // After the last step, the connection may serve the next request (a complete, well-framed
  // response). False: the driver closes it (FIN) after the last step unless a step already did.
  bool keep_alive = true;
  std::string summary;  // one line for logs and the journal: "429 rate_limit retry-after=imf(+2s)"
  PlanTruth truth;
  friend bool operator==(const ResponsePlan&, const ResponsePlan&) = default;
};

// The time at which the plan's last step begins (for stalls "until the client closes" this is
// the start of the stall).
Duration PlanEnd(const ResponsePlan& plan);

}  // namespace faultline::provider
