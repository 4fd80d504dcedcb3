// A fleet experiment: a scenario's fleet section run for several policies on the same seed
// (--compare), optionally across one swept parameter (--sweep KEY=A..B:STEP), optionally only
// one shard of those jobs (--shard I/N) whose results are merged afterwards (MergeShards).
//
// Jobs are numbered policy-major within each sweep value; a shard keeps a job by a stable hash of
// its policy's name and its sweep value (hashing/shard_bucket.h), so a shard is a fixed subset,
// a policy added or a sweep widened moves no other job between shards, and the merged result is
// the same as one unsharded run. Pure apart from the progress callback.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fleet/measures.h"
#include "fleet/run_cost.h"
#include "nlohmann/json.hpp"
#include "scenarios/scenario.h"

namespace faultline::fleet {

struct Sweep {
  std::string key;  // "provider.concurrency", "clients", "policy.max_attempts", ...
  double from = 0, to = 0, step = 1;
};

// "provider.rate=5..50:5" -> Sweep, or a message naming what is wrong; a fleet key's FROM and TO
// must lie in the range the key has in a file (scenarios/fleet_bounds.h).
std::expected<Sweep, std::string> ParseSweep(std::string_view text);
// How many values the sweep runs: FROM, FROM + STEP, ... up to TO.
double SweepPoints(const Sweep& sweep);
// The keys a sweep accepts besides "policy.<json path>".
std::vector<std::string_view> SweepKeys();

struct ExperimentInput {
  scenario::Scenario scenario;        // has a fleet section
  std::vector<std::string> policies;  // names or files; empty: the fleet section's
  std::uint64_t seed = 1;
  std::optional<Sweep> sweep;
  // This run's share of the jobs: every job whose policy name and sweep value hash to
  // shard_index among shard_count (hashing::ShardBucket; the CLI resolves --shard with the
  // runner's harness/shard.h).
  int shard_index = 1;
  int shard_count = 1;
  // (jobs done, jobs in this shard, share of the current job's horizon simulated, its events)
  std::function<void(std::size_t, std::size_t, double, std::uint64_t)> progress;
  // A run over these is refused before it starts (run_cost.h); so is a sweep with more points.
  RunBounds bounds;
  // Called once before the first job with what this shard's jobs are estimated to cost.
  std::function<void(const RunCost&, std::size_t jobs)> estimate;
};

struct JobResult {
  std::size_t job = 0;  // index among all jobs of the experiment
  std::optional<double> sweep_value;
  PolicyMeasures measures;
};

struct Experiment {
  std::string scenario;  // name
  std::string source;    // file
  std::uint64_t seed = 1;
  std::optional<Sweep> sweep;
  std::size_t total_jobs = 0;
  std::vector<JobResult> results;  // by job index
};

// Errors are messages; an unknown policy in the fleet section names the file, line and column.
// Every job is checked (values in range, cost within `bounds`) before any runs, and the result
// holds every job of the shard: none is left out to stay within a bound.
std::expected<Experiment, std::string> RunExperiment(const ExperimentInput& input);

// result.json (fleet/schema/simulate-result.schema.json) and back.
nlohmann::json ToJson(const Experiment& experiment);
std::expected<Experiment, std::string> ExperimentFromJson(const nlohmann::json& json);

// Joins the shards of one experiment; every job must be present exactly once. The shards are
// taken by value and their results moved, never copied: a caller that moves them in holds each
// job's measures (time series up to the run bounds) once.
std::expected<Experiment, std::string> MergeShards(std::vector<Experiment> shards);

}  // namespace faultline::fleet
