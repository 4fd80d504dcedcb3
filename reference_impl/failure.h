// The failure taxonomy (docs/failure-taxonomy.md): every way a call can fail, as one value.
//
// The reference client classifies each failed attempt into a Failure; the retry policy decides on
// it; the lifecycle events carry it (`response/interrupted`, `response/failed`); the runner
// compares it with the injected fault. Codes are stable leaf labels, classes group them.
//
// Values only; no I/O.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::ref {

enum class FailureClass {
  kAuth,
  kRateLimit,
  kQuota,
  kInvalidRequest,
  kContextOverflow,
  kTimeout,
  kTransport,
  kProviderOverloaded,
  kProviderUnavailable,
  kProtocol,
  kTruncated,
  kEmpty,
  kSafety,
  kAborted,
  kUnknown,
};
std::string_view ToString(FailureClass value);  // "rate-limit", "provider-overloaded", ...
std::optional<FailureClass> ParseFailureClass(std::string_view text);

enum class FailureCode {
  kRateLimit,              // RATE_LIMIT
  kQuota,                  // QUOTA
  kServer,                 // SERVER (500, 502, 504, unknown 5xx)
  kOverloaded,             // OVERLOADED (529, 503 overloaded, in-stream overloaded_error)
  kUnavailable,            // UNAVAILABLE (503)
  kTimeout,                // TIMEOUT (connect, headers, idle, total deadline; 408)
  kTransport,              // TRANSPORT (refused, reset, closed mid-body)
  kStreamTruncated,        // STREAM_TRUNCATED (clean end without terminator)
  kEmptyResponse,          // EMPTY_RESPONSE
  kMalformedResponse,      // MALFORMED_RESPONSE (bad JSON, wrong shape, wrong content type)
  kContextWindowExceeded,  // CONTEXT_WINDOW_EXCEEDED
  kInvalidRequest,         // INVALID_REQUEST (400, 404, 409, 413, 422)
  kAuth,                   // AUTH (401, 403)
  kContentFilter,          // CONTENT_FILTER (safety refusal / content_filter finish)
  kAborted,                // ABORTED (cancelled by the caller)
  kUnknown,                // UNKNOWN
};
std::string_view ToString(FailureCode value);  // "RATE_LIMIT", ...
std::optional<FailureCode> ParseFailureCode(std::string_view text);
// The class a code belongs to (each code is a leaf of one class): RATE_LIMIT -> rate-limit,
// SERVER and UNAVAILABLE -> provider-unavailable, MALFORMED_RESPONSE -> protocol, ...
FailureClass ClassOf(FailureCode code);

// Where in the attempt the failure happened.
enum class Phase { kConnect, kResponseHeaders, kStream, kFinish };
std::string_view ToString(Phase value);  // "connect", "response-headers", "stream", "finish"

// How much output the caller had seen when the attempt failed.
enum class PartialOutput { kNone, kUncommitted, kCommitted };
std::string_view ToString(PartialOutput value);  // "none", "uncommitted", "committed"

struct Failure {
  FailureCode code = FailureCode::kUnknown;
  FailureClass failure_class = FailureClass::kUnknown;
  Phase phase = Phase::kConnect;
  bool retryable = false;
  PartialOutput partial_output = PartialOutput::kNone;
  // The attempt failed after the headers of a streamed (SSE) response: RetryPolicy's
  // stream_retries and stream_retry_on apply to it.
  bool streamed = false;
  // Of a streamed failure: the provider's own error event in the stream failed it (an in-stream
  // error frame), not a broken stream (a reset, a cut, a stall, bytes that do not read); and how
  // many meaningful events the stream had delivered before the failure (heartbeats not counted).
  bool error_event = false;
  int stream_events = 0;
  std::optional<int> status;                             // HTTP status when there was one
  std::optional<std::chrono::milliseconds> retry_after;  // the server's hint, already parsed
  // The server's `x-should-retry: true|false`, when it sent one (already folded into
  // `retryable` when the policy honours it; the policy's status rules come after it).
  std::optional<bool> should_retry;
  std::optional<std::string> request_id;
  std::string message;
  std::string route_id;  // the route the failed attempt went to; "" without routes
  friend bool operator==(const Failure&, const Failure&) = default;
};

}  // namespace faultline::ref
