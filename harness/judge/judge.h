// The judge: the invariant catalogue (README.md, "The invariants") and the scenario's `expect:`
// checks, as pure functions of a trace.
//
// Every invariant has a stable ID (never reused, never renumbered), a one-line statement, and on
// failure the evidence: times, attempt numbers, byte counts, the offending events. Server-side
// facts come from the provider's journal and its PlanTruth (what the injected fault means);
// client-side facts from the lifecycle events. Retries and timeouts are judged against the policy
// the subject declared in `adapter/hello`.
//
// Black-box subjects (only `adapter/hello` and a terminal event) are judged from the journal;
// checks that need the client's own events are "not applicable", never passed. Checks that need
// a declared policy are not applicable when the subject declares none. Violations break the
// contract; advisories (ADV-*) flag what the declared policy allows but harms the user or the
// provider.
//
// Pure; thread-safety: reentrant.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/judge/policy_twin.h"
#include "harness/trace/trace.h"
#include "reports/run_result.h"
#include "scenarios/scenario.h"

namespace faultline::harness {

// How far measured times may stray from the declared ones. The virtual world is exact. Over real
// sockets a loaded machine makes things late: upper bounds get a fixed room and, on top, three
// times the scheduling lateness the world measured during the run (a retry wakes from its sleep,
// connects and is read by the provider: each can be that late; worlds/scheduling_probe.h). A gap
// measured at the provider can also look short, by one such lateness, when the provider noted
// the end of the previous attempt late (seen: a 2 s Retry-After waited out, measured as 1599 ms
// at load 40), so lower bounds get that much room: a client that retries at once after a 2 s
// Retry-After still fails unless the machine ran 2 s late, and the evidence says how much room
// the load bought.
struct Tolerance {
  double late_ms = 0;      // added to upper bounds (timeouts, backoff caps, cancel promptness)
  double early_ms = 0;     // subtracted from lower bounds (Retry-After floors, backoff minimums)
  double lateness_ms = 0;  // the measured lateness: 3x of it is in late_ms, 1x in early_ms
};
Tolerance VirtualTolerance();  // {1, 0}
Tolerance RealTolerance();     // {750, 25}
// RealTolerance widened for a run during which the machine ran up to `lateness` late.
Tolerance RealTolerance(Duration lateness);
// The late room in words, for evidence: "+750 ms", or "+2010 ms: 750 ms and 3 x 420 ms of
// scheduling lateness measured during the run".
std::string LateRoom(const Tolerance& tolerance);
std::string EarlyRoom(const Tolerance& tolerance);  // "-25 ms", or "-711 ms: 25 ms and ..."

struct InvariantInfo {
  std::string_view id;
  std::string_view statement;
  report::Severity severity = report::Severity::kViolation;
};
// Every invariant, in catalogue order.
std::span<const InvariantInfo> InvariantCatalog();

// True when the subject sent no events but hello and its terminal ones.
bool IsBlackBox(const Trace& trace);

// Judges `trace`: one CheckResult per catalogue invariant and advisory (in catalogue order),
// then one per `expect:` field the scenario sets. With a usable `twin` of the subject's declared
// policy (policy_twin.h), `expect:` fields are judged against what that policy allows;
// without one, literally (they state what the reference client does with the scenario's policy;
// the runner makes no twin for a subject that declares exactly that policy).
std::vector<report::CheckResult> Judge(const scenario::Scenario& scenario, const Trace& trace,
                                       const Tolerance& tolerance,
                                       const PolicyTwin* twin = nullptr);

}  // namespace faultline::harness
