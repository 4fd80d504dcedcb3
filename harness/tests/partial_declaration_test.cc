// A declaration without `extends` that leaves keys out is judged only on what it states
// (declared_policy.h): a check that needs a key it leaves out is n/a naming the key, ADV-011
// names them all, its routing is one endpoint unless stated, no twin judges its expectations,
// and what it does state is judged as ever.
#include <gtest/gtest.h>

#include "harness/judge/declared_policy.h"
#include "harness/tests/judge_test_support.h"
#include "reference_impl/policy_json.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

using nlohmann::json;
using report::CheckStatus;
using testing::CheckOf;
using testing::TraceBuilder;

scenario::Scenario Parse(const std::string& yaml) {
  auto scenario = scenario::ParseScenario(yaml, "partial.yaml");
  EXPECT_TRUE(scenario.has_value()) << scenario.error().ToString();
  return scenario.value_or(scenario::Scenario{});
}

void ExpectNotApplicableNaming(const report::CheckResult& check, std::string_view key) {
  EXPECT_EQ(check.status, CheckStatus::kNotApplicable) << check.id << ": " << check.evidence;
  EXPECT_NE(check.evidence.find(key), std::string::npos) << check.id << ": " << check.evidence;
}

TEST(PartialDeclarationTest, StatesWhatItGivesAndNothingElse) {
  const DeclaredPolicy once = ParseDeclaredPolicy(json{{"max_attempts", 1}});
  ASSERT_TRUE(once.usable()) << once.error.value_or("");
  EXPECT_TRUE(once.partial);
  EXPECT_TRUE(once.States("max_attempts"));
  EXPECT_FALSE(once.States("backoff"));
  EXPECT_FALSE(once.States("timeouts.idle_ms"));
  EXPECT_TRUE(once.States("routing")) << "one endpoint unless stated";
  EXPECT_FALSE(once.policy.routing.failover);
  EXPECT_FALSE(once.policy.routing.breaker.has_value());
  const std::vector<std::string> unstated = once.Unstated();
  EXPECT_NE(std::ranges::find(unstated, "backoff"), unstated.end());
  EXPECT_NE(std::ranges::find(unstated, "timeouts"), unstated.end());
  EXPECT_EQ(std::ranges::find(unstated, "max_attempts"), unstated.end());

  const DeclaredPolicy base = ParseDeclaredPolicy(json{{"backoff", {{"base_ms", 100}}}});
  EXPECT_TRUE(base.States("backoff.base_ms"));
  EXPECT_FALSE(base.States("backoff")) << "an object wants every key";
  const std::vector<std::string> rest = base.Unstated();
  EXPECT_NE(std::ranges::find(rest, "backoff.strategy"), rest.end());
  EXPECT_EQ(std::ranges::find(rest, "backoff"), rest.end());

  EXPECT_TRUE(ParseDeclaredPolicy(json{{"max_retries", 2}}).States("max_attempts"));
  EXPECT_TRUE(ParseDeclaredPolicy(json{{"mode", "always"}}).States("max_attempts"));
}

TEST(PartialDeclarationTest, APresetOrEveryKeyMakesItWhole) {
  EXPECT_FALSE(ParseDeclaredPolicy(json{{"extends", "no-retry"}}).partial);
  ref::RetryPolicy reference;
  const DeclaredPolicy every = ParseDeclaredPolicy(ref::PolicyToHelloJson(reference));
  EXPECT_FALSE(every.partial);
  EXPECT_EQ(every.policy, reference) << "its routing as stated, failover included";
  const DeclaredPolicy wrong = ParseDeclaredPolicy(json{{"max_attempts", 0}});
  EXPECT_FALSE(wrong.usable()) << "what it states is read as strictly as ever";
}

// A failure and a retry 5 ms later: the gap needs the backoff, which is not stated.
Trace RetriedAfterFiveMs(const json& policy, bool partial) {
  TraceBuilder b = partial ? TraceBuilder::Declaring(policy) : TraceBuilder(policy);
  b.Error(0, 10, "provider-unavailable", true).status = 503;
  b.Answer(15, 25, "Hi");
  b.Start(0, 1).Interrupted(10, 1, "provider-unavailable", "UNAVAILABLE").Start(14, 2);
  b.Committed(25, 2, "Hi");
  return b.Build();
}

