#include "reference_impl/failover.h"

#include "reference_impl/name_table.h"

namespace faultline::ref {
namespace {

Failover ForClass(FailureClass failure_class) {
  switch (failure_class) {
    case FailureClass::kProtocol:
    case FailureClass::kTruncated:
    case FailureClass::kEmpty:
      return Failover::kSameModel;
    case FailureClass::kRateLimit:
    case FailureClass::kQuota:
    case FailureClass::kAuth:
    case FailureClass::kProviderOverloaded:
    case FailureClass::kProviderUnavailable:
    case FailureClass::kTransport:
    case FailureClass::kTimeout:
    case FailureClass::kContextOverflow:
      return Failover::kCompatibleModel;
    case FailureClass::kAborted:
    case FailureClass::kInvalidRequest:
    case FailureClass::kSafety:
    case FailureClass::kUnknown:
      return Failover::kNever;
  }
  return Failover::kNever;
}

}  // namespace

std::string_view ToString(Failover value) { return NameOf(kFailoverNames, value, "never"); }

std::optional<Failover> ParseFailover(std::string_view text) {
  return ValueOf(kFailoverNames, text);
}

std::string_view ToString(FailoverRule value) {
  return NameOf(kFailoverRuleNames, value, "taxonomy");
}

std::optional<FailoverRule> ParseFailoverRule(std::string_view text) {
  return ValueOf(kFailoverRuleNames, text);
}

Failover FailoverOf(const Failure& failure, FailoverRule rule) {
  if (failure.partial_output == PartialOutput::kCommitted) return Failover::kNever;
  // The total deadline is the call's, not the route's: another route has no more time.
  if (failure.failure_class == FailureClass::kTimeout && !failure.retryable) {
    return Failover::kNever;
  }
  // A cancel ends the call, whatever a router does with errors.
  if (failure.failure_class == FailureClass::kAborted) return Failover::kNever;
  if (rule == FailoverRule::kAnyFailure) return Failover::kCompatibleModel;
  return ForClass(failure.failure_class);
}

}  // namespace faultline::ref
