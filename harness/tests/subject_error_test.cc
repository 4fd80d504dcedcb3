// Subject errors are their own verdict: an adapter that cannot start, crashes, floods, speaks
// something else than the protocol or declares a policy with a typo gets verdict "error" with
// the kind, its exit status or signal and its stderr; never an invariant failure.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>

#include "harness/runner.h"
#include "harness/worlds/real_world.h"
#include "harness/worlds/subjects/adapter_process.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

constexpr std::string_view kHello =
    R"({"type":"adapter/hello","name":"t","version":"1","policy":{"max_attempts":1}})";

scenario::Scenario Success() {
  auto loaded = scenario::ParseScenario(R"(faultline: 1
name: t/success
description: One clean answer.
dialect: openai-chat
responses:
  - content: {text: "Hello"}
)",
                                        "t.yaml");
  EXPECT_TRUE(loaded.has_value());
  return loaded ? *loaded : scenario::Scenario{};
}

report::ScenarioResult RunCommand(const std::string& command) {
  RunnerOptions options;
  options.world = WorldChoice::kReal;
  options.adapter = command;
  // Every command here ends by itself; the timeout only bounds a Python start-up, which took
  // over 10 s at load 21 on a 2-core machine.
  options.timeout = std::chrono::seconds(60);
  options.max_line_bytes = 64 * 1024;
  auto result = RunAll({Success()}, options, {});
  EXPECT_TRUE(result.has_value());
  if (!result || result->scenarios.empty()) return {};
  return result->scenarios.front();
}

