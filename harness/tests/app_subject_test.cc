// An unmodified app as the subject (`faultline run --exec`): what it is told, how its ending is
// read, and the checks it cannot be judged on.
#include "harness/worlds/subjects/app_subject.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/judge/judge.h"
#include "harness/runner.h"
#include "harness/tests/judge_test_support.h"
#include "harness/worlds/real_world.h"
#include "harness/worlds/request_body.h"
#include "harness/worlds/served_session.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

using namespace std::chrono_literals;
using report::CheckStatus;
using testing::ExpectStatus;
using testing::TraceBuilder;

std::string ValueOf(const std::vector<std::string>& environment, std::string_view name) {
  for (const std::string& entry : environment) {
    if (entry.starts_with(name) && entry.size() > name.size() && entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  ADD_FAILURE() << "no " << name;
  return {};
}

TEST(AppSubjectTest, TheAppIsToldEachSdksBaseUrlAndTheCallsOwnEndpoint) {
  const AppCall call{.base_url = "http://127.0.0.1:4000/s/run1/x/call/1",
                     .dialect = "anthropic-messages",
                     .model = "claude-x",
                     .scenario = "x",
                     .call = 1,
                     .calls = 2,
                     .request = R"({"model":"claude-x"})",
                     .call_line = R"({"type":"call"})"};
  const auto environment = AppEnvironment(call, "corp.example");
  EXPECT_EQ(ValueOf(environment, "OPENAI_BASE_URL"), call.base_url + "/v1");
  EXPECT_EQ(ValueOf(environment, "ANTHROPIC_BASE_URL"), call.base_url);
  EXPECT_EQ(ValueOf(environment, "OPENAI_API_KEY"), kTestApiKey);
  EXPECT_EQ(ValueOf(environment, "ANTHROPIC_API_KEY"), kTestApiKey);
  EXPECT_EQ(ValueOf(environment, "FAULTLINE_ENDPOINT"), call.base_url + "/v1/messages");
  EXPECT_EQ(ValueOf(environment, "FAULTLINE_CALL"), "1");
  EXPECT_EQ(ValueOf(environment, "FAULTLINE_CALLS"), "2");
  EXPECT_EQ(ValueOf(environment, "FAULTLINE_REQUEST"), call.request);
  // A CI proxy must not take loopback calls; the runner's own exceptions stay.
  EXPECT_EQ(ValueOf(environment, "NO_PROXY"), "corp.example,127.0.0.1,localhost,::1");
  EXPECT_EQ(ValueOf(environment, "no_proxy"), "corp.example,127.0.0.1,localhost,::1");
}

TEST(AppSubjectTest, TheExitStatusIsTheOutcomeAndSaysNothingItDoesNotKnow) {
  AdapterRun run;
  run.exit_status = 0;
  auto outcome = AppOutcome(run);
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->kind, EventKind::kCommitted);
  EXPECT_FALSE(outcome->text) << "the runner never sees the answer's text";

  run.exit_status = 1;
  outcome = AppOutcome(run);
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->kind, EventKind::kFailed);
  EXPECT_FALSE(outcome->failure) << "an exit status has no failure class";
  EXPECT_FALSE(AppFault(run, 0));

  run.cancel_sent = 100ms;  // it ended on the cancel's SIGINT
  run.exit_status = 130;
  outcome = AppOutcome(run);
  ASSERT_TRUE(outcome && outcome->failure);
  EXPECT_EQ(outcome->failure->code, "ABORTED");

  run.timed_out = true;  // the runner stopped it: no ending of its own
  EXPECT_FALSE(AppOutcome(run));
  EXPECT_EQ(AppEnding(run), "was stopped at the runner's timeout");

  AdapterRun missing;
  missing.exit_status = 127;
  ASSERT_TRUE(AppFault(missing, 2));
  EXPECT_EQ(AppFault(missing, 2)->kind, "cannot-start");
}

// The runner's side of the process: the environment reaches it, stdout is free text, and the
// scripted cancel is a SIGINT to its group.
TEST(AppSubjectTest, AnAppGetsItsEnvironmentAndACancelIsItsCtrlC) {
  AdapterLaunch launch;
  launch.command =
      "trap 'echo interrupted >&2; exit 130' INT; echo \"$FAULTLINE_SCENARIO\"; "
      "echo 'not JSON, not a protocol line'; while :; do sleep 0.05; done";
  launch.environment = {"FAULTLINE_SCENARIO=demo/x"};
  launch.free_output = true;
  launch.cancel_at = 1s;  // room for the shell to start on a loaded machine
  launch.first_attempt = [](const std::vector<AdapterLine>&) {
    return std::optional<std::chrono::microseconds>(0us);
  };
  launch.timeout = 30s;
  const auto run = RunAdapter(launch);
  ASSERT_TRUE(run) << run.error();
  EXPECT_EQ(run->stdout_text, "demo/x\nnot JSON, not a protocol line\n");
  EXPECT_TRUE(run->lines.empty());
  EXPECT_TRUE(run->overflow.empty());
  ASSERT_TRUE(run->cancel_sent);
  EXPECT_GE(*run->cancel_sent, 1s);
  EXPECT_FALSE(run->timed_out);
  EXPECT_EQ(run->exit_status, 130);
  EXPECT_NE(run->stderr_text.find("interrupted"), std::string::npos);
}

