// `faultline serve --report DIR`: when the server stops, every session of a loaded scenario that
// a client reached is judged from its journal, as `faultline run --exec` judges an app
// (worlds/served_session.h), and the run's reports are written into DIR. For a test suite that
// runs its own app against the server (docs/testing-your-app.md).
#pragma once

#include <CLI/CLI.hpp>
#include <expected>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "fake_provider/server/server.h"
#include "harness/cli/cli.h"
#include "harness/cli/run_reports.h"
#include "nlohmann/json.hpp"
#include "scenarios/scenario.h"

namespace faultline::cli {

struct ServeReportOptions {
  std::string out_dir;  // "": no judging
  std::vector<std::string> formats{"json", "junit", "md", "html"};
  std::string policy;               // the app's declared policy: a preset or a file; "": none
  std::string outcome = "unknown";  // how every call ended: committed | failed | unknown
  std::string fail_on = "violation";
};

// Registers --report, --format, --policy, --outcome and --fail-on on `serve`.
void AddServeReportOptions(CLI::App& serve, ServeReportOptions& options);

// What the judging needs, read and checked before the server starts (a bad --policy or an
// unwritable folder must not cost a test suite's whole run).
struct ServeReportPlan {
  std::vector<PlannedReport> reports;
  std::optional<nlohmann::json> policy;  // the hello's policy object
  ServeReportOptions options;
};
std::expected<std::optional<ServeReportPlan>, std::string> PlanServeReport(
    const ServeReportOptions& options);

// Judges the stopped server's sessions and writes the reports; the exit code of the judgement
// (as `faultline run`'s), kSubjectError when no session saw a request, kReportWriteError (said
// on `err`) when a report could not be written.
ExitCode JudgeServedSessions(const provider::Server& server,
                             const std::vector<scenario::Scenario>& scenarios,
                             const ServeReportPlan& plan, std::uint64_t seed, std::ostream& out,
                             std::ostream& err);

}  // namespace faultline::cli
