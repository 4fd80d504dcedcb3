// Judging thresholds (scenarios/threshold.h) over a run's results: each threshold of a scenario
// (its `expect.thresholds`, then every `--threshold` of the command line) aggregates one metric
// over every run and call of that scenario in one world, as k6 aggregates over a whole test.
// Per scenario and world because a catalogue mixes scenarios that force two-minute waits with
// scenarios that force none (one percentile over both would say nothing), virtual and real times
// never mix, and shards split by scenario, so every shard judges its thresholds whole.
//
// Samples: ttft and total are per call (every call of a multi-call scenario), attempts per call
// (its response/start events; for a single call the requests that reached the provider),
// overhead and wasted_bytes per run. No sample: n/a, never pass (count always has one: its own).
// A percentile is exact over up to report::SampleSeries::kExactSamples samples and within its
// relative error beyond (reports/sample_series.h); avg, min, max and count are exact.
//
// Pure. Thread-safety: reentrant.
#pragma once

#include <span>
#include <vector>

#include "reports/run_result.h"
#include "scenarios/scenario.h"
#include "scenarios/threshold.h"

namespace faultline::harness {

// One result per scenario x world present in `runs` x threshold, in the order of `scenarios`,
// virtual before real.
std::vector<report::ThresholdResult> JudgeThresholds(
    const std::vector<scenario::Scenario>& scenarios,
    std::span<const scenario::Threshold> command_line,
    const std::vector<report::ScenarioResult>& runs);

// One threshold over `runs` (all of one scenario in one world).
report::ThresholdResult JudgeThreshold(const scenario::Threshold& threshold,
                                       const std::vector<const report::ScenarioResult*>& runs);

}  // namespace faultline::harness
