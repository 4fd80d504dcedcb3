#include "fleet/experiment.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <span>

#include "fleet/profiles.h"
#include "fleet/simulation.h"
#include "fmt/format.h"
#include "hashing/shard_bucket.h"
#include "reference_impl/policy_json.h"
#include "scenarios/fleet_bounds.h"

namespace faultline::fleet {
namespace {

using scenario::Duration;

using scenario::FleetValue;

constexpr std::string_view kPolicyPrefix = "policy.";

std::optional<double> ParseNumber(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

Duration Seconds(double value) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(value));
}

// The fleet keys a sweep can set, each with the range it must lie in (the file's, from
// fleet_bounds.h) and its setter; values are in the unit named, `scale` times the range's.
struct FleetKey {
  std::string_view name;
  FleetValue range;
  double scale;
  void (*apply)(scenario::FleetSpec&, double);  // only for a value within `range`
};
constexpr FleetKey kFleetKeys[] = {
    {"clients", FleetValue::kClients, 1,
     [](auto& s, double v) { s.clients = static_cast<std::uint64_t>(v); }},
    {"horizon_s", FleetValue::kHorizon, 1, [](auto& s, double v) { s.horizon = Seconds(v); }},
    {"timeout_s", FleetValue::kTimeout, 1, [](auto& s, double v) { s.timeout = Seconds(v); }},
    {"arrivals.rate", FleetValue::kArrivalRate, 1,
     [](auto& s, double v) {
       if (s.workload.rate.empty()) s.workload.rate.push_back({});
       for (auto& step : s.workload.rate) step.value = v;
     }},
    {"arrivals.think_s", FleetValue::kThink, 1,
     [](auto& s, double v) { s.workload.think = Seconds(v); }},
    {"provider.concurrency", FleetValue::kConcurrency, 1,
     [](auto& s, double v) { s.provider.concurrency = static_cast<int>(v); }},
    {"provider.rate", FleetValue::kProviderRate, 1, [](auto& s, double v) { s.provider.rate = v; }},
    {"provider.burst", FleetValue::kBurst, 1, [](auto& s, double v) { s.provider.burst = v; }},
    {"provider.queue", FleetValue::kQueue, 1,
     [](auto& s, double v) { s.provider.queue = static_cast<int>(v); }},
    {"provider.service_ms", FleetValue::kServiceMean, 1e-3,
     [](auto& s, double v) { s.provider.service_mean = Seconds(v / 1000); }},
    {"brownout.capacity", FleetValue::kBrownoutCapacity, 1,
     [](auto& s, double v) {
       for (auto& brownout : s.provider.brownouts) brownout.capacity = v;
     }},
};

const FleetKey* FindFleetKey(std::string_view name) {
  const auto* found = std::ranges::find(kFleetKeys, name, &FleetKey::name);
  return found == std::end(kFleetKeys) ? nullptr : found;
}

// A swept value within the range the same key has in a file.
std::expected<void, std::string> CheckSweepValue(const FleetKey& key, double value) {
  if (auto error = scenario::OutOfRange(key.range, value * key.scale)) {
    return std::unexpected(fmt::format("--sweep {}={}: out of range for {}: {}", key.name, value,
                                       scenario::BoundOf(key.range).key, *error));
  }
  return {};
}

// "policy.backoff.base_ms" = v, through the policy's own JSON form and strict loader.
std::expected<ref::RetryPolicy, std::string> SetPolicyKey(const ref::RetryPolicy& policy,
                                                          std::string_view key, double value) {
  std::string pointer = "/" + std::string(key.substr(kPolicyPrefix.size()));
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  nlohmann::json json = ref::PolicyToJson(policy);
  const bool integral = value == std::floor(value) && std::abs(value) < 9e15;
  try {  // a key that is no JSON pointer ("policy.a~2") or walks into a number throws
    json[nlohmann::json::json_pointer(pointer)] =
        integral ? nlohmann::json(static_cast<std::int64_t>(value)) : nlohmann::json(value);
  } catch (const nlohmann::json::exception& error) {
    return std::unexpected(
        fmt::format("--sweep {}={}: not a policy key: {}", key, value, error.what()));
  }
  auto changed = ref::PolicyFromJson(json);
  if (!changed) {
    return std::unexpected(
        fmt::format("--sweep {}={}: {}", key, value, changed.error().ToString()));
  }
  return *changed;
}

std::expected<void, std::string> ApplyFleetKey(scenario::FleetSpec& spec, std::string_view key,
                                               double value) {
  const FleetKey* known = FindFleetKey(key);
  if (known == nullptr) return std::unexpected(fmt::format("unknown sweep key '{}'", key));
  if (auto checked = CheckSweepValue(*known, value); !checked) return checked;
  known->apply(spec, value);
  // The spec as a whole once more: a value converted to microseconds may have become 0.
  if (auto error = scenario::CheckFleetSpec(spec)) {
    return std::unexpected(fmt::format("--sweep {}={}: {}", key, value, *error));
  }
  return {};
}

// FROM, FROM + STEP, ... up to TO (with a little slack for rounding), every one of them: a sweep
// with more points than the bound is refused, never cut short.
std::expected<std::vector<double>, std::string> SweepValues(const std::optional<Sweep>& sweep,
                                                            const RunBounds& bounds) {
  if (!sweep) return std::vector<double>{std::nan("")};
  const double points = SweepPoints(*sweep);
  if (!(points <= bounds.max_sweep_points)) {
    return std::unexpected(fmt::format(
        "--sweep {}={}..{}:{} has {} points, over the bound of {}; use a larger STEP or split "
        "the range over several runs{}",
        sweep->key, sweep->from, sweep->to, sweep->step, ReadableCount(points),
        ReadableCount(bounds.max_sweep_points),
        bounds.max_sweep_points < RunBounds::Lifted().max_sweep_points
            ? fmt::format(", or pass --large-run (up to {} points)",
                          ReadableCount(RunBounds::Lifted().max_sweep_points))
            : ""));
  }
  std::vector<double> values(static_cast<std::size_t>(points));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = sweep->from + static_cast<double>(i) * sweep->step;
  }
  return values;
}

