// Pieces of the run report (RenderHtml) shared by its files: html.cc writes the header, the
// filter and the sections of every run; html_overview.cc the failures, advisories and thresholds
// at the top. Internal to reports/. Pure functions.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "reports/run_result.h"

namespace faultline::report::internal {

std::string Lowercase(std::string_view text);  // ASCII only

// "run-rate-limit-retry-after-virtual": the same for the same scenario and world in every report.
std::string GroupAnchor(const ScenarioResult& scenario);
// The group's anchor and the 1-based repetition: "run-...-virtual-3".
std::string RunAnchor(const ScenarioResult& scenario);
// "scenarios/x.yaml:2": where to open the scenario.
std::string SourceText(const ScenarioResult& scenario);
// "pass" | "fail" | "na": the CSS class of a check or threshold status.
std::string_view StatusClass(CheckStatus status);

// html_overview.cc: the failures (violations and broken runs, one row per scenario, world and
// check with its runs folded; the command that reproduces them once per scenario), then the
// advisories apart (id "advisories", one block per check ID), then crossed thresholds.
void WriteOverview(const RunResult& result, std::ostream& out);
// Every threshold in its own table (none when the run has none).
void WriteThresholds(const RunResult& result, std::ostream& out);

}  // namespace faultline::report::internal
