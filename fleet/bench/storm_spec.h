// The storm scenario of the speed benchmark (storm_bench.cc), of its SimPy twin (simpy_storm.py)
// and of the AWS adaptive-mode golden test: 2,000 calls/s (Poisson) for 60 s against a provider
// that admits 1,000 requests/s (a bucket 10 deep) and answers the rest 429 without Retry-After;
// served requests take 50 ms. Built in code, so that neither needs files. Values only.
#pragma once

#include <chrono>

#include "scenarios/fleet_spec.h"

namespace faultline::fleet {

inline scenario::FleetSpec StormSpec() {
  using namespace std::chrono_literals;
  scenario::FleetSpec spec;
  spec.clients = 1'000'000;
  spec.horizon = 60s;
  spec.workload.rate = {{0s, 2000}};
  spec.provider.rate = 1000;
  spec.provider.burst = 10;
  spec.provider.service = scenario::FleetProvider::Service::kConstant;
  spec.provider.service_mean = 50ms;
  spec.provider.overload.hint = scenario::FleetOverload::Hint::kNone;
  return spec;
}

}  // namespace faultline::fleet
