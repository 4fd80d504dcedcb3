// A scenario's fleet section and a --sweep value, as faultline simulate reads them: any text gets
// an answer and never an exception; whatever the loader accepts lies within the ranges of
// scenarios/fleet_bounds.h; a sweep's values are checked against the same ranges; and a run that
// passes the (tight) bounds of run_cost.h finishes and holds every job it claims.
//
// Input: the scenario's YAML, then optionally a line "%%" and the --sweep text. Policies are
// only the built-in profiles (a policy file name would have the target read files).
#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "fleet/experiment.h"
#include "fleet/profiles.h"
#include "fuzz/fuzz_support.h"
#include "scenarios/fleet_bounds.h"
#include "scenarios/loader.h"

namespace faultline::fleet::fuzz {
namespace {

using ref::fuzz::Fail;

constexpr std::string_view kSweepMark = "\n%%\n";

// Bounds that keep one input to a few milliseconds.
RunBounds Tight() { return {.max_events = 5e4, .max_series_bytes = 4e6, .max_sweep_points = 8}; }

bool OnlyProfiles(const scenario::FleetSpec& spec) {
  return std::ranges::all_of(spec.policies, [](const scenario::Located& name) {
    return std::ranges::any_of(BuiltinProfiles(),
                               [&](const Profile& profile) { return profile.name == name.text; });
  });
}

void Check(std::string_view text, std::string_view sweep_text) {
  auto scenario = scenario::ParseScenario(text, "fuzz.yaml");
  if (!scenario || !scenario->fleet) return;
  if (auto error = scenario::CheckFleetSpec(*scenario->fleet)) {
    Fail("what the loader accepts is within the ranges", std::string(text), *error);
  }
  if (!OnlyProfiles(*scenario->fleet)) return;
  ExperimentInput input;
  input.scenario = std::move(*scenario);
  input.bounds = Tight();
  if (!sweep_text.empty()) {
    auto sweep = ParseSweep(sweep_text);
    if (!sweep) return;
    input.sweep = std::move(*sweep);
  }
  auto experiment = RunExperiment(input);
  if (experiment && experiment->results.size() != experiment->total_jobs) {
    Fail("an experiment holds every job it claims", std::to_string(experiment->total_jobs),
         std::to_string(experiment->results.size()));
  }
}

}  // namespace
}  // namespace faultline::fleet::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline::fleet::fuzz;
  const std::string_view input = faultline::ref::fuzz::AsText(data, size);
  const std::size_t mark = input.find(kSweepMark);
  const std::string_view text = input.substr(0, mark);
  const std::string_view sweep =
      mark == std::string_view::npos ? std::string_view() : input.substr(mark + kSweepMark.size());
  try {
    Check(text, sweep);
  } catch (const std::exception& error) {
    Fail("no exception escapes loading, checking or running", std::string(input), error.what());
  }
  return 0;
}
