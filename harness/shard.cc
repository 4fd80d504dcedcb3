#include "harness/shard.h"

#include <fmt/format.h>

#include <charconv>
#include <vector>

#include "hashing/shard_bucket.h"

namespace faultline::harness {
namespace {

// The shard one engine's variables say, and those variables as an error quotes them.
struct Found {
  Shard shard;
  std::string source;
};

// A count and where it came from (--shard-count, FAULTLINE_SHARD_TOTAL).
struct Count {
  int value = 0;
  std::string source;
};

std::optional<int> ParseWhole(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// `name`'s value as a whole number >= `least`; nullopt when unset.
std::expected<std::optional<int>, std::string> ReadWhole(const ShardEnvironment& env,
                                                         std::string_view name, int least) {
  const auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  const std::optional<int> value = ParseWhole(it->second);
  if (!value || *value < least) {
    return std::unexpected(
        fmt::format("{}='{}' is not a whole number >= {}", name, it->second, least));
  }
  return value;
}

std::string Named(std::string_view name, int value) { return fmt::format("{}={}", name, value); }

// The count for engines that export none: --shard-count and FAULTLINE_SHARD_TOTAL, which must
// agree when both are given.
std::expected<std::optional<Count>, std::string> GivenCount(const ShardEnvironment& env,
                                                            std::optional<int> flag) {
  auto total = ReadWhole(env, "FAULTLINE_SHARD_TOTAL", 1);
  if (!total) return std::unexpected(total.error());
  if (flag && *flag < 1) return std::unexpected(fmt::format("--shard-count {} is not >= 1", *flag));
  if (flag && *total && *flag != **total) {
    return std::unexpected(
        fmt::format("--shard-count {} disagrees with FAULTLINE_SHARD_TOTAL={}", *flag, **total));
  }
  if (flag) return Count{*flag, fmt::format("--shard-count {}", *flag)};
  if (*total) return Count{**total, Named("FAULTLINE_SHARD_TOTAL", **total)};
  return std::nullopt;
}

// An index read from `name` (1-based, or 0-based for Kubernetes) within `count`.
std::expected<Found, std::string> InRange(std::string_view name, int index, int first,
                                          const Count& count) {
  const int last = count.value - 1 + first;
  if (index > last) {
    return std::unexpected(
        fmt::format("{}={} is outside {}..{} ({})", name, index, first, last, count.source));
  }
  return Found{{index - first + 1, count.value}, Named(name, index) + ", " + count.source};
}

// An engine that exports an index and no count: ours without FAULTLINE_SHARD_TOTAL (1-based), a
// Kubernetes Indexed Job's JOB_COMPLETION_INDEX (0-based: `first` is 0), whose count is the
// Job's completions. The count is `given` (--shard-count, FAULTLINE_SHARD_TOTAL).
std::expected<std::optional<Found>, std::string> FromIndex(const ShardEnvironment& env,
                                                           std::string_view name, int first,
                                                           const std::optional<Count>& given) {
  auto index = ReadWhole(env, name, first);
  if (!index) return std::unexpected(index.error());
  if (!*index) return std::nullopt;
  if (!given) {
    return std::unexpected(
        fmt::format("{}={} needs a count: give --shard-count N or set FAULTLINE_SHARD_TOTAL{}",
                    name, **index, first == 0 ? " (a Kubernetes Indexed Job's completions)" : ""));
  }
  return InRange(name, **index, first, *given);
}

// GitLab's `parallel:`: CI_NODE_INDEX (1-based) and CI_NODE_TOTAL, which GitLab sets together.
std::expected<std::optional<Found>, std::string> FromGitLab(const ShardEnvironment& env) {
  auto index = ReadWhole(env, "CI_NODE_INDEX", 1);
  auto total = ReadWhole(env, "CI_NODE_TOTAL", 1);
  if (!index) return std::unexpected(index.error());
  if (!total) return std::unexpected(total.error());
  if (!*index) return std::nullopt;
  if (!*total) {
    return std::unexpected(fmt::format("CI_NODE_INDEX={} without CI_NODE_TOTAL", **index));
  }
  return InRange("CI_NODE_INDEX", **index, 1, Count{**total, Named("CI_NODE_TOTAL", **total)});
}

constexpr std::string_view kNothingFound =
    "found no shard in the environment: set FAULTLINE_SHARD_INDEX and "
    "FAULTLINE_SHARD_TOTAL (1-based, e.g. from a GitHub Actions matrix), run it in a GitLab job "
    "with `parallel:` (CI_NODE_INDEX, CI_NODE_TOTAL) or a Kubernetes Indexed Job "
    "(JOB_COMPLETION_INDEX, with --shard-count N or FAULTLINE_SHARD_TOTAL), or give --shard I/N";

// When no engine gave an index: a GitLab job without `parallel:` is the whole run; anything else
// is an error saying what is missing.
std::expected<Shard, std::string> WithoutIndex(const ShardEnvironment& env,
                                               const std::optional<Count>& given) {
  auto total = ReadWhole(env, "CI_NODE_TOTAL", 1);
  if (!total) return std::unexpected(total.error());
  if (*total && **total == 1 && (!given || given->value == 1)) return Shard{1, 1};
  if (*total) {
    return std::unexpected(fmt::format("CI_NODE_TOTAL={} without CI_NODE_INDEX", **total));
  }
  if (given) {
    return std::unexpected(
        fmt::format("{} gives a count but no variable gives this shard's index; {}", given->source,
                    kNothingFound.substr(kNothingFound.find("set "))));
  }
  return std::unexpected(std::string(kNothingFound));
}

}  // namespace

std::expected<Shard, std::string> ParseShard(std::string_view text) {
  const std::size_t slash = text.find('/');
  Shard shard;
  const auto index =
      slash == std::string_view::npos ? std::nullopt : ParseWhole(text.substr(0, slash));
  const auto count =
      slash == std::string_view::npos ? std::nullopt : ParseWhole(text.substr(slash + 1));
  if (!index || !count || *count < 1 || *index < 1 || *index > *count) {
    return std::unexpected(
        fmt::format("bad shard '{}': expected I/N with 1 <= I <= N, or auto", text));
  }
  shard.index = *index;
  shard.count = *count;
  return shard;
}

std::string ShardText(const Shard& shard) { return fmt::format("{}/{}", shard.index, shard.count); }

std::expected<Shard, std::string> ShardFromEnvironment(const ShardEnvironment& env,
                                                       std::optional<int> count) {
  auto given = GivenCount(env, count);
  if (!given) return std::unexpected(given.error());
  std::vector<Found> found;
  for (auto engine : {FromIndex(env, "FAULTLINE_SHARD_INDEX", 1, *given), FromGitLab(env),
                      FromIndex(env, "JOB_COMPLETION_INDEX", 0, *given)}) {
    if (!engine) return std::unexpected(engine.error());
    if (*engine) found.push_back(std::move(**engine));
  }
  if (found.empty()) return WithoutIndex(env, *given);
  for (const Found& other : found) {
    if (other.shard.index != found[0].shard.index || other.shard.count != found[0].shard.count) {
      return std::unexpected(fmt::format(
          "the environment names two shards: {} from {}, {} from {}; unset one, or give --shard "
          "I/N",
          ShardText(found[0].shard), found[0].source, ShardText(other.shard), other.source));
    }
    if (*given && other.shard.count != (*given)->value) {
      return std::unexpected(fmt::format("{} disagrees with {}", (*given)->source, other.source));
    }
  }
  return found[0].shard;
}

std::expected<std::optional<Shard>, std::string> ResolveShard(std::string_view text,
                                                              std::optional<int> count,
                                                              const ShardEnvironment& env) {
  if (count && text != "auto") {
    return std::unexpected(
        "--shard-count gives the count to --shard auto (a Kubernetes Indexed Job's completions); "
        "with --shard I/N the count is N");
  }
  if (text.empty()) return std::nullopt;
  if (text == "auto") {
    auto shard = ShardFromEnvironment(env, count);
    if (!shard) return std::unexpected("--shard auto: " + shard.error());
    return *shard;
  }
  auto shard = ParseShard(text);
  if (!shard) return std::unexpected(shard.error());
  return *shard;
}

bool InShard(std::string_view key, const Shard& shard) {
  return hashing::ShardBucket(key, shard.count) == shard.index;
}

}  // namespace faultline::harness
