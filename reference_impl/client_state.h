// What the calls of one client share: its retry budget (budget.h), its routes' circuit breakers
// (breaker_board.h) and, for a sticky client, the route its calls start on (sticky_route.h). An
// application keeps one client for all its requests, and a budget or a breaker only works across
// them: the budget stops a retry storm that many calls make together, the breaker keeps the next
// call off a route the last ones found down. So whoever
// runs calls for one client (the worlds of the runner, `faultline call`) makes one ClientState
// from the client's policy and hands it to every call it starts (Share).
//
// Ownership: the client's; it must outlive every Call it was shared with. Thread-safety: its
// parts are internally synchronised, so calls on several threads may share it.
#pragma once

#include <memory>

#include "reference_impl/breaker_board.h"
#include "reference_impl/budget.h"
#include "reference_impl/call.h"
#include "reference_impl/policy.h"
#include "reference_impl/sticky_route.h"

namespace faultline::ref {

class ClientState {
 public:
  explicit ClientState(const RetryPolicy& policy)
      : budget_(policy.budget ? std::make_unique<RetryBudget>(*policy.budget) : nullptr),
        breakers_(std::make_unique<BreakerBoard>(policy.routing.breaker)),
        sticky_(policy.routing.sticky ? std::make_unique<StickyRoute>(*policy.routing.sticky)
                                      : nullptr) {}

  // `options` with this client's budget, breakers and sticky route.
  CallOptions Share(CallOptions options) const {
    options.budget = budget_.get();
    options.breakers = breakers_.get();
    options.sticky = sticky_.get();
    return options;
  }

  RetryBudget* budget() const { return budget_.get(); }  // null: the policy declares none
  BreakerBoard& breakers() const { return *breakers_; }

 private:
  std::unique_ptr<RetryBudget> budget_;
  std::unique_ptr<BreakerBoard> breakers_;
  std::unique_ptr<StickyRoute> sticky_;  // null: the policy is not sticky
};

}  // namespace faultline::ref
