// The bounds the judge holds a run's times to, for the HTML timeline to draw (reports/timeline.h
// reads them from ScenarioResult::trace["bounds"]), so that a violation shows as a mark outside
// its band. Each band is what the judge accepts, tolerance included, computed with the judge's
// own rules (the declared policy's backoff windows, its Retry-After reading, its timeouts):
//
//   {"kind": "retry-after" | "backoff" | "idle" | "headers" | "deadline",
//    "attempt": N   the attempt whose lane it belongs to (0: the whole call),
//    "from_ms": F, "to_ms": T (absent: no upper bound),
//    "mark_ms": M   the time that must fall inside: the next arrival (retry-after, backoff), the
//                   end of the silent exchange (idle, headers), the terminal event (deadline),
//    "inside": bool, "label": "backoff window 1 (full jitter)",
//    "call": C      with several calls: the call it belongs to (attempt N is the journal's)}
//
// Runs with a usable declared policy only; with several calls, only when the journal names each
// request's call (then every call's bounds, as the judge holds each call to them). Pure;
// thread-safety: reentrant.
#pragma once

#include "harness/judge/judge.h"
#include "nlohmann/json.hpp"

namespace faultline::harness {

nlohmann::json TimelineBounds(const scenario::Scenario& scenario, const Trace& trace,
                              const Tolerance& tolerance);

}  // namespace faultline::harness
