// The admission step's target resolution: sessions, their routes and the calls of a scenario
// with several concurrent calls, each of which the journal attributes.
#include "fake_provider/admission.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/tests/plan_test_util.h"
#include "scenarios/loader.h"

namespace faultline::provider {
namespace {

using namespace std::chrono_literals;

TEST(AdmissionTest, ResolvesSessionsAndControlRequests) {
  const Destination session = ResolveTarget("/s/run0/rate-limit/x/v1/chat/completions?x=1");
  EXPECT_EQ(session.kind, Destination::Kind::kSession);
  EXPECT_EQ(session.session_id, "run0/rate-limit/x");
  EXPECT_EQ(session.path, "/v1/chat/completions");
  EXPECT_EQ(session.call, -1);
  EXPECT_EQ(ResolveTarget("/_faultline/health").kind, Destination::Kind::kControl);
  EXPECT_EQ(ResolveTarget("/v1/chat/completions").kind, Destination::Kind::kUnknown);
  EXPECT_EQ(ResolveTarget("/s/v1/chat").kind, Destination::Kind::kUnknown);
}

TEST(AdmissionTest, EachCallOfSeveralHasItsOwnBaseUrlOntoTheSameSession) {
  EXPECT_EQ(CallBaseUrl("http://127.0.0.1:9/s/run0/storm", 0, 1),
            "http://127.0.0.1:9/s/run0/storm");
  const std::string third = CallBaseUrl("http://127.0.0.1:9/s/run0/storm", 2, 5);
  EXPECT_EQ(third, "http://127.0.0.1:9/s/run0/storm/call/2");
  const Destination destination = ResolveTarget("/s/run0/storm/call/2/v1/messages");
  EXPECT_EQ(destination.session_id, "run0/storm");
  EXPECT_EQ(destination.call, 2);
  EXPECT_EQ(destination.path, "/v1/messages");
  // A route's call, and labels that are not calls.
  const Destination routed = ResolveTarget("/s/x/route/backup/call/11/v1/responses");
  EXPECT_EQ(routed.session_id, "x/route/backup");
  EXPECT_EQ(routed.call, 11);
  EXPECT_EQ(ResolveTarget("/s/x/call/two/v1/messages").session_id, "x/call/two");
  EXPECT_EQ(ResolveTarget("/s/x/call/1234567/v1/messages").call, -1);      // over 6 digits
  EXPECT_EQ(ResolveTarget("/s/call/1/v1/messages").session_id, "call/1");  // nothing before it
}

TEST(AdmissionTest, TheJournalRecordsTheCallThatSentEachRequest) {
  auto scenario = scenario::ParseScenario(
      "faultline: 1\nname: storm\ndescription: d\ndialect: openai-chat\nresponses:\n  - status: "
      "429\n",
      "t.yaml");
  ASSERT_TRUE(scenario) << scenario.error().ToString();
  const WallTime start = testing::TestNow();
  ProviderSession session(std::make_shared<const CompiledScenario>(std::move(*scenario)), 1, start);
  Journal journal;
  for (const int call : {1, 0}) {
    HttpRequest request;
    request.method = "POST";
    request.target = fmt::format("/s/storm/call/{}/v1/chat/completions", call);
    request.body = R"({"model":"m","stream":true,"messages":[]})";
    Admit(session, journal,
          {.request = request,
           .path = ResolveTarget(request.target).path,
           .now = start + 1ms,
           .session_start = start});
  }
  const auto entries = journal.Snapshot();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].call, 1);
  EXPECT_EQ(entries[0].attempt, 1);  // the session's state is shared: attempts count across calls
  EXPECT_EQ(entries[1].call, 0);
  EXPECT_EQ(entries[1].attempt, 2);
}

}  // namespace
}  // namespace faultline::provider
