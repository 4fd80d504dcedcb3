// JUnit XML: structure CI viewers read (counts of suites, cases, failures, errors), escaping of
// hostile evidence, time in seconds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "reports/report.h"
#include "reports/tests/test_results.h"

namespace faultline::report {
namespace {

using testing::Check;
using testing::CheckXml;
using testing::CountOccurrences;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Scenario;

std::string JUnit(const RunResult& result) {
  std::ostringstream out;
  RenderJUnit(result, out);
  return out.str();
}

TEST(JUnit, OneCasePerRunOneFailurePerFailedCheckWithTheEvidenceAsMessage) {
  RunResult result;
  result.wall_ms = 2500;
  result.subject = "node sdk.mjs";
  result.scenarios = {
      Scenario(
          "rate-limit/a", Verdict::kPass,
          {Check("RETRY-004", CheckStatus::kPass), Check("TIME-001", CheckStatus::kNotApplicable)}),
      Scenario("truncation/b", Verdict::kFail,
               {Check("COMMIT-004", CheckStatus::kFail, "committed a truncated text"),
                Check("LIFE-001", CheckStatus::kPass),
                Check("RES-001", CheckStatus::kFail, "left open")}),
      Scenario("malformed/c", Verdict::kError, {})};
  result.scenarios[2].error = "adapter exited\nwith status 1";
  result.scenarios[1].wall_ms = 1234.5;
  const std::string xml = JUnit(result);
  const testing::XmlCheck check = CheckXml(xml);
  ASSERT_TRUE(check.ok) << check.error << "\n" << xml;
  EXPECT_EQ(check.elements.at("testsuites"), 1);
  EXPECT_EQ(check.elements.at("testsuite"), 3) << "one per scenario and world";
  EXPECT_EQ(check.elements.at("testcase"), 3);
  EXPECT_EQ(check.elements.at("failure"), 2) << "n/a and passed checks do not fail";
  EXPECT_EQ(check.elements.at("error"), 1);
  EXPECT_EQ(check.elements.at("system-out"), 3);
  EXPECT_THAT(
      xml,
      HasSubstr(R"(<testsuites name="faultline" tests="3" failures="1" errors="1" time="2.500">)"));
  EXPECT_THAT(
      xml,
      HasSubstr(
          R"(<testsuite name="node sdk.mjs [virtual] truncation/b" tests="1" failures="1" errors="0" skipped="0" time="1.234" file="&lt;builtin&gt;/truncation/b.yaml")"));
  EXPECT_THAT(xml,
              HasSubstr(R"(<testcase name="truncation/b" classname="truncation" time="1.234">)"));
  EXPECT_THAT(
      xml,
      HasSubstr(
          R"(<failure message="COMMIT-004: committed a truncated text" type="COMMIT-004">COMMIT-004: statement of COMMIT-004
committed a truncated text</failure>)"));
  EXPECT_THAT(
      xml,
      HasSubstr(R"(<error message="adapter exited&#10;with status 1" type="error">adapter exited
with status 1</error>)"));
  EXPECT_THAT(xml, HasSubstr("[n/a] TIME-001")) << "system-out lists every check";
}

TEST(JUnit, ThresholdsAreTestCasesOfTheirScenariosSuite) {
  RunResult result;
  result.subject = "ref";
  result.scenarios = {Scenario("rate-limit/a", Verdict::kPass, {})};
  result.thresholds = {ThresholdResult{.name = "rate-limit/a",
                                       .world = "virtual",
                                       .expression = "ttft.p99<2s",
                                       .origin = "cli",
                                       .status = CheckStatus::kFail,
                                       .evidence = "2100 ms"},
                       ThresholdResult{.name = "rate-limit/a",
                                       .world = "virtual",
                                       .expression = "ttft.max<9s",
                                       .origin = "expect",
                                       .status = CheckStatus::kNotApplicable,
                                       .evidence = "no sample"},
                       ThresholdResult{.name = "rate-limit/a",
                                       .world = "virtual",
                                       .expression = "attempts.max<3",
                                       .origin = "expect",
                                       .status = CheckStatus::kPass,
                                       .evidence = "1"}};
  const std::string xml = JUnit(result);
  const testing::XmlCheck check = CheckXml(xml);
  ASSERT_TRUE(check.ok) << check.error << "\n" << xml;
  EXPECT_EQ(check.elements.at("testcase"), 4);
  EXPECT_THAT(xml, HasSubstr(R"(<testsuites name="faultline" tests="4" failures="1" errors="0")"));
  EXPECT_THAT(xml, HasSubstr(R"(tests="4" failures="1" errors="0" skipped="1")"));
  EXPECT_THAT(xml,
              HasSubstr(R"(<testcase name="threshold ttft.p99&lt;2s" classname="rate-limit")"));
  EXPECT_THAT(xml, HasSubstr(R"(<failure message="ttft.p99&lt;2s: 2100 ms" type="threshold">)"));
  EXPECT_THAT(xml, HasSubstr(R"(<skipped message="ttft.max&lt;9s: no sample"/>)"));
}

TEST(JUnit, SuiteTimeIsTheWallClockSpanOfItsRuns) {
  RunResult result;
  result.wall_ms = 10000;
  for (int repetition = 0; repetition < 4; ++repetition) {  // four 3 s runs, side by side
    ScenarioResult run = Scenario("a/x", Verdict::kPass, {});
    run.repetition = repetition;
    run.started_ms = 100.0 * repetition;
    run.wall_ms = 3000;
    result.scenarios.push_back(run);
  }
  const std::string xml = JUnit(result);
  EXPECT_THAT(xml, HasSubstr(R"(tests="4" failures="0" errors="0" skipped="0" time="3.300")"))
      << "not the 12 s sum";
}

TEST(JUnit, AnInterruptedRunIsAnErrorOfItsOwn) {
  RunResult result;
  result.subject = "ref";
  result.scenarios = {Scenario("a/x", Verdict::kPass, {})};
  result.interrupted = Interruption{.reason = "SIGINT", .planned_runs = 3};
  const std::string xml = JUnit(result);
  const testing::XmlCheck check = CheckXml(xml);
  ASSERT_TRUE(check.ok) << check.error;
  EXPECT_THAT(xml, HasSubstr(R"(<testsuites name="faultline" tests="2" failures="0" errors="1")"));
  EXPECT_THAT(xml, HasSubstr(R"(<error message="interrupted by SIGINT: 1 of 3 runs finished)"));
  EXPECT_THAT(xml, HasSubstr(R"(<property name="interrupted" value="by SIGINT: 1 of 3 runs)"));
}

TEST(JUnit, HostileEvidenceIsEscaped) {
  const std::string nasty =
      "</failure><script>alert(\"x\")</script> & 'q' ]]> \x01\x02 bad utf-8 \xFF\xFE end";
  RunResult result;
  result.subject = "adapter \"quoted\" <&>";
  result.scenarios = {
      Scenario("a/<b>&\"c\"", Verdict::kFail, {Check("ID-<1>", CheckStatus::kFail, nasty)})};
  result.scenarios[0].checks[0].statement = "line 1\nline 2 \"quoted\"";
  result.scenarios[0].trace = {{"stderr", "Traceback <module>\x1b[31m red"}};
  const std::string xml = JUnit(result);
  const testing::XmlCheck check = CheckXml(xml);
  ASSERT_TRUE(check.ok) << check.error << "\n" << xml;
  EXPECT_EQ(check.elements.at("failure"), 1);
  EXPECT_EQ(check.elements.at("system-err"), 1);
  EXPECT_THAT(xml, Not(HasSubstr("<script>")));
  EXPECT_THAT(
      xml,
      HasSubstr(
          "&lt;/failure&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;"));
  EXPECT_THAT(xml, HasSubstr("\\x01\\x02"));
  EXPECT_THAT(xml, HasSubstr("bad utf-8 \xEF\xBF\xBD\xEF\xBF\xBD end"));
  EXPECT_THAT(xml, HasSubstr(R"(message="ID-&lt;1&gt;: &lt;/failure&gt;&lt;script&gt;)"))
      << "the message is the evidence";
  EXPECT_THAT(xml, HasSubstr(R"(name="a/&lt;b&gt;&amp;&quot;c&quot;" classname="a")"));
  EXPECT_THAT(xml, HasSubstr(R"(value="adapter &quot;quoted&quot; &lt;&amp;&gt;")"));
  EXPECT_THAT(xml, HasSubstr("Traceback &lt;module&gt;\\x1B[31m red"));
}

TEST(JUnit, OneSuitePerScenarioAndWorldAndRepetitionsFromOne) {
  RunResult result;
  result.world = "mixed";
  ScenarioResult virtual0 = Scenario("a/x", Verdict::kPass, {});
  ScenarioResult virtual1 = virtual0;
  virtual1.repetition = 1;
  virtual1.verdict = Verdict::kFail;
  ScenarioResult real0 = virtual0;
  real0.world = "real";
  result.scenarios = {virtual0, real0, virtual1};
  const std::string xml = JUnit(result);
  const testing::XmlCheck check = CheckXml(xml);
  ASSERT_TRUE(check.ok) << check.error;
  EXPECT_EQ(check.elements.at("testsuite"), 2);
  EXPECT_THAT(xml,
              HasSubstr(R"(<testsuite name=" [virtual] a/x" tests="2" failures="1" errors="0")"));
  EXPECT_THAT(xml, HasSubstr(R"(<testsuite name=" [real] a/x" tests="1" failures="0" errors="0")"));
  EXPECT_THAT(xml, HasSubstr(R"(name="a/x [rep 1]")"));
  EXPECT_THAT(xml, HasSubstr(R"(name="a/x [rep 2]")"));
  EXPECT_THAT(xml, Not(HasSubstr(R"(name="a/x [rep 0]")"))) << "numbered from 1, as on the console";
  // A failed verdict without a failed check still shows as failed.
  EXPECT_EQ(check.elements.at("failure"), 1);
  EXPECT_THAT(xml, HasSubstr(R"(type="verdict")"));
}

// A passed run with an advisory stays passed: no <failure>, no <skipped>; its suite's properties
// list the advisory with its runs folded and its system-out opens with it.
TEST(JUnit, AdvisoriesOfAPassedRunArePropertiesAndSystemOutNotFailures) {
  const std::string xml = JUnit(testing::FailuresAndAdvisories());
  ASSERT_TRUE(CheckXml(xml).ok) << CheckXml(xml).error;
  EXPECT_THAT(xml, HasSubstr(R"(<testsuites name="faultline" tests="7" failures="3" errors="0")"))
      << "the advisories' passed runs are not failures";
  const std::size_t suite =
      xml.find("server-error/y\" tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"0\"");
  ASSERT_NE(suite, std::string::npos) << xml;
  const std::string passed = xml.substr(suite, xml.find("</testsuite>", suite) - suite);
  EXPECT_THAT(passed, Not(HasSubstr("<failure")));
  EXPECT_THAT(passed, Not(HasSubstr("<skipped")));
  EXPECT_THAT(passed, HasSubstr(R"(<property name="advisories" value="2"/>)"));
  EXPECT_THAT(
      passed,
      HasSubstr(
          R"(<property name="advisory" value="ADV-004 in 2 of 2 runs (runs 1, 2): gave up after one 503"/>)"));
  EXPECT_THAT(
      passed,
      HasSubstr(
          "<system-out>ADVISORY ADV-004: gave up after one 503\n(advisories do not fail a run"));
  EXPECT_THAT(passed, HasSubstr("[advisory] ADV-004: statement of ADV-004"));
  // The failed scenario: its violations fail, its advisory is a property, not a <failure>.
  const std::size_t failed_at = xml.find("rate-limit/x\" tests=\"3\" failures=\"3\"");
  ASSERT_NE(failed_at, std::string::npos);
  const std::string failed = xml.substr(failed_at, xml.find("</testsuite>", failed_at) - failed_at);
  EXPECT_EQ(testing::CountOccurrences(failed, R"(<failure message="RETRY-004: )"), 3);
  EXPECT_EQ(testing::CountOccurrences(failed, R"(<failure message="advisory)"), 0);
  EXPECT_THAT(
      failed,
      HasSubstr(
          R"(<property name="advisory" value="ADV-001 in 3 of 3 runs (runs 1, 2, 3): waited less than the Retry-After"/>)"));
}

// With --fail-on advisory the run failed on its advisory: then it is a failure.
TEST(JUnit, AnAdvisoryThatFailedTheRunIsAFailure) {
  RunResult result;
  result.scenarios = {
      Scenario("server-error/y", Verdict::kFail, {testing::Advisory("ADV-004", "gave up")})};
  const std::string xml = JUnit(result);
  EXPECT_THAT(xml, HasSubstr(R"(<failure message="advisory ADV-004: gave up" type="ADV-004">)"));
  EXPECT_THAT(xml, HasSubstr(R"(failures="1")"));
}

TEST(JUnit, EmptyResultIsStillAValidReport) {
  RunResult result;
  result.world = "virtual";
  const std::string xml = JUnit(result);
  const testing::XmlCheck check = CheckXml(xml);
  ASSERT_TRUE(check.ok) << check.error;
  EXPECT_EQ(check.elements.count("testsuite"), 0u);
  EXPECT_EQ(check.elements.count("testcase"), 0u);
  EXPECT_TRUE(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
}

TEST(JUnit, SampleFixtureCounts) {
  const RunResult sample = testing::SampleResult();
  const std::string xml = JUnit(sample);
  const testing::XmlCheck check = CheckXml(xml);
  ASSERT_TRUE(check.ok) << check.error;
  EXPECT_EQ(check.elements.at("testcase"), 5);
  EXPECT_EQ(check.elements.at("failure"), 1);
  EXPECT_EQ(check.elements.at("error"), 1);
  EXPECT_EQ(CountOccurrences(xml, "<testsuite "), 5);
  EXPECT_EQ(CountOccurrences(xml, "<property "), 25)
      << "each suite: subject, tool, seed, fingerprint, start";
}

}  // namespace
}  // namespace faultline::report
