// The named policies (presets.h) and `extends` (policy_json.h): every preset reads and loads,
// notes name keys the preset states (itself or through its chain), and a document's own keys
// override its preset's.
#include "reference_impl/presets.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "reference_impl/policy_json.h"

namespace faultline::ref {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

RetryPolicy Load(const json& document) {
  auto policy = PolicyFromJson(document);
  EXPECT_TRUE(policy.has_value()) << document.dump() << ": " << policy.error().ToString();
  return policy.value_or(RetryPolicy{});
}

// The keys a policy document states, as dotted paths of its objects ("backoff.base_ms"), with
// each object's own path too ("backoff").
void CollectPaths(const json& object, const std::string& prefix, std::set<std::string>& out) {
  for (const auto& [key, value] : object.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    out.insert(path);
    if (value.is_object()) CollectPaths(value, path, out);
  }
}

TEST(PresetsTest, EveryPresetReadsLoadsAndExplainsWhatItStates) {
  ASSERT_GE(Presets().size(), 20u);
  for (const Preset& preset : Presets()) {
    SCOPED_TRACE(preset.name);
    EXPECT_EQ(preset.error, "");
    EXPECT_FALSE(preset.summary.empty());
    EXPECT_FALSE(preset.source.empty());
    Load(preset.policy);
    // A note may explain a value the preset keeps from the one it extends (anthropic-node
    // cites its own SDK for the attempts it shares with openai-node).
    auto resolved = ResolveExtends(preset.policy);
    ASSERT_TRUE(resolved.has_value());
    std::set<std::string> stated;
    CollectPaths(*resolved, "", stated);
    for (const auto& [key, note] : preset.notes.items()) {
      EXPECT_TRUE(stated.contains(key)) << "a note on '" << key << "', which it does not state";
      EXPECT_TRUE(note.is_string() && !note.get<std::string>().empty()) << key;
    }
  }
}

TEST(PresetsTest, EveryPresetButTheReferenceStatesItsRouting) {
  for (const Preset& preset : Presets()) {
    if (preset.name == "reference") continue;
    auto resolved = ResolveExtends(preset.policy);
    ASSERT_TRUE(resolved.has_value()) << preset.name;
    EXPECT_TRUE(resolved->contains("routing")) << preset.name;
  }
}

TEST(PresetsTest, TheCommonShapes) {
  EXPECT_EQ(Load({{"extends", "reference"}}), RetryPolicy{});
  RetryPolicy one_endpoint;
  one_endpoint.routing.failover = false;
  one_endpoint.routing.breaker.reset();
  EXPECT_EQ(Load({{"extends", "one-endpoint"}}), one_endpoint);
  const RetryPolicy no_retry = Load({{"extends", "no-retry"}});
  EXPECT_EQ(no_retry.max_attempts, 1);
  EXPECT_TRUE(no_retry.retryable_classes.empty());
  EXPECT_FALSE(no_retry.retry_after.honor);
  EXPECT_FALSE(no_retry.routing.failover);
  EXPECT_EQ(no_retry.timeouts, TimeoutConfig{}) << "the reference client's timeouts";
}

TEST(PresetsTest, OwnKeysOverrideThePresetsAndObjectsMergeKeyByKey) {
  const RetryPolicy openai = Load({{"extends", "openai-node"}});
  const RetryPolicy slower =
      Load({{"extends", "openai-node"}, {"backoff", {{"base_ms", 1000}}}, {"max_retries", 5}});
  EXPECT_EQ(slower.backoff.base, milliseconds(1000));
  EXPECT_EQ(slower.backoff.strategy, openai.backoff.strategy) << "the rest of backoff is kept";
  EXPECT_EQ(slower.backoff.cap, openai.backoff.cap);
  EXPECT_EQ(slower.max_attempts, 6) << "max_retries replaces the preset's max_attempts";
  EXPECT_EQ(slower.retry_after, openai.retry_after);
  const RetryPolicy fewer = Load({{"extends", "openai-node"}, {"retry_phases", {"connect"}}});
  EXPECT_EQ(fewer.retry_phases, std::vector<Phase>{Phase::kConnect}) << "an array replaces";
  const RetryPolicy breaker =
      Load({{"extends", "one-endpoint"}, {"routing", {{"breaker", {{"threshold", 2}}}}}});
  ASSERT_TRUE(breaker.routing.breaker.has_value()) << "an object over null";
  EXPECT_EQ(breaker.routing.breaker->threshold, 2);
  EXPECT_FALSE(breaker.routing.failover);
}

TEST(PresetsTest, PresetsExtendPresets) {
  const RetryPolicy anthropic = Load({{"extends", "anthropic-node"}});
  const RetryPolicy openai = Load({{"extends", "openai-node"}});
  EXPECT_EQ(anthropic.backoff, openai.backoff);
  EXPECT_EQ(anthropic.retry_after.over_cap, OverCapMode::kBackoff);
  EXPECT_EQ(openai.timeouts.idle, milliseconds(301'000)) << "node-fetch's, through the chain";
  EXPECT_FALSE(openai.routing.failover) << "one-endpoint's, through the chain";
}

TEST(PresetsTest, AnUnknownPresetSuggestsTheNearest) {
  auto policy = LoadPolicy(R"({"extends": "opanai-node"})");
  ASSERT_FALSE(policy.has_value());
  EXPECT_EQ(policy.error().path, "extends");
  EXPECT_NE(policy.error().message.find("unknown preset 'opanai-node'; did you mean "
                                        "'openai-node'?"),
            std::string::npos)
      << policy.error().message;
  EXPECT_NE(policy.error().message.find("no-retry"), std::string::npos) << "lists them";
  auto number = LoadPolicy(R"({"extends": 3})");
  ASSERT_FALSE(number.has_value());
  EXPECT_EQ(number.error().path, "extends");
  auto typo = LoadPolicy(R"({"extend": "reference"})");
  ASSERT_FALSE(typo.has_value());
  EXPECT_NE(typo.error().message.find("did you mean 'extends'?"), std::string::npos);
}

TEST(PresetsTest, AnOwnKeyIsStillReadStrictly) {
  auto policy = LoadPolicy(R"({"extends": "openai-node", "backoff": {"base": 5}})");
  ASSERT_FALSE(policy.has_value());
  EXPECT_EQ(policy.error().path, "backoff.base");
}

}  // namespace
}  // namespace faultline::ref
