// ToJson / RunResultFromJson: exact round trips and strict errors that name the JSON path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/report.h"
#include "reports/run_result.h"
#include "reports/tests/test_results.h"

namespace faultline::report {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(RunResultJson, RoundTripIsExact) {
  const RunResult original = testing::FullResult();
  auto back = RunResultFromJson(ToJson(original));
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(*back, original);
  EXPECT_EQ(back->seed, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(back->wall_ms, 0.1 + 0.2);
}

TEST(RunResultJson, RoundTripThroughTextIsExact) {
  // What `faultline report render` sees: the text RenderJson wrote, parsed again.
  const RunResult original = testing::FullResult();
  std::ostringstream text;
  RenderJson(original, text);
  auto back = RunResultFromJson(json::parse(text.str()));
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(*back, original);
}

// WriteJson writes one run at a time, yet the very bytes of the whole document's dump: for no
// run, for every field set, for the fixture, and for evidence that holds the text the writer
// looks for, newlines and an invalid byte.
TEST(RunResultJson, WriteJsonIsTheWholeDocumentsDumpByteForByte) {
  RunResult tricky = testing::FullResult();
  tricky.scenarios.push_back(tricky.scenarios.front());
  tricky.scenarios.back().name = "x/\n  \"scenarios\": []";
  tricky.scenarios.back().checks.push_back(
      testing::Check("EXPECT-OUTCOME", CheckStatus::kFail, "line\n  \"scenarios\": [] \xff"));
  tricky.subject = "the \"scenarios\": [] subject";
  for (const RunResult& result : {RunResult{}, testing::FullResult(), testing::SampleResult(),
                                  testing::FailuresAndAdvisories(), tricky}) {
    std::ostringstream written;
    WriteJson(result, written);
    EXPECT_EQ(written.str(),
              ToJson(result).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  }
}

TEST(RunResultJson, RoundTripOfDefaultsAndTheFixture) {
  auto empty = RunResultFromJson(ToJson(RunResult{}));
  ASSERT_TRUE(empty.has_value()) << empty.error();
  EXPECT_EQ(*empty, RunResult{});

  const RunResult sample = testing::SampleResult();
  EXPECT_EQ(sample.scenarios.size(), 5u);
  auto back = RunResultFromJson(ToJson(sample));
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(*back, sample);
}

TEST(RunResultJson, WritesDerivedSummaryAndOmitsAbsentOptionals) {
  const json out = ToJson(testing::FullResult());
  EXPECT_EQ(out["format"], kResultFormat);
  EXPECT_EQ(out["summary"], json({{"total", 3}, {"passed", 1}, {"failed", 1}, {"errors", 1}}));
  const json& fail_metrics = out["scenarios"][1]["metrics"];
  EXPECT_FALSE(fail_metrics.contains("first_token_ms"));
  EXPECT_TRUE(fail_metrics.contains("terminal_ms"));
  EXPECT_FALSE(out["scenarios"][0].contains("error")) << "empty error text is not written";
  EXPECT_EQ(out["scenarios"][2]["error"], "adapter exited with status 1");
  EXPECT_TRUE(out["scenarios"][2]["trace"].is_null());
  EXPECT_EQ(out["scenarios"][0]["checks"][1]["status"], "n/a");
}

// Applies `edit` to the JSON of FullResult() and returns the parse error.
std::string ErrorAfter(const std::function<void(json&)>& edit) {
  json j = ToJson(testing::FullResult());
  edit(j);
  auto result = RunResultFromJson(j);
  return result.has_value() ? "(parsed)" : result.error();
}

TEST(RunResultJson, ErrorsNameTheJsonPath) {
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][1]["checks"][0]["status"] = "PASS"; }),
            "scenarios[1].checks[0].status: expected one of pass|fail|n/a, got \"PASS\"");
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][2]["verdict"] = "broken"; }),
            "scenarios[2].verdict: expected one of pass|fail|error, got \"broken\"");
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][0].erase("seed"); }),
            "scenarios[0].seed: required field is missing");
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][0]["metrics"]["attempts"] = "2"; }),
            "scenarios[0].metrics.attempts: expected an integer, got string");
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][0]["metrics"]["terminal_ms"] = nullptr; }),
            "scenarios[0].metrics.terminal_ms: expected a number, got null");
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][0]["tags"][1] = 5; }),
            "scenarios[0].tags[1]: expected a string, got number");
  EXPECT_EQ(ErrorAfter([](json& j) { j["latency"][0]["terminal_ms"].erase("p95"); }),
            "latency[0].terminal_ms.p95: required field is missing");
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][0]["checks"][0]["extra"] = 1; }),
            "scenarios[0].checks[0].extra: unknown field");
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][1]["trace"] = json::array(); }),
            "scenarios[1].trace: expected an object or null, got array");
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"] = json::object(); }),
            "scenarios: expected an array, got object");
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][0] = "x"; }),
            "scenarios[0]: expected an object, got string");
}

TEST(RunResultJson, NumbersAreChecked) {
  EXPECT_EQ(ErrorAfter([](json& j) { j["seed"] = -1; }),
            "seed: expected an unsigned integer, got number");
  EXPECT_EQ(ErrorAfter([](json& j) { j["seed"] = 1.5; }),
            "seed: expected an unsigned integer, got number");
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][0]["repetition"] = -2; }),
            "scenarios[0].repetition: expected an integer >= 0, got -2");
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][0]["repetition"] = 1LL << 40; }),
            "scenarios[0].repetition: expected an integer >= 0, got 1099511627776");
  EXPECT_EQ(ErrorAfter([](json& j) { j["wall_ms"] = 12; }), "(parsed)") << "integers are numbers";
}

TEST(RunResultJson, FormatVersionIsCheckedFirst) {
  EXPECT_EQ(ErrorAfter([](json& j) {
              j["format"] = 2;
              j["new_field_of_format_2"] = true;
            }),
            "format: unsupported result format 2 (this build reads format 1)");
  EXPECT_EQ(ErrorAfter([](json& j) { j.erase("format"); }), "format: required field is missing");
  auto not_object = RunResultFromJson(json::array());
  EXPECT_EQ(not_object.error(), "(top level): expected an object, got array");
}

TEST(RunResultJson, SummaryIsOptionalButMustAgree) {
  EXPECT_EQ(ErrorAfter([](json& j) { j.erase("summary"); }), "(parsed)");
  EXPECT_EQ(ErrorAfter([](json& j) { j["summary"]["failed"] = 0; }),
            "summary.failed: says 0 but the scenarios give 1");
  EXPECT_EQ(ErrorAfter([](json& j) { j["summary"]["skipped"] = 0; }),
            "summary.skipped: unknown field");
}

TEST(RunResultJson, OptionalFieldsMayBeAbsent) {
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][2].erase("error"); }), "(parsed)");
  EXPECT_EQ(ErrorAfter([](json& j) { j["latency"][0].erase("first_token_ms"); }), "(parsed)");
  EXPECT_EQ(ErrorAfter([](json& j) { j["scenarios"][0]["metrics"].erase("first_token_ms"); }),
            "(parsed)");
}

}  // namespace
}  // namespace faultline::report