TEST(AppSubjectTest, AnAppThatCommitsABrokenStreamIsCaughtButNotJudgedOnItsWords) {
  TraceBuilder b;
  b.Entry(1, 40, provider::EndKind::kCompleted).truth.failure_class = "truncated";
  b.Event(45, {{"type", "response/committed"}});
  Trace trace = b.Build();
  trace.client.back().event.text.reset();  // committed without a text: what an app reports
  const auto commit = testing::CheckOf(trace, "COMMIT-002");
  EXPECT_EQ(commit.status, CheckStatus::kFail);
  EXPECT_NE(commit.evidence.find("exit status 0"), std::string::npos) << commit.evidence;
  ExpectStatus(trace, "COMMIT-001", CheckStatus::kNotApplicable);
  scenario::Scenario expecting;
  expecting.expect.text = "Hello";
  EXPECT_EQ(testing::CheckOf(trace, "EXPECT-TEXT", expecting).status, CheckStatus::kNotApplicable);
}

TEST(AppSubjectTest, AnAppsFailureHasNoClassToJudge) {
  TraceBuilder b;
  b.Error(1, 5, "rate-limit", true);
  b.Event(10, {{"type", "response/failed"}});
  Trace trace = b.Build();
  trace.client.back().event.failure.reset();
  ExpectStatus(trace, "CLASS-001", CheckStatus::kNotApplicable);
  scenario::Scenario expecting;
  expecting.expect.failure_class = "rate-limit";
  EXPECT_EQ(testing::CheckOf(trace, "EXPECT-CLASS", expecting).status, CheckStatus::kNotApplicable);
  // What its ending does say is still judged: it failed where a commit was expected.
  expecting.expect.failure_class.reset();
  expecting.expect.outcome = "committed";
  EXPECT_EQ(testing::CheckOf(trace, "EXPECT-OUTCOME", expecting).status, CheckStatus::kFail);
}

// Refused connections never reach the journal: an app that reports no attempt count, under a
// listener outage, made an unknown number of attempts.
TEST(AppSubjectTest, AnAppsAttemptsAreUnknownWhereConnectionsMayBeRefused) {
  TraceBuilder b;
  b.Answer(1, 40, "Hello");
  b.Event(45, {{"type", "response/committed"}});
  Trace trace = b.Build();
  trace.client.back().event.text.reset();
  scenario::Scenario expecting;
  expecting.expect.attempts = 3;
  EXPECT_EQ(testing::CheckOf(trace, "EXPECT-ATTEMPTS", expecting).status, CheckStatus::kFail)
      << "without refusals the journal counts them all";
  expecting.listener_outages.push_back({});
  EXPECT_EQ(testing::CheckOf(trace, "EXPECT-ATTEMPTS", expecting).status,
            CheckStatus::kNotApplicable);
}

// End to end over loopback: a Python app using only urllib, told nothing but its environment,
// reads a stream that never says [DONE] and exits 0 anyway: the journal convicts it.
TEST(AppSubjectTest, AnUnmodifiedAppIsJudgedFromItsExitAndTheJournal) {
  auto scenario = scenario::ParseScenario(R"(
faultline: 1
name: exec/truncated
description: The stream ends cleanly without its terminator.
dialect: openai-chat
responses:
  - content: {text: "Hello there", chunk_size: 5, end: no_terminator}
)",
                                          "test");
  ASSERT_TRUE(scenario) << scenario.error().ToString();
  auto world = RealWorld::Start();
  ASSERT_TRUE(world) << world.error();
  const std::string app =
      "python3 -c \"import os, urllib.request as u; r = u.urlopen(u.Request("
      "os.environ['OPENAI_BASE_URL'] + '/chat/completions', "
      "data=os.environ['FAULTLINE_REQUEST'].encode(), "
      "headers={'authorization': 'Bearer ' + os.environ['OPENAI_API_KEY'], "
      "'content-type': 'application/json'})); print(len(r.read()))\"";
  RealRunOptions options;
  options.timeout = 60s;
  auto trace = (*world)->RunAppSubject(*scenario, {app, std::nullopt}, options);
  ASSERT_TRUE(trace) << trace.error();
  ASSERT_FALSE(trace->subject_fault) << trace->subject_fault->message;
  ASSERT_EQ(trace->journal.size(), 1u) << trace->subject_stderr;
  ASSERT_EQ(trace->client.size(), 2u) << trace->subject_stderr;
  EXPECT_EQ(trace->client.front().event.name, kAppName);
  EXPECT_EQ(trace->client.back().event.kind, EventKind::kCommitted) << trace->subject_stderr;
  EXPECT_FALSE(trace->subject_stdout.empty());
  ASSERT_EQ(trace->subject_endings.size(), 1u);
  EXPECT_EQ(trace->subject_endings[0], "call 0: the app exited with status 0");
  EXPECT_TRUE(IsBlackBox(*trace));
  ExpectStatus(*trace, "COMMIT-002", CheckStatus::kFail, *scenario);
}

