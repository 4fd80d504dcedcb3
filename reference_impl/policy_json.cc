#include "reference_impl/policy_json.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "reference_impl/presets.h"

namespace faultline::ref {
namespace {

using Json = nlohmann::json;
using std::chrono::milliseconds;

// "extends" is resolved before the keys are read (presets.h); it is listed for did-you-mean.
constexpr std::array<std::string_view, 16> kTopKeys{
    "extends",      "mode",           "max_attempts",    "max_retries", "retryable_classes",
    "retry_phases", "stream_retries", "stream_retry_on", "statuses",    "should_retry_header",
    "backoff",      "retry_after",    "min_attempt_ms",  "timeouts",    "budget",
    "routing"};
constexpr std::array<std::string_view, 6> kBackoffKeys{"strategy",   "base_ms", "cap_ms",
                                                       "multiplier", "jitter",  "jitter_mode"};
constexpr std::array<std::string_view, 10> kRetryAfterKeys{
    "honor",    "mode",    "parse", "cap_ms",  "jitter",
    "over_cap", "missing", "zero",  "sources", "statuses"};
constexpr std::array<std::string_view, 2> kStatusRuleKeys{"retry", "never"};
constexpr std::array<std::string_view, 5> kTimeoutKeys{
    "connect_ms", "response_headers_ms", "idle_ms", "heartbeats_reset_idle", "total_ms"};
constexpr std::array<std::string_view, 6> kRoutingKeys{
    "failover", "breaker", "route_attempts", "avoid_failed_group", "failover_on", "sticky"};
constexpr std::array<std::string_view, 1> kStickyKeys{"reset_ms"};
constexpr std::array<std::string_view, 3> kBreakerKeys{"threshold", "cooldown_ms",
                                                       "half_open_probes"};
constexpr std::array<std::string_view, 5> kBudgetKeys{"capacity", "retry_cost", "success_refund",
                                                      "failure_cost", "retry_threshold"};

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Whether `candidate` is a plausible intended spelling of `word`: a few edits away, or one
// contains the other ("cap" for "cap_ms", "refund" for "success_refund").
bool Plausible(std::string_view word, std::string_view candidate, std::size_t distance) {
  if (distance <= std::max<std::size_t>(2, word.size() / 3)) return true;
  return word.size() >= 3 && (candidate.find(word) != std::string_view::npos ||
                              word.find(candidate) != std::string_view::npos);
}

std::string Describe(const Json& value) {
  const std::string text = value.dump();
  const std::string shown = text.size() > 40 ? text.substr(0, 37) + "..." : text;
  return fmt::format("{} {}", value.type_name(), shown);
}

std::string Join(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

// Reads fields into a policy, keeping the first error (later reads become no-ops), like a
// leveldb Status threaded through the steps.
class Reader {
 public:
  bool ok() const { return !error_; }
  std::optional<PolicyError> TakeError() { return std::move(error_); }

  void Fail(std::string path, std::string message) {
    if (!error_) error_ = PolicyError{std::move(path), std::move(message)};
  }

  // `json` must be an object whose keys are all in `known`.
  bool Object(const Json& json, std::string_view path, std::span<const std::string_view> known) {
    if (!ok()) return false;
    if (!json.is_object()) {
      Fail(std::string(path), fmt::format("expected an object, got {}", Describe(json)));
      return false;
    }
    for (const auto& [key, value] : json.items()) {
      if (std::ranges::find(known, key) == known.end()) {
        Fail(Join(path, key), fmt::format("unknown key '{}'{}", key, DidYouMean(key, known)));
        return false;
      }
    }
    return true;
  }

  void Integer(const Json& json, std::string_view path, std::int64_t& out) {
    if (!ok()) return;
    if (!json.is_number_integer()) {
      Fail(std::string(path), fmt::format("expected an integer, got {}", Describe(json)));
      return;
    }
    out = json.get<std::int64_t>();
  }

  void Ms(const Json& json, std::string_view path, milliseconds& out) {
    std::int64_t value = out.count();
    Integer(json, path, value);
    out = milliseconds(value);
  }

  void OptionalMs(const Json& json, std::string_view path, std::optional<milliseconds>& out) {
    if (json.is_null()) {
      out.reset();
      return;
    }
    milliseconds value = out.value_or(milliseconds(0));
    Ms(json, path, value);
    out = value;
  }

  void Number(const Json& json, std::string_view path, double& out) {
    if (!ok()) return;
    if (!json.is_number()) {
      Fail(std::string(path), fmt::format("expected a number, got {}", Describe(json)));
      return;
    }
    out = json.get<double>();
  }

  void Bool(const Json& json, std::string_view path, bool& out) {
    if (!ok()) return;
    if (!json.is_boolean()) {
      Fail(std::string(path), fmt::format("expected true or false, got {}", Describe(json)));
      return;
    }
    out = json.get<bool>();
  }

  // A string from a fixed vocabulary, parsed by `parse`.
  template <typename T, typename Parse>
  void Name(const Json& json, std::string_view path, std::span<const std::string_view> names,
            Parse parse, T& out) {
    if (!ok()) return;
    if (!json.is_string()) {
      Fail(std::string(path),
           fmt::format("expected one of {}, got {}", ListNames(names), Describe(json)));
      return;
    }
    const std::string& text = json.get_ref<const std::string&>();
    if (auto value = parse(text)) {
      out = *value;
      return;
    }
    Fail(std::string(path), fmt::format("unknown value '{}'{} (expected one of {})", text,
                                        DidYouMean(text, names), ListNames(names)));
  }

 private:
  static std::string ListNames(std::span<const std::string_view> names) {
    return fmt::format("'{}'", fmt::join(names, "', '"));
  }

  std::optional<PolicyError> error_;
};

// Calls `read(value, path)` for `key` when `object` has it.
template <typename Read>
void Field(const Json& object, std::string_view parent, std::string_view key, Read read) {
  const auto found = object.find(std::string(key));
  if (found != object.end()) read(*found, Join(parent, key));
}

// The names a policy may write come from each vocabulary's own table (NamesOf, name_table.h),
// and the phases and hint sources it may list from AllPhases and AllHintSources (policy.h), each
// by its ToString.
template <typename T>
std::vector<std::string_view> NamesOfValues(const std::vector<T>& values) {
  std::vector<std::string_view> names;
  for (const T value : values) names.push_back(ToString(value));
  return names;
}
const std::vector<std::string_view>& PolicyPhaseNames() {
  static const std::vector<std::string_view> names = NamesOfValues(AllPhases());
  return names;
}
const std::vector<std::string_view>& PolicySourceNames() {
  static const std::vector<std::string_view> names = NamesOfValues(AllHintSources());
  return names;
}

std::optional<Phase> ParsePhase(std::string_view text) {
  for (const Phase phase : AllPhases()) {
    if (ToString(phase) == text) return phase;
  }
  return std::nullopt;
}

std::optional<DelaySource> ParseHintSource(std::string_view text) {
  const auto& names = PolicySourceNames();
  if (std::ranges::find(names, text) == names.end()) return std::nullopt;
  return ParseDelaySource(text);
}

// An array of names from a vocabulary, each parsed by `parse`; duplicates are an error.
template <typename T, typename Parse>
void ReadNames(Reader& reader, const Json& json, std::string_view path,
               std::span<const std::string_view> names, Parse parse, std::vector<T>& out) {
  if (!json.is_array()) {
    reader.Fail(std::string(path), fmt::format("expected an array, got {}", Describe(json)));
    return;
  }
  std::vector<T> values;
  for (std::size_t i = 0; i < json.size() && reader.ok(); ++i) {
    T value{};
    const std::string item_path = fmt::format("{}[{}]", path, i);
    reader.Name(json[i], item_path, names, parse, value);
    if (reader.ok() && std::ranges::find(values, value) != values.end()) {
      reader.Fail(item_path, fmt::format("{} is listed twice", json[i].dump()));
    }
    values.push_back(value);
  }
  out = std::move(values);
}

// A status list: integers 100..599 and "4xx"-style classes.
void ReadStatusSet(Reader& reader, const Json& json, std::string_view path, StatusSet& out) {
  if (!json.is_array()) {
    reader.Fail(
        std::string(path),
        fmt::format("expected an array of statuses (e.g. [429, \"5xx\"]), got {}", Describe(json)));
    return;
  }
  StatusSet set;
  for (std::size_t i = 0; i < json.size() && reader.ok(); ++i) {
    const Json& item = json[i];
    const std::string item_path = fmt::format("{}[{}]", path, i);
    if (item.is_number_integer() && item.get<std::int64_t>() >= 100 &&
        item.get<std::int64_t>() <= 599) {
      set.codes.push_back(item.get<int>());
      continue;
    }
    if (item.is_string()) {
      const std::string& text = item.get_ref<const std::string&>();
      if (text.size() == 3 && text[0] >= '1' && text[0] <= '5' && text.substr(1) == "xx") {
        set.classes.push_back(text[0] - '0');
        continue;
      }
    }
    reader.Fail(item_path, fmt::format("expected an HTTP status from 100 to 599 or a class such "
                                       "as \"5xx\", got {}",
                                       Describe(item)));
  }
  out = std::move(set);
}
// Every docs/failure-taxonomy.md class name, from the taxonomy itself (kUnknown is the last
// enumerator).
std::span<const std::string_view> ClassNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> all;
    for (int i = 0; i <= static_cast<int>(FailureClass::kUnknown); ++i) {
      all.push_back(ToString(static_cast<FailureClass>(i)));
    }
    return all;
  }();
  return names;
}

void ReadMaxAttempts(Reader& reader, const Json& json, std::string_view path,
                     std::optional<int>& out) {
  if (json.is_string() && json.get_ref<const std::string&>() == "unbounded") {
    out.reset();
    return;
  }
  if (!json.is_number_integer()) {
    reader.Fail(std::string(path), fmt::format("expected an integer from 1 to {} or \"unbounded\", "
                                               "got {}",
                                               kMaxAttemptsLimit, Describe(json)));
    return;
  }
  const std::int64_t value = json.get<std::int64_t>();
  if (value < 1 || value > kMaxAttemptsLimit) {
    reader.Fail(std::string(path),
                fmt::format("must be from 1 to {}, got {}", kMaxAttemptsLimit, value));
    return;
  }
  out = static_cast<int>(value);
}

void ReadClasses(Reader& reader, const Json& json, std::string_view path,
                 std::vector<FailureClass>& out) {
  if (!json.is_array()) {
    reader.Fail(std::string(path),
                fmt::format("expected an array of class names, got {}", Describe(json)));
    return;
  }
  std::vector<FailureClass> classes;
  for (std::size_t i = 0; i < json.size() && reader.ok(); ++i) {
    FailureClass value = FailureClass::kUnknown;
    reader.Name(json[i], fmt::format("{}[{}]", path, i), ClassNames(), ParseFailureClass, value);
    classes.push_back(value);
  }
  out = std::move(classes);
}

void ReadBackoff(Reader& reader, const Json& json, std::string_view path, BackoffConfig& out) {
  if (!reader.Object(json, path, kBackoffKeys)) return;
  Field(json, path, "strategy", [&](const Json& v, const std::string& p) {
    reader.Name(v, p, NamesOf(kBackoffStrategyNames), ParseBackoffStrategy, out.strategy);
  });
  Field(json, path, "base_ms",
        [&](const Json& v, const std::string& p) { reader.Ms(v, p, out.base); });
  Field(json, path, "cap_ms",
        [&](const Json& v, const std::string& p) { reader.Ms(v, p, out.cap); });
  Field(json, path, "multiplier",
        [&](const Json& v, const std::string& p) { reader.Number(v, p, out.multiplier); });
  Field(json, path, "jitter",
        [&](const Json& v, const std::string& p) { reader.Number(v, p, out.jitter); });
  Field(json, path, "jitter_mode", [&](const Json& v, const std::string& p) {
    reader.Name(v, p, NamesOf(kJitterModeNames), ParseJitterMode, out.jitter_mode);
  });
}

void ReadRetryAfter(Reader& reader, const Json& json, std::string_view path,
                    RetryAfterConfig& out) {
  if (!reader.Object(json, path, kRetryAfterKeys)) return;
  Field(json, path, "honor",
        [&](const Json& v, const std::string& p) { reader.Bool(v, p, out.honor); });
  Field(json, path, "mode", [&](const Json& v, const std::string& p) {
    reader.Name(v, p, NamesOf(kHintModeNames), ParseHintMode, out.mode);
  });
  Field(json, path, "parse", [&](const Json& v, const std::string& p) {
    reader.Name(v, p, NamesOf(kRetryAfterParseNames), ParseRetryAfterParse, out.parse);
  });
  Field(json, path, "cap_ms",
        [&](const Json& v, const std::string& p) { reader.OptionalMs(v, p, out.cap); });
  Field(json, path, "jitter",
        [&](const Json& v, const std::string& p) { reader.Number(v, p, out.jitter); });
  Field(json, path, "over_cap", [&](const Json& v, const std::string& p) {
    reader.Name(v, p, NamesOf(kOverCapModeNames), ParseOverCapMode, out.over_cap);
  });
  Field(json, path, "missing", [&](const Json& v, const std::string& p) {
    reader.Name(v, p, NamesOf(kOverCapModeNames), ParseOverCapMode, out.missing);
  });
  Field(json, path, "zero", [&](const Json& v, const std::string& p) {
    reader.Name(v, p, NamesOf(kZeroHintNames), ParseZeroHint, out.zero);
  });
  Field(json, path, "sources", [&](const Json& v, const std::string& p) {
    ReadNames(reader, v, p, PolicySourceNames(), ParseHintSource, out.sources);
  });
  Field(json, path, "statuses", [&](const Json& v, const std::string& p) {
    if (v.is_null()) {
      out.statuses.reset();
      return;
    }
    StatusSet set;
    ReadStatusSet(reader, v, p, set);
    if (!set.classes.empty()) {
      reader.Fail(p, "lists single statuses only (e.g. [429, 503])");
      return;
    }
    out.statuses = std::move(set.codes);
  });
}

void ReadStatusRules(Reader& reader, const Json& json, std::string_view path, StatusRules& out) {
  if (!reader.Object(json, path, kStatusRuleKeys)) return;
  Field(json, path, "retry",
        [&](const Json& v, const std::string& p) { ReadStatusSet(reader, v, p, out.retry); });
  Field(json, path, "never",
        [&](const Json& v, const std::string& p) { ReadStatusSet(reader, v, p, out.never); });
}

// max_retries is max_attempts - 1 (null: unbounded); when both are given they must agree.
void ReadMaxRetries(Reader& reader, const Json& json, const Json& top, RetryPolicy& policy) {
  std::optional<int> attempts;
  if (json.is_null()) {
    attempts.reset();
  } else if (json.is_number_integer() && json.get<std::int64_t>() >= 0 &&
             json.get<std::int64_t>() < kMaxAttemptsLimit) {
    attempts = json.get<int>() + 1;
  } else {
    reader.Fail("max_retries", fmt::format("expected an integer from 0 to {} or null, got {}",
                                           kMaxAttemptsLimit - 1, Describe(json)));
    return;
  }
  if (top.contains("max_attempts") && policy.max_attempts != attempts) {
    reader.Fail("max_retries",
                fmt::format("{} disagrees with max_attempts {} (max_retries is max_attempts - 1)",
                            json.dump(), top["max_attempts"].dump()));
    return;
  }
  policy.max_attempts = attempts;
}

void ReadTimeouts(Reader& reader, const Json& json, std::string_view path, TimeoutConfig& out) {
  if (!reader.Object(json, path, kTimeoutKeys)) return;
  const auto optional_ms = [&](std::string_view key, std::optional<milliseconds>& field) {
    Field(json, path, key,
          [&](const Json& v, const std::string& p) { reader.OptionalMs(v, p, field); });
  };
  optional_ms("connect_ms", out.connect);
  optional_ms("response_headers_ms", out.response_headers);
  optional_ms("idle_ms", out.idle);
  optional_ms("total_ms", out.total);
  Field(json, path, "heartbeats_reset_idle",
        [&](const Json& v, const std::string& p) { reader.Bool(v, p, out.heartbeats_reset_idle); });
}

void ReadBudget(Reader& reader, const Json& json, std::string_view path,
                std::optional<BudgetConfig>& out) {
  if (json.is_null()) {
    out.reset();
    return;
  }
  if (!reader.Object(json, path, kBudgetKeys)) return;
  BudgetConfig budget = out.value_or(BudgetConfig{});
  for (auto [key, field] : {std::pair<std::string_view, double*>{"capacity", &budget.capacity},
                            {"retry_cost", &budget.retry_cost},
                            {"success_refund", &budget.success_refund},
                            {"failure_cost", &budget.failure_cost},
                            {"retry_threshold", &budget.retry_threshold}}) {
    Field(json, path, key,
          [&](const Json& v, const std::string& p) { reader.Number(v, p, *field); });
  }
  out = budget;
}

// An object that `null` removes (routing.breaker, routing.sticky): its keys are read over its
// current value, or over the defaults when there is none yet.
template <typename Config, typename ReadKeys>
void OptionalObject(Reader& reader, const Json& json, const std::string& path,
                    std::span<const std::string_view> keys, std::optional<Config>& out,
                    ReadKeys read_keys) {
  if (json.is_null()) {
    out.reset();
    return;
  }
  if (!reader.Object(json, path, keys)) return;
  read_keys(out.emplace(out.value_or(Config{})));
}

void ReadRouting(Reader& reader, const Json& json, std::string_view path, RoutingConfig& out) {
  if (!reader.Object(json, path, kRoutingKeys)) return;
  Field(json, path, "failover",
        [&](const Json& v, const std::string& p) { reader.Bool(v, p, out.failover); });
  Field(json, path, "avoid_failed_group",
        [&](const Json& v, const std::string& p) { reader.Bool(v, p, out.avoid_failed_group); });
  Field(json, path, "failover_on", [&](const Json& v, const std::string& p) {
    reader.Name(v, p, NamesOf(kFailoverRuleNames), ParseFailoverRule, out.failover_on);
  });
  Field(json, path, "route_attempts", [&](const Json& v, const std::string& p) {
    if (v.is_null()) {
      out.route_attempts.reset();
      return;
    }
    std::int64_t number = 0;
    reader.Integer(v, p, number);
    out.route_attempts =
        static_cast<int>(std::clamp<std::int64_t>(number, -1, kMaxAttemptsLimit + 1));
  });
  Field(json, path, "breaker", [&](const Json& v, const std::string& p) {
    OptionalObject(reader, v, p, kBreakerKeys, out.breaker, [&](BreakerConfig& breaker) {
      for (auto [key, field] : {std::pair<std::string_view, int*>{"threshold", &breaker.threshold},
                                {"half_open_probes", &breaker.half_open_probes}}) {
        Field(v, p, key, [&](const Json& value, const std::string& at) {
          std::int64_t number = *field;
          reader.Integer(value, at, number);
          *field = static_cast<int>(std::clamp<std::int64_t>(number, -1, kMaxAttemptsLimit + 1));
        });
      }
      Field(v, p, "cooldown_ms", [&](const Json& value, const std::string& at) {
        reader.Ms(value, at, breaker.cooldown);
      });
    });
  });
  Field(json, path, "sticky", [&](const Json& v, const std::string& p) {
    OptionalObject(reader, v, p, kStickyKeys, out.sticky, [&](StickyConfig& sticky) {
      Field(v, p, "reset_ms",
            [&](const Json& value, const std::string& at) { reader.Ms(value, at, sticky.reset); });
    });
  });
}

void ReadPolicy(Reader& reader, const Json& json, RetryPolicy& policy) {
  if (!reader.Object(json, "", kTopKeys)) return;
  Field(json, "", "mode", [&](const Json& v, const std::string& p) {
    reader.Name(v, p, NamesOf(kRetryModeNames), ParseRetryMode, policy.mode);
  });
  // "always" retries until cancel or deadline unless a budget of attempts is given.
  if (policy.mode == RetryMode::kAlways) policy.max_attempts.reset();
  Field(json, "", "max_attempts", [&](const Json& v, const std::string& p) {
    ReadMaxAttempts(reader, v, p, policy.max_attempts);
  });
  Field(json, "", "max_retries",
        [&](const Json& v, const std::string&) { ReadMaxRetries(reader, v, json, policy); });
  Field(json, "", "retryable_classes", [&](const Json& v, const std::string& p) {
    ReadClasses(reader, v, p, policy.retryable_classes);
  });
  Field(json, "", "retry_phases", [&](const Json& v, const std::string& p) {
    ReadNames(reader, v, p, PolicyPhaseNames(), ParsePhase, policy.retry_phases);
  });
  Field(json, "", "stream_retries", [&](const Json& v, const std::string& p) {
    reader.Name(v, p, NamesOf(kStreamRetriesNames), ParseStreamRetries, policy.stream_retries);
  });
  Field(json, "", "stream_retry_on", [&](const Json& v, const std::string& p) {
    ReadNames(reader, v, p, NamesOf(kStreamFailureNames), ParseStreamFailure,
              policy.stream_retry_on);
  });
  Field(json, "", "statuses", [&](const Json& v, const std::string& p) {
    ReadStatusRules(reader, v, p, policy.statuses);
  });
  Field(json, "", "should_retry_header", [&](const Json& v, const std::string& p) {
    reader.Bool(v, p, policy.should_retry_header);
  });
  Field(json, "", "backoff",
        [&](const Json& v, const std::string& p) { ReadBackoff(reader, v, p, policy.backoff); });
  Field(json, "", "retry_after", [&](const Json& v, const std::string& p) {
    ReadRetryAfter(reader, v, p, policy.retry_after);
  });
  Field(json, "", "min_attempt_ms",
        [&](const Json& v, const std::string& p) { reader.Ms(v, p, policy.min_attempt_time); });
  Field(json, "", "timeouts",
        [&](const Json& v, const std::string& p) { ReadTimeouts(reader, v, p, policy.timeouts); });
  Field(json, "", "budget",
        [&](const Json& v, const std::string& p) { ReadBudget(reader, v, p, policy.budget); });
  Field(json, "", "routing",
        [&](const Json& v, const std::string& p) { ReadRouting(reader, v, p, policy.routing); });
}

Json OptionalMsJson(const std::optional<milliseconds>& value) {
  return value ? Json(value->count()) : Json(nullptr);
}

Json StatusSetJson(const StatusSet& set) {
  Json out = Json::array();
  for (int code : set.codes) out.push_back(code);
  for (int group : set.classes) out.push_back(fmt::format("{}xx", group));
  return out;
}

}  // namespace

