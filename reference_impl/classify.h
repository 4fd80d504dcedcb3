// Classification of a failed attempt into a Failure (docs/failure-taxonomy.md): HTTP error
// responses, transport failures and timeouts.
//
// HTTP error responses: the status decides first, then the provider's error body refines it.
//
//   status          code                     class                 retryable
//   400             INVALID_REQUEST          invalid-request       no
//   400/413/422 +   CONTEXT_WINDOW_EXCEEDED  context-overflow      no
//     context-window wording (below)
//   400/402/429 +   QUOTA                    quota                 no
//     quota or billing wording (below); 402 always
//   401, 403        AUTH                     auth                  no
//   404, 413, 422   INVALID_REQUEST          invalid-request       no
//   409             INVALID_REQUEST          invalid-request       YES (*)
//   408             TIMEOUT                  timeout               yes
//   429             RATE_LIMIT               rate-limit            yes
//   500, 502, 504   SERVER                   provider-unavailable  yes
//   503             UNAVAILABLE              provider-unavailable  yes
//   529, or a body of type `overloaded_error` at any status
//                   OVERLOADED               provider-overloaded   yes
//   other 5xx       SERVER                   provider-unavailable  yes
//   other 4xx       INVALID_REQUEST          invalid-request       no
//   1xx-3xx         MALFORMED_RESPONSE       protocol              no (not an error response)
//
// (*) 409 Conflict: the OpenAI and Anthropic SDKs retry it ("lock timeout"), and what providers
// mean by it — another request with the same idempotency key is still in progress — resolves by
// itself once that request ends, so it is retryable, with the taxonomy's INVALID_REQUEST code.
//
// Context-window wordings recognised (case-insensitive, in the error message, or the code):
//   code `context_length_exceeded` (OpenAI Chat and Responses);
//   "maximum context length is N tokens" (OpenAI; DeepSeek's variant "... However, you requested
//     N tokens (X in the messages, Y in the completion)", which carries code
//     `invalid_request_error` and so is only recognisable by its words);
//   "prompt is too long: N tokens > M maximum" and "input length and `max_tokens` exceed context
//     limit" (Anthropic); "exceeds the context window" (OpenAI Responses); "exceeds the maximum
//     number of tokens allowed" (Gemini).
// Quota wordings: code or type `insufficient_quota` / `billing_hard_limit_reached` /
//   `billing_error`, "exceeded your current quota" (OpenAI), "credit balance is too low"
//   (Anthropic, which sends it as a 400), "insufficient balance" (DeepSeek's 402). A quota
//   wording beside a google.rpc.RetryInfo detail is no quota: Gemini's free tier says "exceeded
//   your current quota" of a per-minute window and says when it reopens (a rate limit).
// Overload wordings: "That model is currently overloaded" (OpenAI), "The model is overloaded"
//   (Gemini's 503 UNAVAILABLE), on any 5xx.
// Google's errors (Gemini) are google.rpc.Status objects without a `type`: their `status` name
//   (RESOURCE_EXHAUSTED, UNAVAILABLE, INVALID_ARGUMENT, ...) stands for it in the table.
//
// `x-should-retry: true|false` (sent by OpenAI and Anthropic) overrides the retryable column.
// The request id comes from `x-request-id` (OpenAI) or `request-id` (Anthropic). The server's
// retry hint (retry_after.h) is parsed into Failure::retry_after.
//
// The body's error `type`/`code` is looked up in the table shared with in-stream errors
// (stream_error_class.h), so that an HTTP error and its mid-stream twin agree; the status still
// decides, and the table only refines it (overloaded anywhere; context window on 400/413/422;
// quota on 400/429).
//
// Pure functions (time is passed in); thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/dialect.h"
#include "reference_impl/failure.h"
#include "reference_impl/http_response.h"
#include "reference_impl/retry_after.h"

namespace faultline::ref {

struct HttpErrorResponse {
  int status = 0;
  const HttpHeaders& headers;
  std::string_view body;  // the response body as received (JSON or not)
  Dialect dialect = Dialect::kOpenAiChat;
};

// The failure and the retry hint that set its retry_after (with the hint's source, which
// Decide() reports as the delay source).
struct ClassifiedResponse {
  Failure failure;
  std::optional<RetryHint> hint;  // the strongest of `hints`
  std::vector<RetryHint> hints;   // every valid hint, strongest first (FindRetryHints)
};

// Classifies an HTTP error response received at `now` (the wall clock, for HTTP-date hints).
// The phase is kResponseHeaders, partial output kNone.
// `honor_should_retry` false ignores `x-should-retry` (a policy may say so: policy.h);
// `parse` is how the policy reads `retry-after` (retry_after.h).
ClassifiedResponse ClassifyHttpError(const HttpErrorResponse& response,
                                     std::chrono::system_clock::time_point now,
                                     bool honor_should_retry = true,
                                     RetryAfterParse parse = RetryAfterParse::kRfc9110);

// ---- Transport failures and timeouts ----

enum class TransportKind {
  kRefused,  // connect refused / host unreachable
  kReset,    // connection reset by peer (before or after the headers)
  kClosed,   // clean EOF where more was due (before the headers, mid-body)
  kResolve,  // name resolution failed
  kOther,    // any other socket error
};

// TRANSPORT / transport, retryable. `phase` is where it happened; `partial_output` what the
// caller had seen. `detail` is the system message ("Connection refused").
Failure TransportFailure(TransportKind kind, Phase phase, PartialOutput partial_output,
                         std::string_view detail = {});

enum class TimeoutKind {
  kConnect,          // phase connect
  kResponseHeaders,  // phase response-headers
  kIdle,             // phase stream: no meaningful event within the idle timeout
  kTotal,            // the end-to-end deadline; at the phase given; NOT retryable (time is up)
};

// TIMEOUT / timeout. `phase` is used for kTotal only (the others imply theirs).
Failure TimeoutFailure(TimeoutKind kind, std::chrono::milliseconds limit,
                       PartialOutput partial_output = PartialOutput::kNone,
                       Phase phase = Phase::kConnect);

// ABORTED / aborted, not retryable: the caller cancelled at `phase`.
Failure AbortedFailure(Phase phase, PartialOutput partial_output = PartialOutput::kNone);

// UNKNOWN / unknown, not retryable: the client itself broke at `phase` (an exception inside the
// driver or the caller's event sink). `what` says what broke.
Failure InternalFailure(std::string_view what, Phase phase,
                        PartialOutput partial_output = PartialOutput::kNone);

}  // namespace faultline::ref
