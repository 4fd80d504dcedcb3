#include "harness/cli/shard_option.h"

#include <fmt/format.h>

#include <cstdlib>

namespace faultline::cli {

void AddShardOptions(CLI::App& command, std::string& shard, int& count, std::string_view units) {
  command.add_option(
      "--shard", shard,
      fmt::format(
          "I/N: this CI job's share of the {0} (a {1}'s shard is a stable hash of its name: "
          "adding {0} moves no other), or auto: read from the environment: "
          "FAULTLINE_SHARD_INDEX and FAULTLINE_SHARD_TOTAL (1-based, e.g. a GitHub "
          "Actions matrix), GitLab's CI_NODE_INDEX and CI_NODE_TOTAL (parallel:), or a "
          "Kubernetes Indexed Job's JOB_COMPLETION_INDEX (0-based) with --shard-count "
          "or FAULTLINE_SHARD_TOTAL (docs/ci/)",
          units, units == "jobs" ? "job" : "scenario"));
  command
      .add_option("--shard-count", count,
                  "N for --shard auto when the environment gives only an index (a Kubernetes "
                  "Indexed Job: its completions)")
      ->check(CLI::Range(1, 1'000'000));
}

harness::ShardEnvironment ReadShardEnvironment() {
  harness::ShardEnvironment env;
  for (const std::string_view name : harness::kShardVariables) {
    if (const char* value = std::getenv(std::string(name).c_str()); value != nullptr) {
      env.emplace(name, value);
    }
  }
  return env;
}

std::expected<std::optional<harness::Shard>, std::string> ShardOption(const std::string& shard,
                                                                      int count) {
  // The environment only matters to auto; reading it for I/N would be harmless but pointless.
  const harness::ShardEnvironment env =
      shard == "auto" ? ReadShardEnvironment() : harness::ShardEnvironment{};
  return harness::ResolveShard(shard, count > 0 ? std::optional<int>(count) : std::nullopt, env);
}

}  // namespace faultline::cli