std::string DidYouMean(std::string_view word, std::span<const std::string_view> candidates) {
  std::string_view best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::string_view candidate : candidates) {
    const std::size_t distance = EditDistance(word, candidate);
    if (distance < best_distance && Plausible(word, candidate, distance)) {
      best = candidate;
      best_distance = distance;
    }
  }
  if (best.empty()) return {};
  return fmt::format("; did you mean '{}'?", best);
}

std::expected<RetryPolicy, PolicyError> PolicyFromJson(const Json& json) {
  auto resolved = ResolveExtends(json);
  if (!resolved) return std::unexpected(std::move(resolved.error()));
  Reader reader;
  RetryPolicy policy;
  ReadPolicy(reader, *resolved, policy);
  if (auto error = reader.TakeError()) return std::unexpected(std::move(*error));
  if (auto valid = Validate(policy); !valid) return std::unexpected(valid.error());
  return policy;
}

std::expected<RetryPolicy, PolicyError> LoadPolicy(std::string_view json_text) {
  Json json;
  try {
    json = Json::parse(json_text);
  } catch (const Json::parse_error& error) {
    return std::unexpected(PolicyError{"", fmt::format("not valid JSON: {}", error.what())});
  }
  return PolicyFromJson(json);
}

Json PolicyToJson(const RetryPolicy& policy) {
  Json classes = Json::array();
  for (FailureClass value : policy.retryable_classes) classes.push_back(ToString(value));
  const BackoffConfig& backoff = policy.backoff;
  const RetryAfterConfig& retry_after = policy.retry_after;
  const TimeoutConfig& timeouts = policy.timeouts;
  Json phases = Json::array();
  for (Phase phase : policy.retry_phases) phases.push_back(ToString(phase));
  Json sources = Json::array();
  for (DelaySource source : retry_after.sources) sources.push_back(ToString(source));
  Json json;
  json["mode"] = ToString(policy.mode);
  json["max_attempts"] = policy.max_attempts ? Json(*policy.max_attempts) : Json("unbounded");
  json["retryable_classes"] = std::move(classes);
  json["retry_phases"] = std::move(phases);
  json["stream_retries"] = ToString(policy.stream_retries);
  Json stream_retry_on = Json::array();
  for (StreamFailure kind : policy.stream_retry_on) stream_retry_on.push_back(ToString(kind));
  json["stream_retry_on"] = std::move(stream_retry_on);
  json["statuses"] = {{"retry", StatusSetJson(policy.statuses.retry)},
                      {"never", StatusSetJson(policy.statuses.never)}};
  json["should_retry_header"] = policy.should_retry_header;
  json["backoff"] = {{"strategy", ToString(backoff.strategy)},
                     {"base_ms", backoff.base.count()},
                     {"cap_ms", backoff.cap.count()},
                     {"multiplier", backoff.multiplier},
                     {"jitter", backoff.jitter},
                     {"jitter_mode", ToString(backoff.jitter_mode)}};
  json["retry_after"] = {
      {"honor", retry_after.honor},
      {"mode", ToString(retry_after.mode)},
      {"parse", ToString(retry_after.parse)},
      {"cap_ms", OptionalMsJson(retry_after.cap)},
      {"jitter", retry_after.jitter},
      {"over_cap", ToString(retry_after.over_cap)},
      {"missing", ToString(retry_after.missing)},
      {"zero", ToString(retry_after.zero)},
      {"sources", std::move(sources)},
      {"statuses", retry_after.statuses ? Json(*retry_after.statuses) : Json(nullptr)}};
  json["min_attempt_ms"] = policy.min_attempt_time.count();
  json["timeouts"] = {{"connect_ms", OptionalMsJson(timeouts.connect)},
                      {"response_headers_ms", OptionalMsJson(timeouts.response_headers)},
                      {"idle_ms", OptionalMsJson(timeouts.idle)},
                      {"heartbeats_reset_idle", timeouts.heartbeats_reset_idle},
                      {"total_ms", OptionalMsJson(timeouts.total)}};
  json["budget"] = policy.budget ? Json{{"capacity", policy.budget->capacity},
                                        {"retry_cost", policy.budget->retry_cost},
                                        {"success_refund", policy.budget->success_refund},
                                        {"failure_cost", policy.budget->failure_cost},
                                        {"retry_threshold", policy.budget->retry_threshold}}
                                 : Json(nullptr);
  const std::optional<BreakerConfig>& breaker = policy.routing.breaker;
  json["routing"] = {
      {"failover", policy.routing.failover},
      {"breaker", breaker ? Json{{"threshold", breaker->threshold},
                                 {"cooldown_ms", breaker->cooldown.count()},
                                 {"half_open_probes", breaker->half_open_probes}}
                          : Json(nullptr)},
      {"route_attempts",
       policy.routing.route_attempts ? Json(*policy.routing.route_attempts) : Json(nullptr)},
      {"avoid_failed_group", policy.routing.avoid_failed_group},
      {"failover_on", ToString(policy.routing.failover_on)}};
  // Only when set, so that every other client's hello (and the trace fingerprints) stay what
  // they were; absent reads back as null.
  if (policy.routing.sticky) {
    json["routing"]["sticky"] = {{"reset_ms", policy.routing.sticky->reset.count()}};
  }
  return json;
}

Json PolicyToHelloJson(const RetryPolicy& policy) {
  Json json = PolicyToJson(policy);
  json["max_retries"] = policy.max_attempts ? Json(*policy.max_attempts - 1) : Json(nullptr);
  return json;
}

}  // namespace faultline::ref
