// The conformance matrix: scenarios down, subjects across; a cell is pass, the violated check IDs,
// or error. Rendered as a self-contained HTML page and as a Markdown table.
#include <algorithm>
#include <map>
#include <string>

#include "fmt/format.h"
#include "reports/html_page.h"
#include "reports/report.h"
#include "reports/text.h"

namespace faultline::report {
namespace {

using internal::MarkdownCell;
using internal::XmlEscape;

std::vector<std::string> ColumnNames(const std::vector<RunResult>& results) {
  std::vector<std::string> names;
  std::map<std::string, int> seen;
  for (const RunResult& result : results) {
    const std::string base = result.subject.empty() ? "(unnamed subject)" : result.subject;
    const int count = ++seen[base];
    names.push_back(count == 1 ? base : fmt::format("{} ({})", base, count));
  }
  return names;
}

void Fold(const ScenarioResult& scenario, MatrixCell& cell) {
  cell.ran = true;
  if (scenario.verdict == Verdict::kError) {
    if (!cell.error) cell.error_text = scenario.error;
    cell.error = true;
  }
  for (const CheckResult& check : scenario.checks) {
    if (check.status != CheckStatus::kFail) continue;
    auto& list = check.severity == Severity::kAdvisory ? cell.advisories : cell.failed_checks;
    list.push_back(check.id);
  }
}

std::string CellText(const MatrixCell& cell) {
  if (!cell.ran) return "–";
  std::string text = cell.error ? "error" : cell.failed_checks.empty() ? "pass" : "";
  for (const std::string& id : cell.failed_checks) text += (text.empty() ? "" : " ") + id;
  if (!cell.advisories.empty()) {
    std::string advisories;
    for (const std::string& id : cell.advisories)
      advisories += (advisories.empty() ? "" : " ") + id;
    text += fmt::format(" (advisory: {})", advisories);
  }
  return text;
}

std::string_view CellClass(const MatrixCell& cell) {
  if (!cell.ran) return "none";
  if (cell.error) return "error";
  return cell.failed_checks.empty() ? "pass" : "fail";
}

int PassedCount(const ConformanceMatrix& matrix, std::size_t column) {
  return static_cast<int>(
      std::count_if(matrix.rows.begin(), matrix.rows.end(),
                    [&](const auto& row) { return row.cells[column].passed(); }));
}

int RanCount(const ConformanceMatrix& matrix, std::size_t column) {
  return static_cast<int>(std::count_if(matrix.rows.begin(), matrix.rows.end(),
                                        [&](const auto& row) { return row.cells[column].ran; }));
}

std::string MarkdownMatrixCell(const MatrixCell& cell) {
  if (!cell.ran) return "–";
  if (cell.passed() && cell.advisories.empty()) return "✅";
  if (cell.passed()) return "✅ " + MarkdownCell(CellText(cell).substr(5));
  return (cell.error ? "⚠️ " : "❌ ") + MarkdownCell(CellText(cell));
}

}  // namespace

ConformanceMatrix BuildMatrix(const std::vector<RunResult>& results) {
  ConformanceMatrix matrix;
  matrix.subjects = ColumnNames(results);
  std::map<std::string, std::size_t> row_of;
  for (std::size_t column = 0; column < results.size(); ++column) {
    for (const ScenarioResult& scenario : results[column].scenarios) {
      auto [it, inserted] = row_of.emplace(scenario.name, matrix.rows.size());
      if (inserted) {
        matrix.rows.push_back(
            {.scenario = scenario.name, .cells = std::vector<MatrixCell>(results.size())});
      }
      Fold(scenario, matrix.rows[it->second].cells[column]);
    }
  }
  for (auto& row : matrix.rows) {
    for (MatrixCell& cell : row.cells) {
      for (auto* list : {&cell.failed_checks, &cell.advisories}) {
        std::sort(list->begin(), list->end());
        list->erase(std::unique(list->begin(), list->end()), list->end());
      }
    }
  }
  return matrix;
}

void RenderMatrixHtml(const std::vector<RunResult>& results, std::ostream& out) {
  const ConformanceMatrix matrix = BuildMatrix(results);
  internal::WritePageStart("faultline conformance matrix", out);
  out << fmt::format(
      "<h1>Conformance matrix</h1><p class=\"facts-line\">{} scenarios × {} "
      "subjects. A cell lists the checks the subject violated.</p>\n",
      matrix.rows.size(), matrix.subjects.size());
  out << "<table class=\"matrix\"><thead><tr><th>Scenario</th>";
  for (const std::string& subject : matrix.subjects) {
    out << fmt::format("<th>{}</th>", XmlEscape(subject, true));
  }
  out << "</tr></thead><tbody>\n";
  for (const auto& row : matrix.rows) {
    out << fmt::format("<tr><td>{}</td>", XmlEscape(row.scenario, true));
    for (const MatrixCell& cell : row.cells) {
      const std::string title =
          cell.error_text.empty() ? ""
                                  : fmt::format(" title=\"{}\"", XmlEscape(cell.error_text, true));
      out << fmt::format("<td class=\"cell {}\"{}>{}</td>", CellClass(cell), title,
                         XmlEscape(CellText(cell), true));
    }
    out << "</tr>\n";
  }
  out << "</tbody><tfoot><tr><th>Passed</th>";
  for (std::size_t column = 0; column < matrix.subjects.size(); ++column) {
    out << fmt::format("<th>{} / {}</th>", PassedCount(matrix, column), RanCount(matrix, column));
  }
  out << "</tr></tfoot></table>\n";
  internal::WritePageEnd(out);
}

void RenderMatrixMarkdown(const std::vector<RunResult>& results, std::ostream& out) {
  const ConformanceMatrix matrix = BuildMatrix(results);
  out << "| Scenario |";
  for (const std::string& subject : matrix.subjects) out << ' ' << MarkdownCell(subject) << " |";
  out << "\n| --- |";
  for (std::size_t i = 0; i < matrix.subjects.size(); ++i) out << " --- |";
  out << '\n';
  for (const auto& row : matrix.rows) {
    out << "| " << MarkdownCell(row.scenario) << " |";
    for (const MatrixCell& cell : row.cells) {
      out << ' ' << MarkdownMatrixCell(cell) << " |";
    }
    out << '\n';
  }
  out << "| **Passed** |";
  for (std::size_t column = 0; column < matrix.subjects.size(); ++column) {
    out << fmt::format(" {} / {} |", PassedCount(matrix, column), RanCount(matrix, column));
  }
  out << '\n';
}

}  // namespace faultline::report