struct Case {
  std::string name;
  std::string command;
  std::string kind;
  std::string message;  // a part of the error text
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

class SubjectErrorTest : public ::testing::TestWithParam<Case> {};

TEST_P(SubjectErrorTest, IsAnErrorVerdictNotACheckFailure) {
  const Case& c = GetParam();
  const report::ScenarioResult result = RunCommand(c.command);
  EXPECT_EQ(result.verdict, report::Verdict::kError) << result.error;
  EXPECT_TRUE(result.checks.empty()) << "no invariant is judged on a broken subject";
  ASSERT_TRUE(result.subject_error.has_value()) << result.error;
  EXPECT_EQ(result.subject_error->kind, c.kind) << result.error;
  EXPECT_NE(result.error.find(c.message), std::string::npos) << result.error;
}

std::string Echo(std::string_view line) { return "printf '%s\\n' '" + std::string(line) + "'"; }

INSTANTIATE_TEST_SUITE_P(
    Kinds, SubjectErrorTest,
    ::testing::Values(
        Case{"missing", "/nonexistent/adapter --flag", "cannot-start", "could not be started"},
        Case{"exit3", "echo boom >&2; exit 3", "exited", "status 3"},
        Case{"crash", Echo(kHello) + "; kill -9 $$", "killed", "signal 9"},
        Case{"notjson", "echo 'hello there'", "not-json", "hello there"},
        Case{"badutf8", "printf '\\377\\n'", "not-json", "not a JSON line"},
        Case{"unknowntype", Echo(R"({"type":"response/begin"})"), "not-protocol",
             "unknown event type"},
        Case{"badfailure",
             Echo(kHello) + "; " +
                 Echo(R"({"type":"response/failed","failure":{"class":"oops","code":"X"}})"),
             "not-protocol", "not one of"},
        Case{"nohello", Echo(R"({"type":"response/committed","text":"Hello"})"), "no-hello",
             "not adapter/hello"},
        Case{"flood", "head -c 200000 /dev/zero | tr '\\0' x", "line-too-long", "line limit"},
        Case{
            "typo",
            Echo(
                R"({"type":"adapter/hello","name":"t","version":"1","policy":{"max_atempts":3}})") +
                "; " + Echo(R"({"type":"response/committed","text":"Hello"})"),
            "bad-policy", "did you mean 'max_attempts'?"}),
    [](const auto& info) { return info.param.name; });

// Each protocol mistake, made by a tiny adapter that otherwise makes the call correctly, is a
// subject error naming the event and the field (harness/tests/adapters/protocol_mistakes.py).
std::string Mistake(std::string_view name) {
  return std::string("python3 " FAULTLINE_SOURCE_DIR
                     "/harness/tests/adapters/protocol_mistakes.py --mistake ") +
         std::string(name);
}

INSTANTIATE_TEST_SUITE_P(
    ProtocolMistakes, SubjectErrorTest,
    ::testing::Values(
        Case{"unknown_field", Mistake("unknown-field"), "not-protocol",
             "response/start: unknown field \"zz\""},
        Case{"missing_commitment", Mistake("missing-commitment"), "not-protocol",
             "assistant/chunk: missing required field \"commitment\""},
        Case{"missing_response_id", Mistake("missing-response-id"), "not-protocol",
             "response/start: missing required field \"response_id\""},
        Case{"string_attempt", Mistake("string-attempt"), "not-protocol",
             "response/committed: at attempt: expected an integer, got the string \"1\""},
        Case{"null_usage", Mistake("null-usage"), "not-protocol",
             "response/committed: at usage: expected an object, got null"},
        Case{"deep_field", Mistake("deep-field"), "not-protocol",
             "arrays and objects nest deeper than 64 levels: {\"type\": \"response/committed\""}),
    [](const auto& info) { return info.param.name; });

TEST(ProtocolMistakesAdapterTest, WithoutTheMistakeItIsNoError) {
  const report::ScenarioResult result = RunCommand(Mistake("none"));
  EXPECT_NE(result.verdict, report::Verdict::kError) << result.error;
  EXPECT_FALSE(result.subject_error.has_value());
}

// A session-mode adapter answers for every call of the run: a call it leaves without a terminal
// event, or an event naming a call the run does not have, is a subject error naming the call.
TEST(SubjectErrorTest, ASessionModeAdapterAnswersForEveryCall) {
  auto two_calls = scenario::ParseScenario(R"(faultline: 1
name: t/two-calls
description: Two calls at once, one clean answer each.
dialect: openai-chat
request: {calls: 2}
responses:
  - content: {text: "Hello"}
)",
                                           "t.yaml");
  ASSERT_TRUE(two_calls.has_value()) << two_calls.error().ToString();
  const std::string hello = R"({"type":"adapter/hello","name":"t","version":"1","mode":"session"})";
  const auto run = [&](const std::string& answers) {
    RunnerOptions options;
    options.world = WorldChoice::kReal;
    options.adapter = "read call0; " + Echo(hello) + "; read call1; " + answers;
    options.timeout = std::chrono::seconds(60);
    auto result = RunAll({*two_calls}, options, {});
    EXPECT_TRUE(result.has_value());
    return result && !result->scenarios.empty() ? result->scenarios.front()
                                                : report::ScenarioResult{};
  };
  const auto forgot = run(Echo(R"({"type":"response/committed","text":"Hello","call":0})"));
  ASSERT_TRUE(forgot.subject_error.has_value()) << forgot.error;
  EXPECT_EQ(forgot.subject_error->kind, "exited");
  EXPECT_THAT(forgot.error, ::testing::HasSubstr("call 1: the adapter exited"));

  const auto stray = run(Echo(R"({"type":"response/committed","text":"Hello","call":5})"));
  ASSERT_TRUE(stray.subject_error.has_value()) << stray.error;
  EXPECT_EQ(stray.subject_error->kind, "not-protocol");
  EXPECT_THAT(stray.error, ::testing::HasSubstr("names call 5, but the run has 2 call(s)"));

  const auto both = run(Echo(R"({"type":"response/committed","text":"Hello","call":1})") + "; " +
                        Echo(R"({"type":"response/committed","text":"Hello"})"));
  EXPECT_FALSE(both.subject_error.has_value()) << both.error;
}

