#include "fleet/experiment.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "fleet/profiles.h"
#include "fleet/simulation.h"
#include "fmt/format.h"
#include "reference_impl/policy_json.h"

namespace faultline::fleet {
namespace {

using scenario::Duration;

constexpr std::size_t kMaxSweepPoints = 1000;
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

// The fleet keys a sweep can set, each with its setter; values are in the unit named.
struct FleetKey {
  std::string_view name;
  void (*apply)(scenario::FleetSpec&, double);
};
constexpr FleetKey kFleetKeys[] = {
    {"clients", [](auto& s, double v) { s.clients = static_cast<std::uint64_t>(v); }},
    {"horizon_s", [](auto& s, double v) { s.horizon = Seconds(v); }},
    {"timeout_s", [](auto& s, double v) { s.timeout = Seconds(v); }},
    {"arrivals.rate",
     [](auto& s, double v) {
       if (s.workload.rate.empty()) s.workload.rate.push_back({});
       for (auto& step : s.workload.rate) step.value = v;
     }},
    {"arrivals.think_s", [](auto& s, double v) { s.workload.think = Seconds(v); }},
    {"provider.concurrency",
     [](auto& s, double v) { s.provider.concurrency = static_cast<int>(v); }},
    {"provider.rate", [](auto& s, double v) { s.provider.rate = v; }},
    {"provider.burst", [](auto& s, double v) { s.provider.burst = std::max(1.0, v); }},
    {"provider.queue", [](auto& s, double v) { s.provider.queue = static_cast<int>(v); }},
    {"provider.service_ms", [](auto& s, double v) { s.provider.service_mean = Seconds(v / 1000); }},
    {"brownout.capacity",
     [](auto& s, double v) {
       for (auto& brownout : s.provider.brownouts) brownout.capacity = std::clamp(v, 0.0, 1.0);
     }},
};

// "policy.backoff.base_ms" = v, through the policy's own JSON form and strict loader.
std::expected<ref::RetryPolicy, std::string> SetPolicyKey(const ref::RetryPolicy& policy,
                                                          std::string_view key, double value) {
  std::string pointer = "/" + std::string(key.substr(kPolicyPrefix.size()));
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  nlohmann::json json = ref::PolicyToJson(policy);
  const bool integral = value == std::floor(value) && std::abs(value) < 9e15;
  json[nlohmann::json::json_pointer(pointer)] =
      integral ? nlohmann::json(static_cast<std::int64_t>(value)) : nlohmann::json(value);
  auto changed = ref::PolicyFromJson(json);
  if (!changed) {
    return std::unexpected(
        fmt::format("--sweep {}={}: {}", key, value, changed.error().ToString()));
  }
  return *changed;
}

std::expected<void, std::string> ApplyFleetKey(scenario::FleetSpec& spec, std::string_view key,
                                               double value) {
  for (const FleetKey& known : kFleetKeys) {
    if (known.name == key) {
      known.apply(spec, value);
      return {};
    }
  }
  return std::unexpected(fmt::format("unknown sweep key '{}'", key));
}

std::vector<double> SweepValues(const std::optional<Sweep>& sweep) {
  if (!sweep) return {std::nan("")};
  std::vector<double> values;
  for (std::size_t i = 0; i < kMaxSweepPoints; ++i) {
    const double value = sweep->from + static_cast<double>(i) * sweep->step;
    if (value > sweep->to + 1e-9 * std::abs(sweep->step)) break;
    values.push_back(value);
  }
  return values;
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

// One job: the policy and the spec with the sweep value applied.
std::expected<PolicyMeasures, std::string> RunJob(const ExperimentInput& input,
                                                  const NamedPolicy& policy, double value,
                                                  const ProgressFn& progress) {
  scenario::FleetSpec spec = *input.scenario.fleet;
  NamedPolicy swept = policy;
  if (input.sweep && input.sweep->key.starts_with(kPolicyPrefix)) {
    auto changed = SetPolicyKey(policy.policy, input.sweep->key, value);
    if (!changed) return std::unexpected(changed.error());
    swept.policy = std::move(*changed);
  } else if (input.sweep) {
    if (auto applied = ApplyFleetKey(spec, input.sweep->key, value); !applied) {
      return std::unexpected(applied.error());
    }
  }
  const scenario::Chaos* chaos = input.scenario.chaos ? &*input.scenario.chaos : nullptr;
  const scenario::RateLimit* rate_limit =
      input.scenario.rate_limit ? &*input.scenario.rate_limit : nullptr;
  return Simulate(RunInput{&spec, chaos, &swept, input.seed, progress, rate_limit});
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
  const bool known =
      sweep.key.starts_with(kPolicyPrefix) ||
      std::ranges::any_of(kFleetKeys, [&](const FleetKey& k) { return k.name == sweep.key; });
  if (!known) {
    return std::unexpected(
        fmt::format("--sweep: unknown key '{}'; known: {}, policy.<path> (e.g. "
                    "policy.max_attempts)",
                    sweep.key, fmt::join(SweepKeys(), ", ")));
  }
  sweep.from = *from;
  sweep.to = *to;
  sweep.step = *step;
  return sweep;
}

std::expected<Experiment, std::string> RunExperiment(const ExperimentInput& input) {
  if (!input.scenario.fleet) {
    return std::unexpected(
        fmt::format("{}: has no 'fleet' section to simulate", input.scenario.source));
  }
  auto policies = ResolveAll(input);
  if (!policies) return std::unexpected(policies.error());
  Experiment experiment{input.scenario.name, input.scenario.source, input.seed, input.sweep, 0, {}};
  const std::vector<double> values = SweepValues(input.sweep);
  experiment.total_jobs = values.size() * policies->size();
  std::vector<std::size_t> mine;
  for (std::size_t job = 0; job < experiment.total_jobs; ++job) {
    if (static_cast<int>(job % static_cast<std::size_t>(input.shard_count)) ==
        input.shard_index - 1) {
      mine.push_back(job);
    }
  }
  for (std::size_t done = 0; done < mine.size(); ++done) {
    const std::size_t job = mine[done];
    const double value = values[job / policies->size()];
    ProgressFn progress;
    if (input.progress) progress = [&](double f) { input.progress(done, mine.size(), f); };
    auto measures = RunJob(input, (*policies)[job % policies->size()], value, progress);
    if (!measures) return std::unexpected(measures.error());
    std::optional<double> sweep_value;
    if (input.sweep) sweep_value = value;
    experiment.results.push_back({job, sweep_value, std::move(*measures)});
  }
  return experiment;
}

std::expected<Experiment, std::string> MergeShards(const std::vector<Experiment>& shards) {
  if (shards.empty()) return std::unexpected("nothing to merge");
  Experiment merged = shards.front();
  merged.results.clear();
  for (const Experiment& shard : shards) {
    if (shard.scenario != merged.scenario || shard.seed != merged.seed ||
        shard.total_jobs != merged.total_jobs) {
      return std::unexpected(fmt::format(
          "shards of different experiments: '{}' seed {} ({} jobs) and '{}' seed {} ({} jobs)",
          merged.scenario, merged.seed, merged.total_jobs, shard.scenario, shard.seed,
          shard.total_jobs));
    }
    merged.results.insert(merged.results.end(), shard.results.begin(), shard.results.end());
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
