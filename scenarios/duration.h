// The scenario format's one unit of time, shared by scenario.h and fleet_spec.h. Values only.
#pragma once

#include <chrono>

namespace faultline::scenario {

// All scenario times are offsets, never wall-clock instants.
using Duration = std::chrono::microseconds;

}  // namespace faultline::scenario