TEST(PartialDeclarationTest, AChecksOmittedKeyMakesItNotApplicableAndAdv011NamesIt) {
  const Trace partial = RetriedAfterFiveMs(json{{"max_attempts", 3}}, true);
  ExpectNotApplicableNaming(CheckOf(partial, "RETRY-003"), "backoff");
  EXPECT_EQ(CheckOf(partial, "RETRY-002").status, CheckStatus::kPass) << "max_attempts is stated";
  const report::CheckResult advice = CheckOf(partial, "ADV-011");
  EXPECT_EQ(advice.status, CheckStatus::kFail);
  EXPECT_EQ(advice.severity, report::Severity::kAdvisory);
  EXPECT_NE(advice.evidence.find("backoff"), std::string::npos) << advice.evidence;
  // The same declaration, whole (the reference defaults for the rest): the gap is judged.
  const Trace whole = RetriedAfterFiveMs(json{{"max_attempts", 3}}, false);
  EXPECT_NE(CheckOf(whole, "RETRY-003").status, CheckStatus::kNotApplicable);
  EXPECT_EQ(CheckOf(whole, "ADV-011").status, CheckStatus::kNotApplicable);
}

TEST(PartialDeclarationTest, WhatItStatesIsJudged) {
  const Trace once = RetriedAfterFiveMs(json{{"max_attempts", 1}}, true);
  EXPECT_EQ(CheckOf(once, "RETRY-002").status, CheckStatus::kFail);
  // A stream silent for 5 s that the client never cuts, against a stated 1 s idle timeout.
  TraceBuilder b = TraceBuilder::Declaring(json{{"timeouts", {{"idle_ms", 1000}}}});
  provider::JournalEntry& stalled = b.Error(0, 6000, "transport", true);
  stalled.status = 200;
  stalled.truth.silences = {{.from = testing::Ms(10), .to = testing::Ms(5010)}};
  b.Start(0, 1).Failed(6000, 1, "transport", "TRANSPORT");
  const Trace silent = b.Build();
  EXPECT_EQ(CheckOf(silent, "TIME-001").status, CheckStatus::kFail);
  ExpectNotApplicableNaming(CheckOf(silent, "TIME-003"), "timeouts.total_ms");
}

const char* const kPrimaryLacksPrefill = R"(faultline: 1
name: routes/partial
description: the primary lacks prefill, which the request needs; the secondary has it
dialect: anthropic-messages
request: {prefill: Sure}
routes:
  - {id: primary, model: m, priority: 0, capabilities: {}}
  - {id: secondary, model: m, priority: 1, capabilities: {prefill: true}}
)";

TEST(PartialDeclarationTest, RoutingIsOneEndpointUnlessStated) {
  const scenario::Scenario scenario = Parse(kPrimaryLacksPrefill);
  const auto to_the_primary = [](const json& policy) {
    TraceBuilder b = TraceBuilder::Declaring(policy);
    b.Answer(0, 10, "Hi").route = "primary";
    b.Start(0, 1).Committed(10, 1, "Hi");
    return b.Build();
  };
  EXPECT_EQ(CheckOf(to_the_primary(json{{"max_attempts", 1}}), "ROUTE-003", scenario).status,
            CheckStatus::kNotApplicable);
  const json router = {{"max_attempts", 1}, {"routing", {{"failover", true}}}};
  EXPECT_EQ(CheckOf(to_the_primary(router), "ROUTE-003", scenario).status, CheckStatus::kFail);
}

TEST(PartialDeclarationTest, TheTwinsExpectationsAreNotApplicable) {
  const scenario::Scenario scenario = Parse(R"(faultline: 1
name: partial/expect
description: a 503, then an answer
dialect: openai-chat
responses:
  - {status: 503, error: unavailable}
  - {content: {text: Hi}}
expect: {outcome: committed, attempts: 2, text: Hi, requests: 2}
)");
  TraceBuilder b = TraceBuilder::Declaring(json{{"max_attempts", 1}});
  b.Error(0, 10, "provider-unavailable", true).status = 503;
  b.Start(0, 1).Failed(10, 1, "provider-unavailable", "UNAVAILABLE");
  const Trace trace = b.Build();
  for (const char* id : {"EXPECT-OUTCOME", "EXPECT-ATTEMPTS", "EXPECT-TEXT", "EXPECT-REQUESTS"}) {
    ExpectNotApplicableNaming(CheckOf(trace, id, scenario), "timeouts");
  }
  const report::CheckResult advice = CheckOf(trace, "ADV-011", scenario);
  EXPECT_EQ(advice.status, CheckStatus::kFail);
  EXPECT_NE(advice.evidence.find("retryable_classes"), std::string::npos) << advice.evidence;
}

}  // namespace
}  // namespace faultline::harness
