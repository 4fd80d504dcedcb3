// What a fleet run would cost, estimated before it runs: the events it would simulate and the
// memory its time series would take. `faultline simulate` refuses a run over its bounds up front,
// with the estimate and the flag that lifts them (--large-run), instead of running for days or
// dying of std::bad_alloc halfway.
//
// Estimates, not promises: events assume every call makes the policy's maximum attempts (10 when
// the policy has no maximum), three events each, so a healthy run costs less than estimated.
// Values and pure functions; reentrant.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "reference_impl/policy.h"
#include "scenarios/fleet_spec.h"

namespace faultline::fleet {

struct RunCost {
  double calls = 0;         // logical calls offered over the horizon
  double events = 0;        // simulated events, at most about
  double series_steps = 0;  // time-series steps kept, (horizon + drain) / bucket per job
  double series_bytes = 0;  // their memory, in the run and in result.json's JSON form
  RunCost& operator+=(const RunCost& other);
};

// The bounds a run is checked against; `Lifted()` is --large-run's.
struct RunBounds {
  double max_events = 1e9;                         // a few minutes of simulation on one core
  double max_series_bytes = 1024.0 * 1024 * 1024;  // 1 GiB
  double max_sweep_points = 1000;
  // --large-run: no bound on events or memory (a run that exhausts memory still ends with an
  // error, not a crash); sweeps up to a million points (each point's values are built up front).
  static RunBounds Lifted() { return {kUnbounded, kUnbounded, 1e6}; }
  static constexpr double kUnbounded = 1e300;
};

// One job: `spec` run with `policy`.
RunCost EstimateJob(const scenario::FleetSpec& spec, const ref::RetryPolicy& policy);

// nullopt within `bounds`; else why not, with the estimate and how to lift the bound.
std::optional<std::string> CheckCost(const RunCost& cost, std::size_t jobs,
                                     const RunBounds& bounds);

// "1.2 million", "3.4 GB": costs as a person reads them.
std::string ReadableCount(double count);
std::string ReadableBytes(double bytes);

}  // namespace faultline::fleet
