// Shards for CI matrices and clusters: `--shard I/N`, `--shard auto` (the index and count read
// from a CI or cluster engine's environment), and which unit of work a shard keeps.
//
// A shard keeps a unit by a stable hash of its name (hashing/shard_bucket.h), never by position:
// adding a scenario to the catalogue moves no other one between shards, so a shard's history (its
// timings, its flaky runs) stays its own. `faultline run` shards whole scenarios: every
// repetition and world of a scenario lands in one shard, because thresholds and latency
// percentiles aggregate over all of them (judge/thresholds.h) and must be judged whole.
//
// The environment is passed in (a map the CLI fills), never read here, so auto is a pure
// function that tests drive with any engine's variables.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::harness {

struct Shard {
  int index = 1;  // 1-based
  int count = 1;
};

// "I/N" with 1 <= I <= N.
std::expected<Shard, std::string> ParseShard(std::string_view text);
// "I/N", as results record it (RunResult::shard).
std::string ShardText(const Shard& shard);

// The variables `--shard auto` reads. Ours (1-based, as --shard I/N; a GitHub Actions matrix
// sets them, any other engine can): FAULTLINE_SHARD_INDEX and FAULTLINE_SHARD_TOTAL. GitLab's
// `parallel:` (1-based): CI_NODE_INDEX and CI_NODE_TOTAL. A Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX (0-based), whose count the Job does not export: --shard-count N or
// FAULTLINE_SHARD_TOTAL gives it.
inline constexpr std::array<std::string_view, 5> kShardVariables{
    "FAULTLINE_SHARD_INDEX", "FAULTLINE_SHARD_TOTAL", "CI_NODE_INDEX", "CI_NODE_TOTAL",
    "JOB_COMPLETION_INDEX"};

// Variable name -> value, for the variables that are set (an empty value is set, and an error).
using ShardEnvironment = std::map<std::string, std::string, std::less<>>;

// The shard `--shard auto` means in `env`, with `count` from --shard-count when given. Every
// engine found must say the same shard, and a count given must match the engine's; an error
// names the variables and values (nothing found, an index without a count, a value that is not
// a whole number, an index out of range, engines that disagree). A GitLab job without
// `parallel:` (CI_NODE_TOTAL=1, no CI_NODE_INDEX) is 1/1 when no other engine is found.
std::expected<Shard, std::string> ShardFromEnvironment(const ShardEnvironment& env,
                                                       std::optional<int> count);

// What --shard and --shard-count ask for: "" no shard (nullopt), "auto" the environment's, else
// I/N. --shard-count belongs to auto alone (with I/N the count is N).
std::expected<std::optional<Shard>, std::string> ResolveShard(std::string_view text,
                                                              std::optional<int> count,
                                                              const ShardEnvironment& env);

// Whether `shard` keeps the unit of work named `key` (hashing::ShardBucket).
bool InShard(std::string_view key, const Shard& shard);

}  // namespace faultline::harness
