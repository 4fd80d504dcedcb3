// `--shard` and `--shard-count`, shared by `faultline run` and `faultline simulate`: the flags,
// their help (which names every environment variable `--shard auto` reads), and the shard they
// ask for. The environment is read here, at the command line's edge, and handed to the pure
// harness::ResolveShard (harness/shard.h), which the tests drive with any engine's variables.
#pragma once

#include <CLI/CLI.hpp>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "harness/shard.h"

namespace faultline::cli {

// Registers --shard (into `shard`) and --shard-count (into `count`, 0 when not given); `units`
// names what is sharded ("scenarios", "jobs").
void AddShardOptions(CLI::App& command, std::string& shard, int& count, std::string_view units);

// The variables of harness::kShardVariables that are set in this process's environment.
harness::ShardEnvironment ReadShardEnvironment();

// The shard --shard and --shard-count ask for in this process's environment (nullopt: none);
// errors are usage errors' messages.
std::expected<std::optional<harness::Shard>, std::string> ShardOption(const std::string& shard,
                                                                      int count);

}  // namespace faultline::cli
