// Renderers of a RunResult: JSON (the source of truth, readable back with RunResultFromJson),
// JUnit XML for CI test viewers, Markdown for a GitHub step summary, and one self-contained HTML
// page with an SVG timeline per scenario. Also the conformance matrix (several subjects side by
// side) as HTML and Markdown.
//
// Every renderer writes to an injected std::ostream and never fails: any byte string in a result
// (evidence from the network, adapter stderr) is escaped or repaired for the target format.
// Pure functions of their inputs. Thread-safety: none needed.
#pragma once

#include <expected>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "reports/run_result.h"

namespace faultline::report {

enum class Format { kJson, kJUnit, kMarkdown, kHtml };

// "json" | "junit" | "md" (also "markdown") | "html".
std::expected<Format, std::string> ParseFormat(std::string_view name);
std::string_view ToString(Format format);  // "json" | "junit" | "md" | "html"
// The usual file extension, with the dot: ".json", ".xml", ".md", ".html".
std::string_view FileExtension(Format format);
// The format a path's extension implies (".json", ".xml", ".md"/".markdown", ".html"/".htm").
std::optional<Format> FormatForPath(std::string_view path);

void Render(const RunResult& result, Format format, std::ostream& out);

// The one shell command that re-runs `scenario` of `result` as it ran: its file (none for the
// built-in catalogue), its name, the run seed, its world and the subject. A repetition k > 0
// needs `--repeat k+1` (per-run seeds derive from the run seed, the name and the repetition).
// Every console failure, summary.md and report.html end a failure with it.
std::string ReproduceCommand(const RunResult& result, const ScenarioResult& scenario);

// The command that re-judges `threshold`: its scenario with as many repetitions as it ran, in its
// world, with `--threshold` again when the threshold came from the command line.
std::string ReproduceCommand(const RunResult& result, const ThresholdResult& threshold);

void RenderJson(const RunResult& result, std::ostream& out);  // pretty, UTF-8 repaired
void RenderJUnit(const RunResult& result, std::ostream& out);
void RenderMarkdown(const RunResult& result, std::ostream& out);
void RenderHtml(const RunResult& result, std::ostream& out);

// The conformance matrix: one row per scenario name (in order of first appearance), one column
// per result (its subject). A cell is "pass", the IDs of the violated checks, "error", or empty
// when that subject did not run the scenario. Repetitions and worlds of one name are folded into
// one cell: any failure shows.
struct MatrixCell {
  bool ran = false;
  bool error = false;
  std::vector<std::string> failed_checks;  // violations: sorted, unique
  std::vector<std::string> advisories;     // failed advisory checks: sorted, unique
  std::string error_text;                  // the first error, for a tooltip
  bool passed() const { return ran && !error && failed_checks.empty(); }
};
struct ConformanceMatrix {
  std::vector<std::string> subjects;  // column headers; a repeated subject gets " (2)", ...
  struct Row {
    std::string scenario;
    std::vector<MatrixCell> cells;  // one per subject
  };
  std::vector<Row> rows;
};
ConformanceMatrix BuildMatrix(const std::vector<RunResult>& results);

void RenderMatrixHtml(const std::vector<RunResult>& results, std::ostream& out);
void RenderMatrixMarkdown(const std::vector<RunResult>& results, std::ostream& out);

}  // namespace faultline::report
