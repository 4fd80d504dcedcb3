// The virtual world: the reference client's call engine and the fake provider's session core,
// joined by in-memory byte pipes under one virtual clock.
//
// A discrete-event loop: at every step it finds the earliest thing due (a provider write, a client
// timer, the scripted cancel, a connection attempt), jumps the clock there and delivers it. No
// thread, no socket, no wall time: a scenario with a 120 s Retry-After and a 5-minute stall runs
// in microseconds, and the same seed always produces the same trace, byte for byte.
//
// Thread-safety: RunVirtual is reentrant; each run owns all of its state.
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <string>

#include "harness/trace/trace.h"
#include "reference_impl/policy.h"
#include "scenarios/scenario.h"

namespace faultline::harness {

// The default bound on the requests of one virtual run (`faultline run --max-virtual-requests`):
// far above any scenario's attempts (a policy allows at most 1,000 per call), low enough that a
// run that reaches it costs well under a second and a few MB.
inline constexpr std::uint64_t kMaxVirtualRequests = 10'000;

// Whether a virtual run stopped at its request bound: it still went on sending requests.
bool StoppedAtRequestBound(const Trace& trace, std::uint64_t max_requests);

// The provider's compiled form of a scenario (one session per route, or one): compiling renders
// every response ahead of time and costs about what a whole virtual run costs, so the runs of
// one scenario (repetitions, seeds, a twin's runs) share it. Immutable; thread-safe.
struct CompiledSessions;
std::shared_ptr<const CompiledSessions> CompileSessions(const scenario::Scenario& scenario);

struct VirtualRunOptions {
  std::uint64_t seed = 0;                    // the client's retry RNG
  std::uint64_t provider_seed = 0;           // the provider session (chaos draws, ids)
  ref::RetryPolicy policy;                   // the reference client's policy
  Duration horizon{std::chrono::hours(24)};  // virtual time after which it gives up
  std::uint64_t max_steps = 10'000'000;      // loop bound (a runaway subject)
  // Requests the subject may send before it is stopped as at the horizon: a policy that retries
  // a failure forever with a short backoff would otherwise send millions within the horizon, and
  // the trace that records them would grow without bound (kMaxVirtualRequests; 0: none).
  std::uint64_t max_requests = kMaxVirtualRequests;
  // Scripted time (listener outages, route health) had already run this long when the run
  // starts: a real subject's first attempt came that long after the hello that anchored it.
  Duration scripted_lead{0};
  // Every attempt after a call's first reaches the provider this much later than the client
  // decided to make it: a real subject on a loaded machine (its event loop, the scheduler) is
  // late by up to the real world's tolerance, while scripted time does not wait for it.
  Duration retry_lag{0};
  // The calls are one client's, sharing its circuit breakers and retry budget (ref::ClientState),
  // as the in-process reference client's calls do; false: each call is a client of its own, as
  // an adapter's calls are (one process each). The policy twin of a subject runs as it ran.
  bool one_client = true;
  // CompileSessions(the scenario run), shared; null: compiled for this run alone.
  std::shared_ptr<const CompiledSessions> compiled{};
};

// Runs the scenario with the in-process reference client. A subject still running at the horizon,
// the step bound or the request bound is stopped there (Trace::subject_timed_out), as the real
// world's timeout stops one; the trace so far is judged.
std::expected<Trace, std::string> RunVirtual(const scenario::Scenario& scenario,
                                             const VirtualRunOptions& options);

}  // namespace faultline::harness
