// junit.xml as Jenkins reads it: valid against the xunit plugin's junit-10.xsd
// (reports/schema/junit-10.xsd), checked with `xmllint --schema` for every shape a run can take:
// passes, failures, subject errors, repetitions, several worlds, hostile evidence, an
// interrupted run, an empty run.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/report.h"
#include "reports/tests/test_results.h"

namespace faultline::report {
namespace {

namespace fs = std::filesystem;

struct Validation {
  int status = -1;
  std::string output;
};

// xmllint's verdict on `xml` against the XSD.
Validation ValidateAgainstXsd(const std::string& xml) {
  const fs::path dir =
      fs::temp_directory_path() / ("faultline-junit-xsd-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::create_directories(dir);
  std::ofstream(dir / "junit.xml") << xml;
  const std::string command = "xmllint --noout --schema '" + std::string(FAULTLINE_JUNIT_XSD_PATH) +
                              "' '" + (dir / "junit.xml").string() + "' > '" +
                              (dir / "out.txt").string() + "' 2>&1";
  const int raw = std::system(command.c_str());
  Validation validation{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1,
                        testing::ReadFile((dir / "out.txt").string())};
  fs::remove_all(dir);
  return validation;
}

std::string JUnit(const RunResult& result) {
  std::ostringstream out;
  RenderJUnit(result, out);
  return out.str();
}

TEST(JUnitXsd, XmllintIsThere) {
  // The other tests would pass vacuously without it: tools/setup.sh installs libxml2-utils.
  ASSERT_EQ(std::system("xmllint --version > /dev/null 2>&1"), 0);
}

TEST(JUnitXsd, AFullResultIsValid) {
  const Validation v = ValidateAgainstXsd(JUnit(testing::FullResult()));
  EXPECT_EQ(v.status, 0) << v.output;
}

TEST(JUnitXsd, RepetitionsWorldsErrorsAndHostileTextAreValid) {
  RunResult result = testing::FullResult();
  result.interrupted.reset();
  std::vector<ScenarioResult> more;
  for (const ScenarioResult& scenario : result.scenarios) {
    for (const char* world : {"virtual", "real"}) {
      for (int repetition = 0; repetition < 3; ++repetition) {
        ScenarioResult copy = scenario;
        copy.world = world;
        copy.repetition = repetition;
        copy.started_ms = 100.0 * repetition;
        more.push_back(copy);
      }
    }
  }
  more.front().verdict = Verdict::kError;
  more.front().error = "exited <1> & \"quoted\"\x01\xff";
  more.back().checks.push_back(testing::Check("X-1", CheckStatus::kFail, "]]> \x02 \xc3"));
  more.back().verdict = Verdict::kFail;
  result.scenarios = more;
  result.world = "both";
  const Validation v = ValidateAgainstXsd(JUnit(result));
  EXPECT_EQ(v.status, 0) << v.output;
}

TEST(JUnitXsd, AdvisoriesOfPassedAndFailedRunsAreValid) {
  const Validation v = ValidateAgainstXsd(JUnit(testing::FailuresAndAdvisories()));
  EXPECT_EQ(v.status, 0) << v.output;
}

TEST(JUnitXsd, InterruptedAndEmptyRunsAreValid) {
  RunResult interrupted = testing::FullResult();
  interrupted.interrupted = Interruption{.reason = "SIGTERM", .planned_runs = 40};
  EXPECT_EQ(ValidateAgainstXsd(JUnit(interrupted)).status, 0);
  RunResult empty;
  const Validation v = ValidateAgainstXsd(JUnit(empty));
  EXPECT_EQ(v.status, 0) << v.output;
}

TEST(JUnitXsd, TheValidatorRejectsWhatJenkinsRejects) {
  // The check can fail: the attribute the issue found (`skipped` on testsuites) is refused.
  const Validation v =
      ValidateAgainstXsd(R"(<?xml version="1.0"?><testsuites tests="0" skipped="0"></testsuites>)");
  EXPECT_NE(v.status, 0) << v.output;
}

}  // namespace
}  // namespace faultline::report
