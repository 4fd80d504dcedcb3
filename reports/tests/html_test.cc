// The HTML report and matrix pages: self-contained, one SVG per scenario, everything escaped,
// filter and sections in place.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "fmt/format.h"
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

std::string Html(const RunResult& result) {
  std::ostringstream out;
  RenderHtml(result, out);
  return out.str();
}

void ExpectSelfContained(const std::string& html) {
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr("<script src")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("<iframe")));
  EXPECT_EQ(CountOccurrences(html, "<script"), 1) << "only the inline filter script";
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_TRUE(html.ends_with("</html>\n"));
}

// Every <svg>...</svg> in `html` is well-formed XML.
void ExpectSvgsWellFormed(const std::string& html) {
  for (std::size_t at = html.find("<svg"); at != std::string::npos;
       at = html.find("<svg", at + 1)) {
    const std::size_t end = html.find("</svg>", at);
    ASSERT_NE(end, std::string::npos);
    const testing::XmlCheck check = CheckXml(std::string_view(html).substr(at, end + 6 - at));
    EXPECT_TRUE(check.ok) << check.error;
  }
}

TEST(Html, SampleIsSelfContainedWithOneSvgPerScenario) {
  const RunResult sample = testing::SampleResult();
  const std::string html = Html(sample);
  ExpectSelfContained(html);
  EXPECT_EQ(CountOccurrences(html, "<svg"), static_cast<int>(sample.scenarios.size()));
  EXPECT_EQ(CountOccurrences(html, "<details class=\"scenario "), 5);
  ExpectSvgsWellFormed(html);
  // The fixture's evidence carries a script tag; it must arrive as text.
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, HasSubstr("\\x01"));
}

TEST(Html, SummaryFilterAndSections) {
  const std::string html = Html(testing::SampleResult());
  EXPECT_THAT(html, HasSubstr(R"(<span class="count pass">3 passed</span>)"));
  EXPECT_THAT(html, HasSubstr(R"(<span class="count fail">1 failed</span>)"));
  EXPECT_THAT(html, HasSubstr(R"(<span class="count error">1 error</span>)"));
  for (const char* id : {"show-all", "show-fail", "show-error", "show-pass"}) {
    EXPECT_THAT(html, HasSubstr(std::string("id=\"") + id + "\""));
    EXPECT_THAT(html, HasSubstr(std::string("label for=\"") + id + "\""));
  }
  EXPECT_THAT(
      html,
      HasSubstr(
          R"(<details class="scenario fail" id="run-truncation-closed-mid-line-virtual-1" data-name="truncation/closed-mid-line" open>)"));
  EXPECT_THAT(html, HasSubstr("<th>ID</th><th>Statement</th><th>Status</th><th>Evidence</th>"));
  EXPECT_THAT(html, HasSubstr("Recovery overhead"));
  EXPECT_THAT(html, HasSubstr("Subject stderr"));
  EXPECT_THAT(html, HasSubstr("KeyError: &#39;choices&#39;"));
  EXPECT_THAT(html, HasSubstr("adapter exited with status 1 before a terminal event"));
}

TEST(Html, TimelinePiecesFromTheTrace) {
  const std::string html = Html(testing::SampleResult());
  EXPECT_THAT(html, HasSubstr("retry-after 2.00 s")) << "the 429's scheduled retry bracket";
  EXPECT_THAT(html, HasSubstr("stall 5.00 s")) << "the idle-timeout stall";
  EXPECT_THAT(html, HasSubstr("class=\"cancel\"")) << "the cancel line";
  EXPECT_THAT(html, HasSubstr("failed ABORTED")) << "the terminal event with its code";
  EXPECT_THAT(html, HasSubstr(">committed</text>"));
  EXPECT_THAT(html, HasSubstr("client gave up (stall)"));
  EXPECT_THAT(html, HasSubstr("attempt 1 · 429"));
}

