// The route a sticky client's calls start on (the policy's `routing.sticky`): the route its last
// failover moved to, until `reset_ms` after that failover; then none, and a call starts on the
// primary as any client's does.
//
// ai-fallback's FallbackModel is such a client: one model index serves every call, a failure
// moves it to the next model, and it goes back to the first model once modelResetInterval has
// passed since its last reset (so no later than that interval after any failover). The reference
// client keeps the same state for its calls when the policy says so, and the judge's ROUTE-010
// holds a subject to what it declared (docs/routes.md, "Sticky clients").
//
// A failover is an attempt that begins on another route than the call's attempt before it (what
// the judge sees too: a response/start on a new route), not the decision to move: a call
// cancelled in the wait before that attempt moved nothing.
//
// Ownership: the client's (ClientState, client_state.h), shared with every call it makes.
// Thread-safety: internally synchronised (calls of one client may run on several threads).
// Sans-I/O: `now` is passed in.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "reference_impl/policy.h"

namespace faultline::ref {

class StickyRoute {
 public:
  using Time = PolicyClock::time_point;

  explicit StickyRoute(const StickyConfig& config) : reset_(config.reset) {}
  StickyRoute(const StickyRoute&) = delete;
  StickyRoute& operator=(const StickyRoute&) = delete;

  // An attempt of some call began on `route` at `now`, after that call's previous attempt went to
  // another route. The latest failover wins (concurrent calls may report out of order).
  void Moved(std::string_view route, Time now);
  // The route a call starting at `now` starts on, or nullopt: the primary (no failover yet, or
  // reset_ms has passed since the last one).
  std::optional<std::string> At(Time now) const;

 private:
  const std::chrono::milliseconds reset_;
  mutable std::mutex mutex_;
  std::string route_;             // guarded by mutex_
  std::optional<Time> moved_at_;  // guarded by mutex_; nullopt: no failover yet
};

}  // namespace faultline::ref
