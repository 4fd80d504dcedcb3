// The scenario format's one unit of time, shared by scenario.h and fleet_spec.h, and the one
// parser of its written form (scenario files, fleet files, thresholds, command-line flags).
// Values and pure functions; thread-safety: reentrant.
#pragma once

#include <chrono>
#include <expected>
#include <string>
#include <string_view>

namespace faultline::scenario {

// All scenario times are offsets, never wall-clock instants.
using Duration = std::chrono::microseconds;

// Parses a duration: "250us", "10ms", "2s", "1.5s", "10m", "1h", "-30s", Go-style sums such as
// "1m30s". No unit is an error, and so is anything finer than 1us or past the range.
std::expected<Duration, std::string> ParseDuration(std::string_view text);

}  // namespace faultline::scenario