TEST(Html, EverythingFromTheResultIsEscaped) {
  RunResult result;
  result.subject = "<img src=x onerror=alert(1)>";
  result.fingerprint = "\"><script>";
  ScenarioResult s =
      Scenario("x/<script>alert(2)</script>", Verdict::kFail,
               {Check("<b>ID</b>", CheckStatus::kFail, "<script>alert(3)</script>")});
  s.description = "<i>desc</i>";
  s.error = "</pre><script>alert(4)</script>";
  s.tags = {"<tag>"};
  s.trace = nlohmann::json::parse(R"({
    "client": [{"t_ms": 1, "event": {"type": "<script>", "attempt": 1}},
               {"t_ms": 2, "event": {"type": "response/failed",
                "failure": {"code": "<script>alert(5)</script>"}}}],
    "journal": [{"index": 0, "attempt": 1, "arrived_ms": 0.5, "status": 200,
                 "plan": "<script>alert(6)</script>", "end": "<end>", "ended_ms": 3,
                 "writes": [{"t_ms": 1, "bytes": 10}]}],
    "stderr": "<script>alert(7)</script>"})");
  result.scenarios = {s};
  const std::string html = Html(result);
  ExpectSelfContained(html);
  ExpectSvgsWellFormed(html);
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(html, Not(HasSubstr("<img src=x")));
  EXPECT_THAT(html, Not(HasSubstr("<b>ID")));
  EXPECT_THAT(html, Not(HasSubstr("<i>desc")));
  EXPECT_THAT(html, Not(HasSubstr("<tag>")));
  EXPECT_THAT(html, Not(HasSubstr("<end>")));
  EXPECT_THAT(html, Not(HasSubstr("\"><script>")));
  for (int n = 2; n <= 7; ++n) {
    EXPECT_THAT(html, HasSubstr("alert(" + std::to_string(n) + ")")) << "shown as text: " << n;
  }
}

TEST(Html, ScenarioWithoutTraceSaysSoInPlainText) {
  RunResult result;
  result.scenarios = {Scenario("a/no-trace", Verdict::kPass, {}),
                      Scenario("a/null", Verdict::kPass, {})};
  result.scenarios[1].trace = nullptr;
  const std::string html = Html(result);
  EXPECT_EQ(CountOccurrences(html, "<svg"), 0) << "a scaled SVG label is clipped";
  EXPECT_EQ(CountOccurrences(html, "No trace: nothing reached the provider."), 2);
  EXPECT_THAT(html, HasSubstr("No checks were judged."));
}

TEST(Html, ProtocolErrorsAreListed) {
  RunResult result;
  result.scenarios = {Scenario("a/garbled", Verdict::kError, {})};
  result.scenarios[0].trace = {
      {"protocol_errors", {"line 3: not JSON: <oops>", "line 4: no type"}}};
  const std::string html = Html(result);
  EXPECT_THAT(html, HasSubstr("Adapter protocol errors (2)"));
  EXPECT_THAT(html, HasSubstr("line 3: not JSON: &lt;oops&gt;\nline 4: no type"));
}

TEST(Html, LatencySectionOnlyWithRepetitions) {
  RunResult result = testing::FullResult();
  EXPECT_THAT(Html(result), HasSubstr("Latency over repetitions"));
  result.latency.clear();
  EXPECT_THAT(Html(result), Not(HasSubstr("Latency over repetitions")));
}

TEST(Html, LargeReportsCollapsePassedScenarios) {
  RunResult result;
  for (int i = 0; i < 8; ++i) {
    result.scenarios.push_back(
        Scenario("a/s" + std::to_string(i), i == 3 ? Verdict::kFail : Verdict::kPass, {}));
  }
  const std::string html = Html(result);
  EXPECT_EQ(CountOccurrences(html, "\" open>"), 1) << "only the failure starts open";
}

