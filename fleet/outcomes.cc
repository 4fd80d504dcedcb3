#include "fleet/outcomes.h"

#include <chrono>
#include <string>

#include "reference_impl/classify.h"
#include "reference_impl/http_response.h"

namespace faultline::fleet {
namespace {

using std::chrono::milliseconds;

ref::Failure Truncated() {
  ref::Failure failure;
  failure.code = ref::FailureCode::kStreamTruncated;
  failure.failure_class = ref::ClassOf(failure.code);
  failure.phase = ref::Phase::kStream;
  failure.retryable = true;
  failure.partial_output = ref::PartialOutput::kUncommitted;
  failure.streamed = true;
  failure.message = "stream ended without its terminator";
  return failure;
}

ref::HttpHeaders HeadersOf(const scenario::ResponseSpec& response) {
  ref::HttpHeaders headers;
  if (response.retry_after && response.retry_after->form == scenario::RetryAfter::Form::kSeconds) {
    headers.Append("retry-after", response.retry_after->text);
  }
  if (response.retry_after_ms) headers.Append("retry-after-ms", *response.retry_after_ms);
  if (response.should_retry)
    headers.Append("x-should-retry", *response.should_retry ? "true" : "false");
  return headers;
}

}  // namespace

Outcomes::Outcomes(const ref::RetryPolicy& policy, const scenario::Chaos* chaos,
                   int overload_status, std::optional<Micros> attempt_timeout) {
  const ref::HttpHeaders none;
  ref::ClassifiedResponse overload = ref::ClassifyHttpError(
      {overload_status, none, "", ref::Dialect::kOpenAiChat}, {}, policy.should_retry_header);
  overload_ = Add(std::move(overload.failure));
  ref::ClassifiedResponse limited = ref::ClassifyHttpError(
      {429, none, "", ref::Dialect::kOpenAiChat}, {}, policy.should_retry_header);
  rate_limited_ = Add(std::move(limited.failure));
  const milliseconds limit(attempt_timeout.value_or(0) / 1000);
  timeout_ = Add(ref::TimeoutFailure(ref::TimeoutKind::kResponseHeaders, limit));
  ref::ClassifiedResponse gateway_timeout = ref::ClassifyHttpError(
      {504, none, "", ref::Dialect::kOpenAiChat}, {}, policy.should_retry_header);
  gateway_timeout_ = Add(std::move(gateway_timeout.failure));
  if (chaos == nullptr) return;
  double cumulative = 0;
  for (const scenario::Chaos::Choice& choice : chaos->faults) {
    cumulative += choice.probability;
    chaos_.emplace_back(cumulative, FromResponse(choice.response, policy));
  }
  otherwise_ = FromResponse(chaos->otherwise, policy);
}

Outcome Outcomes::Add(ref::Failure failure, std::vector<ref::RetryHint> hints) {
  const bool throttling = failure.failure_class == ref::FailureClass::kRateLimit ||
                          failure.failure_class == ref::FailureClass::kProviderOverloaded;
  ref::DecisionInput input;
  input.failure = std::move(failure);
  input.hints = std::move(hints);
  inputs_.push_back(std::move(input));
  return Outcome{false, throttling, true, static_cast<std::uint16_t>(inputs_.size() - 1)};
}

Outcome Outcomes::FromResponse(const scenario::ResponseSpec& response,
                               const ref::RetryPolicy& policy) {
  using Kind = scenario::Termination::Kind;
  if (response.connection != scenario::ConnectionFault::kNone) {
    const bool reset = response.connection == scenario::ConnectionFault::kResetBeforeHeaders;
    return Add(
        ref::TransportFailure(reset ? ref::TransportKind::kReset : ref::TransportKind::kClosed,
                              ref::Phase::kResponseHeaders, ref::PartialOutput::kNone));
  }
  if (response.status >= 400) {
    const ref::HttpHeaders headers = HeadersOf(response);
    ref::ClassifiedResponse classified = ref::ClassifyHttpError(
        {response.status, headers, "", ref::Dialect::kOpenAiChat}, {}, policy.should_retry_header);
    return Add(std::move(classified.failure), std::move(classified.hints));
  }
  if (response.content.end.kind == Kind::kStall) {
    const milliseconds idle = policy.timeouts.idle.value_or(milliseconds(0));
    ref::Failure stalled =
        ref::TimeoutFailure(ref::TimeoutKind::kIdle, idle, ref::PartialOutput::kUncommitted);
    stalled.streamed = true;
    return Add(std::move(stalled));
  }
  if (response.content.end.kind != Kind::kDone) return Add(Truncated());
  return Outcome{true, false, true, 0};
}

Outcome Outcomes::Relay(const Outcome& below) const {
  if (!below.success && below.index == timeout_.index) return gateway_timeout_;
  return below;
}

const Outcome& Outcomes::Sample(ref::RetryRng& rng) const {
  if (chaos_.empty()) return otherwise_;
  const double u = ref::Uniform01(rng);
  for (const auto& [cumulative, outcome] : chaos_) {
    if (u < cumulative) return outcome;
  }
  return otherwise_;
}

}  // namespace faultline::fleet
