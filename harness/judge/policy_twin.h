// The policy twin: what a subject's own declared policy allows it to do on a scenario.
//
// The oracle for "what should this client have done" is the client's declared policy, not the
// reference client's defaults. The twin runs the reference engine configured with that policy on
// the same scenario in virtual time (virtual_world.h), over several retry seeds because jitter
// makes some outcomes a range, and collects every outcome it reached: ending, attempts, failure
// class and code, committed text. The judge (judge.h) then accepts a subject whose outcome is one
// of them. Scenario `expect:` blocks state what the reference client does with the scenario's
// own policy; a subject with another declared policy is held to its twin instead.
//
// Pure (virtual time only); thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/trace/trace.h"
#include "harness/worlds/virtual_world.h"
#include "reference_impl/policy.h"
#include "scenarios/scenario.h"

namespace faultline::harness {

struct TwinOutcome {
  EventKind type = EventKind::kFailed;  // kCommitted | kFailed
  int attempts = 0;
  int requests = 0;  // requests that reached the provider in the run (all calls)
  std::string failure_class, failure_code;  // response/failed
  bool retryable = false;                   // response/failed: the failure's `retryable`
  std::string give_up;                      // why the policy gave up ("deadline", ...)
  std::string text;                         // response/committed
  double ended_ms = 0;                      // virtual time of the terminal event
  friend bool operator==(const TwinOutcome&, const TwinOutcome&) = default;
};

// How long the twin runs before it calls a call endless (VirtualRunOptions::horizon).
inline constexpr Duration kTwinHorizon = std::chrono::hours(24);

struct PolicyTwin {
  int seeds = 0;                      // runs made
  std::vector<TwinOutcome> outcomes;  // distinct outcomes of every call over every run
  // Some call of some run was still going at kTwinHorizon: no timeout, cap or deadline of the
  // policy ends it on this scenario (a heartbeat-only stream and no total deadline, say).
  bool never_ends = false;
  // Some run stopped at TwinOptions::max_requests (the policy was still sending requests), or the
  // twin stopped making runs when its runs together reached kTwinRunsAtTheBound times that: the
  // bound, else 0. Its outcomes are then those it reached so far (never_ends is set too).
  std::uint64_t request_bound = 0;
  std::string error;  // a run could not be made (the twin is then not used)
  bool usable() const { return error.empty() && (!outcomes.empty() || never_ends); }
  // When the soonest outcome ended (virtual ms from the first attempt); nullopt: none ended.
  std::optional<double> earliest_end_ms() const;
};

// How far into the scenario's scripted time (listener outages, route health) a subject over
// real sockets made its first attempt: the real world starts that time at the subject's first
// attempt as the runner first saw it (Trace::scripted_from: its response/start line, or its
// request's arrival), and the twin, whose t = 0 is the first attempt, starts that far in: from
// scripted_from (else the hello) to FirstRequestAt (trace.h).
Duration LeadOfFirstAttempt(const Trace& trace);

// How the twin runs, to run as the subject's run did.
struct TwinOptions {
  // Over real sockets a silence that lasts about as long as a timeout may end either way, so
  // with a tolerance > 0 the policy also runs with every timeout that much shorter and longer,
  // and the outcomes of all three count. The retries of a loaded subject also reach the
  // provider late while scripted time (route health, listener outages) runs on, so the policy
  // also runs with every retry half the tolerance and the whole tolerance late
  // (VirtualRunOptions::retry_lag), and those outcomes count too.
  double timeout_tolerance_ms = 0;
  Duration scripted_lead{0};  // LeadOfFirstAttempt of the subject's run
  bool one_client = true;     // the subject's calls share one client (Trace::one_client)
  int seeds = 12;             // retry seeds
  // Requests one run may send (VirtualRunOptions::max_requests): a declaration that retries
  // forever with a short backoff is judged as far as this bound, not until memory runs out.
  std::uint64_t max_requests = kMaxVirtualRequests;
  // CompileSessions(scenario), shared with the subject's runs; null: compiled once per twin.
  std::shared_ptr<const CompiledSessions> compiled{};
};

// The twin's runs together send at most this many times TwinOptions::max_requests: a
// declaration whose every run reaches the bound costs a few runs' worth, not every seed's.
inline constexpr std::uint64_t kTwinRunsAtTheBound = 4;

// `from`'s runs added to `into`'s: every outcome either reached (a subject whose first attempt
// lies anywhere between two leads may reach what the twin reaches at either).
void MergeTwins(PolicyTwin& into, const PolicyTwin& from);

// The retry seeds the runner's twin tries before an EXPECT-* check fails a subject whose ending
// the first TwinOptions::seeds did not reach: rare jitter draws are the policy's too.
inline constexpr int kWitnessSeeds = 240;

// Runs `scenario` with `policy` in virtual time for `options.seeds` retry seeds derived from
// `seed`, the provider drawing with `provider_seed` (the subject's run's, so chaos draws agree).
PolicyTwin ComputeTwin(const scenario::Scenario& scenario, const ref::RetryPolicy& policy,
                       std::uint64_t seed, std::uint64_t provider_seed,
                       const TwinOptions& options = {});

// "committed after 2 attempts, or failed RATE_LIMIT after 3": the outcomes in words ("still
// running after 24 h" for never_ends).
std::string DescribeOutcomes(const PolicyTwin& twin);

}  // namespace faultline::harness