// A process whose hello declares `reset` but that answers the reset with something else is not
// kept: the run it finished keeps its verdict (the answer came after it), the reports say why the
// process went, and the next run gets a new process.
TEST(SubjectErrorTest, AResetAnsweredWrongEndsTheProcessNotTheRun) {
  const std::string starts = ::testing::TempDir() + "/wrong-reset-starts.txt";
  std::remove(starts.c_str());
  const std::string hello =
      R"({"type":"adapter/hello","name":"t","version":"1","mode":"session","reset":true})";
  const std::string adapter = "echo started >> " + starts + "; read call; " + Echo(hello) + "; " +
                              Echo(R"({"type":"response/committed","text":"Hello","call":0})") +
                              "; read reset; " + Echo(R"({"type":"adapter/hello"})") + "; sleep 30";
  auto world = RealWorld::Start();
  ASSERT_TRUE(world) << world.error();
  RealRunOptions options;
  options.timeout = std::chrono::seconds(60);
  const scenario::Scenario success = Success();
  for (int run = 0; run < 2; ++run) {
    auto trace = (*world)->RunAdapterSubject(success, adapter, options);
    ASSERT_TRUE(trace) << trace.error();
    EXPECT_FALSE(trace->subject_fault) << trace->subject_fault->message;
    ASSERT_EQ(std::ranges::count_if(trace->client, IsTerminal), 1);
    ASSERT_EQ(trace->subject_endings.size(), 1U);
    EXPECT_THAT(trace->subject_endings.front(),
                ::testing::HasSubstr("not kept for the next run: it answered the reset with "
                                     "`{\"type\":\"adapter/hello\"}` instead of adapter/reset"));
  }
  std::ifstream started(starts);
  EXPECT_EQ(
      std::count(std::istreambuf_iterator<char>(started), std::istreambuf_iterator<char>(), '\n'),
      2);
}

TEST(SubjectErrorTest, ExitStatusAndStderrAreKept) {
  const report::ScenarioResult result = RunCommand("echo 'Traceback: it broke' >&2; exit 3");
  ASSERT_TRUE(result.subject_error.has_value());
  EXPECT_EQ(result.subject_error->exit_status, 3);
  EXPECT_NE(result.subject_error->stderr_tail.find("Traceback: it broke"), std::string::npos);
}

TEST(SubjectErrorTest, AWellBehavedMinimalAdapterIsNoError) {
  const report::ScenarioResult result =
      RunCommand(Echo(kHello) + "; " + Echo(R"({"type":"response/committed","text":"Hello"})"));
  EXPECT_NE(result.verdict, report::Verdict::kError) << result.error;
  EXPECT_FALSE(result.subject_error.has_value());
}

// When the runner stops an adapter, the stop is timed when it begins, not when the process has
// gone: sockets the dying process closes are closed by the runner. Timed at the exit, a client
// with no idle timeout passed TIME-001 whenever its connection closed before the reaping ended.
TEST(AdapterProcessTest, AStopIsTimedWhenItBeginsNotWhenTheAdapterIsGone) {
  using namespace std::chrono_literals;
  std::stop_source stop;
  AdapterLaunch launch;
  launch.command = "trap 'sleep 0.4; exit 0' TERM; echo '{}'; while :; do sleep 0.05; done";
  launch.call_line = "{}";
  launch.stop = stop.get_token();
  launch.timeout = 30s;
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    stop.request_stop();
  });
  const auto run = RunAdapter(launch);
  stopper.join();
  ASSERT_TRUE(run) << run.error();
  EXPECT_TRUE(run->interrupted);
  ASSERT_TRUE(run->stopped);
  EXPECT_GE(run->ended - *run->stopped, 350ms);  // its TERM trap takes 0.4 s to exit

  launch.command = "while :; do sleep 0.05; done";
  launch.stop = {};
  launch.timeout = 300ms;
  const auto timed_out = RunAdapter(launch);
  ASSERT_TRUE(timed_out) << timed_out.error();
  EXPECT_TRUE(timed_out->timed_out);
  ASSERT_TRUE(timed_out->stopped);
  EXPECT_GE(*timed_out->stopped, 300ms);
  EXPECT_LE(*timed_out->stopped, timed_out->ended);
}

}  // namespace
}  // namespace faultline::harness