TEST(Html, FailuresFirstWithEvidenceReproduceCommandAndALinkToTheRun) {
  const std::string html = Html(testing::SampleResult());
  const std::size_t overview = html.find("<section class=\"overview\"><h2>Failures</h2>");
  ASSERT_NE(overview, std::string::npos);
  EXPECT_LT(overview, html.find("<main>"));
  EXPECT_THAT(html, HasSubstr(R"(<a href="#run-truncation-closed-mid-line-virtual-1">)"));
  EXPECT_THAT(
      html,
      HasSubstr(
          R"(<td class="id">COMMIT-004</td><td class="runs"><a href="#run-truncation-closed-mid-line-virtual-1">run 1</a> · seed <span class="mono">42</span></td><td><pre class="evidence">attempt 1: the server closed)"));
  EXPECT_THAT(
      html,
      HasSubstr(
          R"(<code class="reproduce">faultline run --filter truncation/closed-mid-line --seed 42 --time virtual</code>)"));
}

TEST(Html, CrossedThresholdsOpenTheOverviewAndEveryThresholdHasItsTable) {
  RunResult result = testing::FullResult();
  const std::string html = Html(result);
  const std::size_t overview = html.find("<h3>Thresholds crossed</h3>");
  ASSERT_NE(overview, std::string::npos);
  EXPECT_LT(overview, html.find("<main>"));
  EXPECT_THAT(html, HasSubstr(R"(1 of 2 thresholds crossed</span>)"));
  EXPECT_THAT(html, HasSubstr(R"(<h2>Thresholds <small>(1 of 2 crossed)</small></h2>)"));
  EXPECT_THAT(
      html,
      HasSubstr(
          R"(<tr class="fail"><td><a href="#run-rate-limit-retry-after-virtual">rate-limit/retry-after</a></td><td>virtual</td><td class="id">ttft.p99 &lt; 2s</td><td><span class="badge fail">crossed</span></td>)"));
  EXPECT_THAT(html, HasSubstr(R"(<span class="badge na">n/a</span>)"));
  EXPECT_EQ(CountOccurrences(html, "ttft.count&gt;=1"), 1) << "n/a is not in the overview";
}

// 10,000 passing runs: 200 scenarios x 50 repetitions with the fixture's trace.
RunResult TenThousandRuns() {
  const ScenarioResult pass = testing::SampleResult().scenarios[0];
  RunResult result;
  result.subject = "faultline-ref 0.1.0 (in-process)";
  for (int name = 0; name < 200; ++name) {
    for (int repetition = 0; repetition < 50; ++repetition) {
      ScenarioResult run = pass;
      run.name = fmt::format("category-{}/scenario-{}", name % 19, name);
      run.repetition = repetition;
      result.scenarios.push_back(std::move(run));
    }
  }
  result.scenarios[777].verdict = Verdict::kFail;
  result.scenarios[777].checks[0].status = CheckStatus::kFail;
  result.scenarios[777].checks[0].evidence = "the evidence of run 28";
  return result;
}

TEST(Html, TenThousandRunsStayCompactAndRenderPassingRunsOnDemand) {
  const std::string html = Html(TenThousandRuns());
  EXPECT_LT(html.size(), 15u * 1000 * 1000);
  // One full body per scenario and verdict, not per run; passing ones inert until opened.
  EXPECT_EQ(CountOccurrences(html, "<svg"), 201);
  EXPECT_EQ(CountOccurrences(html, "<template>"), 200);
  EXPECT_EQ(CountOccurrences(html, R"(<details class="scenario group )"), 201);
  EXPECT_EQ(CountOccurrences(html, "\" open>"), 1) << "only the failure starts open";
  EXPECT_THAT(html, HasSubstr(R"(<script type="application/json" id="faultline-runs">)"));
  EXPECT_THAT(html, HasSubstr(R"("run-category-15-scenario-15-virtual-29",29,)"))
      << "every run keeps a stable anchor";
  EXPECT_THAT(html, HasSubstr("the evidence of run 28"));
  EXPECT_LT(html.find("the evidence of run 28"), html.find("<main>")) << "failures first";
}

TEST(Html, OneFailureInTenThousandRunsIsOneOverviewRow) {
  RunResult result = TenThousandRuns();
  for (ScenarioResult& run : result.scenarios) {
    if (run.name != result.scenarios[777].name) continue;
    run.verdict = Verdict::kFail;
    run.checks[0].status = CheckStatus::kFail;
  }
  const std::string html = Html(result);
  const std::string overview = html.substr(0, html.find("<main>"));
  EXPECT_EQ(CountOccurrences(overview, R"(<td class="id">)"), 1)
      << "the same check of one scenario and world folds into one row";
  EXPECT_EQ(CountOccurrences(overview, R"(<code class="reproduce">)"), 1);
  EXPECT_THAT(overview, HasSubstr(R"(<summary>50 of 50 runs</summary>)"));
  EXPECT_THAT(html, HasSubstr("FIRST_ROWS = 200")) << "long run tables render their first rows";
}

std::string Between(const std::string& text, std::string_view from, std::string_view to) {
  const std::size_t begin = text.find(from);
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find(to, begin) - begin);
}

TEST(Html, FailuresFoldOneRowPerCheckWithTheirRunsAndOneReproduceCommand) {
  const std::string html = Html(testing::FailuresAndAdvisories());
  const std::string failures = Between(html, "<h2>Failures</h2>", "</section>");
  ASSERT_FALSE(failures.empty());
  EXPECT_EQ(CountOccurrences(failures, R"(<tr class="scenario-row">)"), 1);
  EXPECT_EQ(CountOccurrences(failures, R"(<td class="id">)"), 2) << "RETRY-004, EXPECT-OUTCOME";
  EXPECT_EQ(CountOccurrences(failures, R"(<code class="reproduce">)"), 1) << "once per scenario";
  EXPECT_THAT(failures, HasSubstr("<summary>3 of 3 runs</summary>"));
  EXPECT_THAT(
      failures,
      HasSubstr(
          R"(<a href="#run-rate-limit-x-virtual-3">run 3</a> · seed <span class="mono">102</span>)"));
  EXPECT_THAT(failures, HasSubstr("early by 10 ms")) << "the first run's message";
  EXPECT_THAT(failures, Not(HasSubstr("early by 11 ms")));
  EXPECT_THAT(
      failures,
      HasSubstr(
          R"(<td class="id">EXPECT-OUTCOME</td><td class="runs"><a href="#run-rate-limit-x-virtual-2">run 2</a>)"));
  EXPECT_THAT(failures, Not(HasSubstr("ADV-"))) << "advisories have their own table";
}

TEST(Html, AdvisoriesAreCountedLinkedListedAndFilterable) {
  const std::string html = Html(testing::FailuresAndAdvisories());
  EXPECT_THAT(html, HasSubstr(R"(<a class="count advisory" href="#advisories">5 advisories</a>)"));
  const std::string list =
      Between(html, R"(<section class="overview advisories" id="advisories">)", "</section>");
  ASSERT_FALSE(list.empty());
  EXPECT_LT(html.find(R"(id="advisories")"), html.find("<main>"));
  EXPECT_THAT(list, HasSubstr("(5 in 5 runs)"));
  // One block per check ID, sorted; one row per scenario with its runs folded.
  EXPECT_LT(list.find(R"(<span class="id">ADV-001</span>)"),
            list.find(R"(<span class="id">ADV-004</span>)"));
  EXPECT_THAT(list, HasSubstr(R"(<a href="#run-server-error-y-virtual-1">server-error/y</a>)"));
  EXPECT_THAT(list, HasSubstr("<summary>2 of 2 runs</summary>"));
  EXPECT_THAT(list, HasSubstr("gave up after one 503"));
  EXPECT_THAT(list, Not(HasSubstr("RETRY-004")));
  // The filter keeps the sections with an advisory, passed ones too.
  EXPECT_THAT(html, HasSubstr(R"(<label for="show-advisory">With advisories (5)</label>)"));
  EXPECT_THAT(html, HasSubstr("#show-advisory:checked ~ main .scenario:not(.has-advisory)"));
  EXPECT_EQ(CountOccurrences(html, R"(<details class="scenario group pass has-advisory")"), 1);
  EXPECT_EQ(CountOccurrences(html, R"(<details class="scenario group fail has-advisory")"), 1);
  EXPECT_EQ(CountOccurrences(html, R"(<details class="scenario group pass")"), 2) << "demo/*";
  EXPECT_THAT(html, HasSubstr(R"(<span class="ids advisory">advisory ADV-004</span>)"));
}

TEST(Html, APassedRunListsItsAdvisoryToo) {
  RunResult result;
  result.scenarios.push_back(Scenario("server-error/y", Verdict::kPass,
                                      {testing::Advisory("ADV-004", "gave up after one 503")}));
  const std::string html = Html(result);
  EXPECT_THAT(html, HasSubstr("All 1 runs passed."));
  EXPECT_THAT(html, HasSubstr(R"(<a href="#advisories">1 advisory below</a>)"));
  EXPECT_THAT(html, HasSubstr(R"(id="advisories")"));
  EXPECT_THAT(html, HasSubstr(R"(<details class="scenario pass has-advisory")"));
}

TEST(Html, NoAdvisoryNoAdvisorySectionNorFilter) {
  const std::string html = Html(testing::SampleResult());
  EXPECT_THAT(html, Not(HasSubstr(R"(id="advisories")")));
  EXPECT_THAT(html, Not(HasSubstr(R"(id="show-advisory")")));
}

TEST(HtmlMatrix, CellsAndTotals) {
  RunResult ref;
  ref.subject = "ref";
  ref.scenarios = {
      Scenario("a/one", Verdict::kPass, {}),
      Scenario("a/two", Verdict::kFail,
               {Check("RETRY-002", CheckStatus::kFail), Check("RETRY-001", CheckStatus::kFail)})};
  RunResult sdk = ref;
  sdk.subject = "<sdk>";
  sdk.scenarios[0].verdict = Verdict::kError;
  sdk.scenarios[0].error = "crashed \"hard\"";
  sdk.scenarios.push_back(Scenario("a/three", Verdict::kPass, {}));
  RunResult again = ref;  // same subject twice: the column names stay apart
  std::ostringstream out;
  RenderMatrixHtml({ref, sdk, again}, out);
  const std::string html = out.str();
  ExpectSelfContained(html);
  EXPECT_THAT(html, HasSubstr("<th>ref</th><th>&lt;sdk&gt;</th><th>ref (2)</th>"));
  EXPECT_THAT(html, HasSubstr(R"(<td class="cell fail">RETRY-001 RETRY-002</td>)"));
  EXPECT_THAT(html,
              HasSubstr(R"(<td class="cell error" title="crashed &quot;hard&quot;">error</td>)"));
  EXPECT_THAT(html, HasSubstr(R"(<td class="cell none">–</td>)"));
  EXPECT_THAT(html, HasSubstr("<th>Passed</th><th>1 / 2</th><th>1 / 3</th><th>1 / 2</th>"));
}

TEST(HtmlMatrix, RepetitionsFoldIntoOneCell) {
  RunResult ref;
  ref.subject = "ref";
  ScenarioResult first = Scenario("a/one", Verdict::kPass, {Check("X-1", CheckStatus::kPass)});
  ScenarioResult second = Scenario("a/one", Verdict::kFail, {Check("X-1", CheckStatus::kFail)});
  second.repetition = 1;
  ScenarioResult third = second;
  third.repetition = 2;
  ref.scenarios = {first, second, third};
  const ConformanceMatrix matrix = BuildMatrix({ref});
  ASSERT_EQ(matrix.rows.size(), 1u);
  EXPECT_EQ(matrix.rows[0].cells[0].failed_checks, std::vector<std::string>{"X-1"});
  EXPECT_FALSE(matrix.rows[0].cells[0].passed());
}

}  // namespace
}  // namespace faultline::report
