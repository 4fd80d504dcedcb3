#include "harness/judge/declared_policy.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "harness/judge/scenario_policy.h"
#include "harness/trace/protocol.h"
#include "reference_impl/policy_json.h"

namespace faultline::harness {
namespace {

using Json = nlohmann::json;

// The objects whose keys a declaration states one by one; any other key is stated whole
// (`statuses` is one set of rules, `budget` and `routing` one mechanism each).
constexpr std::array<std::string_view, 3> kKeyByKey{"backoff", "retry_after", "timeouts"};

bool KeyByKey(std::string_view key) { return std::ranges::find(kKeyByKey, key) != kKeyByKey.end(); }

// Every key of the format as States() counts them: "mode", ..., "backoff.base_ms", ...
const std::vector<std::string>& FormatKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    const Json whole = ref::PolicyToJson(ref::RetryPolicy{});
    for (const auto& [key, value] : whole.items()) {
      if (!KeyByKey(key)) {
        out.push_back(key);
        continue;
      }
      for (const auto& [inner, ignored] : value.items()) out.push_back(key + "." + inner);
    }
    return out;
  }();
  return keys;
}

// `key` is `parent` or lies inside it ("backoff.base_ms" inside "backoff").
bool Within(std::string_view key, std::string_view parent) {
  return key.starts_with(parent) && (key.size() == parent.size() || key[parent.size()] == '.');
}

std::vector<std::string> StatedKeys(const Json& policy) {
  std::vector<std::string> stated;
  for (const auto& [key, value] : policy.items()) {
    // The alias, and "always" (whose attempts are unbounded unless given), state the attempts.
    if (key == "max_retries" || (key == "mode" && value == "always")) {
      stated.push_back("max_attempts");
    }
    if (key == "max_retries") continue;
    if (!KeyByKey(key) || !value.is_object()) {
      stated.push_back(key);
      continue;
    }
    for (const auto& [inner, ignored] : value.items()) stated.push_back(key + "." + inner);
  }
  return stated;
}

}  // namespace

bool DeclaredPolicy::States(std::string_view key) const {
  if (!partial || Within(key, "routing")) return true;
  const auto stated_within = [&](std::string_view leaf) {
    return std::ranges::any_of(stated,
                               [&](const std::string& given) { return Within(leaf, given); });
  };
  if (stated_within(key)) return true;
  bool any = false;  // an object: every key of it
  for (const std::string& leaf : FormatKeys()) {
    if (leaf == key || !Within(leaf, key)) continue;
    any = true;
    if (!stated_within(leaf)) return false;
  }
  return any;
}

std::vector<std::string> DeclaredPolicy::Unstated() const {
  std::vector<std::string> out;
  for (const std::string& leaf : FormatKeys()) {
    if (States(leaf)) continue;
    const std::string object = leaf.substr(0, leaf.find('.'));
    const std::string& shown =
        object != leaf && !States(object) &&
                std::ranges::none_of(
                    stated, [&](const std::string& given) { return Within(given, object); })
            ? object
            : leaf;
    if (std::ranges::find(out, shown) == out.end()) out.push_back(shown);
  }
  return out;
}

DeclaredPolicy ParseDeclaredPolicy(const nlohmann::json& policy) {
  DeclaredPolicy out;
  if (policy.is_null()) return out;
  out.present = true;
  // Without a preset, the routing is one endpoint unless stated: the base of every key left out.
  Json document = policy;
  if (policy.is_object() && !policy.contains("extends")) {
    document["extends"] = "one-endpoint";
    out.stated = StatedKeys(policy);
    out.partial = true;
    out.partial =
        !std::ranges::all_of(FormatKeys(), [&](const std::string& key) { return out.States(key); });
    if (!out.partial) out.stated.clear();
  }
  auto parsed = ref::PolicyFromJson(document);
  if (!parsed) {
    out.error = parsed.error().ToString();
    return out;
  }
  out.policy = std::move(*parsed);
  return out;
}

namespace {

// Reading a declaration is a pure function of its JSON, and costs as much as a whole virtual run
// (presets resolved, every key checked); a run judges each of a few declarations thousands of
// times (every repetition of every scenario restates its subject's policy). So readings are
// memoised by value, process-wide, with a bound: a subject that declares a new policy each run
// clears the memo now and then instead of growing it.
class DeclarationMemo {
 public:
  DeclaredPolicy Read(const Json& policy) {
    {
      std::lock_guard lock(mutex_);
      if (const auto found = read_.find(policy); found != read_.end()) return found->second;
    }
    DeclaredPolicy declared = ParseDeclaredPolicy(policy);
    std::lock_guard lock(mutex_);
    if (read_.size() >= kMaxEntries) read_.clear();
    read_.emplace(policy, declared);
    return declared;
  }

 private:
  static constexpr std::size_t kMaxEntries = 512;
  std::mutex mutex_;
  std::unordered_map<Json, DeclaredPolicy> read_;
};

}  // namespace

DeclaredPolicy ReadDeclaredPolicy(const Trace& trace) {
  static DeclarationMemo memo;
  for (const ClientRecord& record : trace.client) {
    if (record.call != 0 || record.event.kind != EventKind::kHello) continue;
    if (!record.event.policy) return ParseDeclaredPolicy(Json());
    // The runs of one subject on a thread share its hello's policy (SharedJson): the last one
    // read is known by identity, without the memo's hash of the whole object.
    thread_local std::optional<std::pair<SharedJson, DeclaredPolicy>> last;
    if (!last || !last->first.SameAs(*record.event.policy)) {
      last.emplace(*record.event.policy, memo.Read(**record.event.policy));
    }
    return last->second;
  }
  return {};
}

DelayBounds BackoffBounds(const ref::BackoffConfig& backoff, int retry_index) {
  if (backoff.strategy == ref::BackoffStrategy::kDecorrelatedJitter) {
    const auto widest = ref::Bounds(backoff, retry_index, backoff.cap);
    return {static_cast<double>(std::min(backoff.base, backoff.cap).count()),
            static_cast<double>(widest.upper.count())};
  }
  const ref::BackoffBounds bounds = ref::Bounds(backoff, retry_index);
  return {static_cast<double>(bounds.lower.count()), static_cast<double>(bounds.upper.count())};
}

bool DeclaresScenarioPolicy(const DeclaredPolicy& declared, const scenario::Scenario& scenario) {
  if (!declared.usable()) return false;
  const auto expected = ScenarioPolicy(scenario);
  return expected && declared.policy == *expected;
}

}  // namespace faultline::harness