// What names a job for sharding: its policy's name and its sweep value (NaN without a sweep).
// Not its index, which a policy added to --compare or a sweep widened would change for others.
std::string JobKey(const NamedPolicy& policy, double value) {
  if (std::isnan(value)) return policy.name;
  return fmt::format("{}\x1f{}", policy.name, value);  // a unit separator no name holds
}

struct PolicyRef {
  std::string name;
  std::string where;  // "file:line:column: " when it came from the fleet section
};

std::vector<PolicyRef> PolicyRefs(const ExperimentInput& input) {
  std::vector<PolicyRef> refs;
  for (const std::string& name : input.policies) refs.push_back({name, ""});
  if (!refs.empty()) return refs;
  for (const scenario::Located& located : input.scenario.fleet->policies) {
    refs.push_back(
        {located.text, fmt::format("{}:{}:{}: at fleet.policies: ", input.scenario.source,
                                   located.line, located.column)});
  }
  return refs;
}

std::expected<std::vector<NamedPolicy>, std::string> ResolveAll(const ExperimentInput& input) {
  std::vector<NamedPolicy> policies;
  for (const PolicyRef& ref : PolicyRefs(input)) {
    auto policy = ResolvePolicy(ref.name);
    if (!policy) return std::unexpected(ref.where + policy.error());
    policies.push_back(std::move(*policy));
  }
  return policies;
}

// One job: the spec and the policy with the sweep value applied.
struct Job {
  scenario::FleetSpec spec;
  NamedPolicy policy;
};

std::expected<Job, std::string> PrepareJob(const ExperimentInput& input, const NamedPolicy& policy,
                                           double value) {
  Job job{*input.scenario.fleet, policy};
  if (input.sweep && input.sweep->key.starts_with(kPolicyPrefix)) {
    auto changed = SetPolicyKey(policy.policy, input.sweep->key, value);
    if (!changed) return std::unexpected(changed.error());
    job.policy.policy = std::move(*changed);
  } else if (input.sweep) {
    if (auto applied = ApplyFleetKey(job.spec, input.sweep->key, value); !applied) {
      return std::unexpected(applied.error());
    }
  }
  return job;
}

PolicyMeasures RunJob(const ExperimentInput& input, const Job& job, const ProgressFn& progress) {
  const scenario::Chaos* chaos = input.scenario.chaos ? &*input.scenario.chaos : nullptr;
  const scenario::RateLimit* rate_limit =
      input.scenario.rate_limit ? &*input.scenario.rate_limit : nullptr;
  return Simulate(RunInput{&job.spec, chaos, &job.policy, input.seed, progress, rate_limit});
}

}  // namespace

std::vector<std::string_view> SweepKeys() {
  std::vector<std::string_view> keys;
  for (const FleetKey& key : kFleetKeys) keys.push_back(key.name);
  keys.push_back("policy.<path>");
  return keys;
}