// A `faultline serve` session judged from its journal: the calls its URLs name, ended as its
// user states, or with the checks of an ending left n/a.
TEST(AppSubjectTest, AServedSessionIsJudgedFromItsJournalWithTheOutcomeItsUserStates) {
  const auto entry = [](int call, double arrived_ms, double ended_ms) {
    provider::JournalEntry e;
    e.attempt = 1;
    e.call = call;
    e.arrived = Duration(static_cast<long>(arrived_ms * 1000));
    e.ended = Duration(static_cast<long>(ended_ms * 1000));
    e.end = provider::EndKind::kCompleted;
    e.truth.failure_class = "truncated";
    return e;
  };
  ServedSession session{.journal = {entry(0, 100, 140), entry(1, 120, 300)},
                        .scripted_from = std::nullopt,
                        .wall_start = {}};
  EXPECT_FALSE(ServedTrace({}, std::nullopt, std::nullopt)) << "nothing reached it";

  const auto unknown = ServedTrace(session, std::nullopt, std::nullopt);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->calls, 2);
  EXPECT_TRUE(unknown->outcome_unknown);
  ASSERT_EQ(unknown->client.size(), 1u);  // the hello alone
  EXPECT_EQ(Ms(unknown->journal.front().arrived), 0) << "time zero is the first request";
  ExpectStatus(*unknown, "LIFE-001", CheckStatus::kNotApplicable);
  ExpectStatus(*unknown, "COMMIT-002", CheckStatus::kNotApplicable);

  const auto committed = ServedTrace(session, std::nullopt, StatedOutcome::kCommitted);
  ASSERT_TRUE(committed);
  EXPECT_FALSE(committed->outcome_unknown);
  ASSERT_EQ(committed->client.size(), 3u);
  EXPECT_EQ(committed->client[2].call, 1);
  EXPECT_EQ(Ms(committed->client[2].at), 200) << "call 1 ends with its last exchange";
  ExpectStatus(*committed, "LIFE-001", CheckStatus::kPass);
  ExpectStatus(*committed, "COMMIT-002", CheckStatus::kFail);
}

// Two calls 6 s apart while the listener refuses connections for its first 4 s: the app's first
// call is refused and fails (unless a loaded machine starts it after 4 s), its second is answered.
// Its first attempt was never seen, so its twin runs from the launch as well as from the first
// arrival: failing the first call is what its policy does from the launch, not a finding (RunAll
// over sockets, with the runner's twin).
TEST(AppSubjectTest, AnAppMetByARefusedListenerIsJudgedFromEveryPossibleStart) {
  auto scenario = scenario::ParseScenario(R"(
faultline: 1
name: exec/refused-then-answered
description: The listener refuses for 4 s; two calls 6 s apart.
dialect: openai-chat
request: {calls: 2, call_interval: 6s}
listener_outages: [{from: 0s, for: 4s}]
responses:
  - content: {text: "Hello"}
expect: {outcome: committed}
)",
                                          "test");
  ASSERT_TRUE(scenario) << scenario.error().ToString();
  RunnerOptions options;
  options.world = WorldChoice::kReal;
  options.exec =
      "python3 -c \"import os, sys, urllib.request as u\n"
      "try: u.urlopen(u.Request(os.environ['FAULTLINE_ENDPOINT'], "
      "data=os.environ['FAULTLINE_REQUEST'].encode(), "
      "headers={'content-type': 'application/json'}), timeout=10).read()\n"
      "except OSError: sys.exit(1)\"";
  options.app_policy = nlohmann::json{{"extends", "no-retry"}};
  options.timeout = std::chrono::seconds(60);
  auto result = RunAll({*scenario}, options, {});
  ASSERT_TRUE(result.has_value()) << result.error();
  ASSERT_EQ(result->scenarios.size(), 1u);
  const report::ScenarioResult& run = result->scenarios.front();
  const auto endings = run.trace.value("endings", nlohmann::json::array());
  ASSERT_EQ(endings.size(), 2u);
  EXPECT_EQ(endings[1], "call 1: the app exited with status 0");
  for (const report::CheckResult& check : run.checks) {
    EXPECT_NE(check.status, CheckStatus::kFail) << check.id << ": " << check.evidence;
  }
}

}  // namespace
}  // namespace faultline::harness