std::expected<Sweep, std::string> ParseSweep(std::string_view text) {
  const std::size_t equals = text.find('=');
  const std::size_t dots = text.find("..");
  const std::size_t colon = text.rfind(':');
  if (equals == std::string_view::npos || dots == std::string_view::npos || dots < equals) {
    return std::unexpected(fmt::format("--sweep '{}': expected KEY=FROM..TO[:STEP]", text));
  }
  Sweep sweep;
  sweep.key = std::string(text.substr(0, equals));
  const bool has_step = colon != std::string_view::npos && colon > dots;
  const auto from = ParseNumber(text.substr(equals + 1, dots - equals - 1));
  const auto to = ParseNumber(text.substr(dots + 2, (has_step ? colon : text.size()) - dots - 2));
  const auto step = has_step ? ParseNumber(text.substr(colon + 1)) : std::optional<double>(1);
  if (!from || !to || !step || *step <= 0 || *to < *from) {
    return std::unexpected(fmt::format(
        "--sweep '{}': expected numbers FROM <= TO and a STEP > 0 (e.g. provider.rate=5..50:5)",
        text));
  }
  const FleetKey* fleet_key = FindFleetKey(sweep.key);
  if (fleet_key == nullptr && !sweep.key.starts_with(kPolicyPrefix)) {
    return std::unexpected(
        fmt::format("--sweep: unknown key '{}'; known: {}, policy.<path> (e.g. "
                    "policy.max_attempts)",
                    sweep.key, fmt::join(SweepKeys(), ", ")));
  }
  // Every point lies between FROM and TO, and a range is an interval: checking both ends refuses
  // a sweep out of range before anything runs (a whole-number key checks each point later).
  for (const double end : {*from, *to}) {
    if (auto checked =
            fleet_key ? CheckSweepValue(*fleet_key, end) : std::expected<void, std::string>{};
        !checked) {
      return std::unexpected(checked.error());
    }
  }
  sweep.from = *from;
  sweep.to = *to;
  sweep.step = *step;
  return sweep;
}

double SweepPoints(const Sweep& sweep) {
  return std::floor((sweep.to - sweep.from) / sweep.step + 1e-9) + 1;
}

std::expected<Experiment, std::string> RunExperiment(const ExperimentInput& input) {
  if (!input.scenario.fleet) {
    return std::unexpected(
        fmt::format("{}: has no 'fleet' section to simulate", input.scenario.source));
  }
  if (auto error = scenario::CheckFleetSpec(*input.scenario.fleet)) {
    return std::unexpected(fmt::format("{}: {}", input.scenario.source, *error));
  }
  auto policies = ResolveAll(input);
  if (!policies) return std::unexpected(policies.error());
  const auto values = SweepValues(input.sweep, input.bounds);
  if (!values) return std::unexpected(values.error());
  Experiment experiment{input.scenario.name, input.scenario.source, input.seed, input.sweep, 0, {}};
  experiment.total_jobs = values->size() * policies->size();
  std::vector<std::size_t> mine;
  for (std::size_t job = 0; job < experiment.total_jobs; ++job) {
    const std::string key =
        JobKey((*policies)[job % policies->size()], (*values)[job / policies->size()]);
    if (hashing::ShardBucket(key, input.shard_count) == input.shard_index) mine.push_back(job);
  }
  const auto prepare = [&](std::size_t job) {
    return PrepareJob(input, (*policies)[job % policies->size()],
                      (*values)[job / policies->size()]);
  };
  // Every job is prepared and costed before the first runs: a sweep value out of range or a run
  // over the bounds is refused up front, not after hours of results.
  RunCost cost;
  for (const std::size_t job : mine) {
    auto prepared = prepare(job);
    if (!prepared) return std::unexpected(prepared.error());
    cost += EstimateJob(prepared->spec, prepared->policy.policy);
  }
  if (auto refused = CheckCost(cost, mine.size(), input.bounds)) return std::unexpected(*refused);
  if (input.estimate) input.estimate(cost, mine.size());
  for (std::size_t done = 0; done < mine.size(); ++done) {
    const std::size_t job = mine[done];
    ProgressFn progress;
    if (input.progress) {
      progress = [&](double f, std::uint64_t events) {
        input.progress(done, mine.size(), f, events);
      };
    }
    auto prepared = prepare(job);
    if (!prepared) return std::unexpected(prepared.error());
    std::optional<double> sweep_value;
    if (input.sweep) sweep_value = (*values)[job / policies->size()];
    experiment.results.push_back({job, sweep_value, RunJob(input, *prepared, progress)});
  }
  return experiment;
}

std::expected<Experiment, std::string> MergeShards(std::vector<Experiment> shards) {
  if (shards.empty()) return std::unexpected("nothing to merge");
  Experiment merged = std::move(shards.front());
  for (Experiment& shard : std::span(shards).subspan(1)) {
    if (shard.scenario != merged.scenario || shard.seed != merged.seed ||
        shard.total_jobs != merged.total_jobs) {
      return std::unexpected(fmt::format(
          "shards of different experiments: '{}' seed {} ({} jobs) and '{}' seed {} ({} jobs)",
          merged.scenario, merged.seed, merged.total_jobs, shard.scenario, shard.seed,
          shard.total_jobs));
    }
    std::ranges::move(shard.results, std::back_inserter(merged.results));
  }
  std::ranges::sort(merged.results, {}, &JobResult::job);
  for (std::size_t i = 0; i < merged.results.size(); ++i) {
    if (merged.results[i].job != i) {
      return std::unexpected(fmt::format(
          "job {} of {} is {}", i, merged.total_jobs,
          i < merged.results.size() && merged.results[i].job < i ? "in two shards" : "missing"));
    }
  }
  if (merged.results.size() != merged.total_jobs) {
    return std::unexpected(
        fmt::format("job {} of {} is missing", merged.results.size(), merged.total_jobs));
  }
  return merged;
}

}  // namespace faultline::fleet
