#include "scenarios/catalog_index.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <map>

namespace faultline::scenario {
namespace {

constexpr std::string_view kBuiltinPrefix = "<builtin>/";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

bool EndsSentence(std::string_view text, std::size_t at) {
  const char c = text[at];
  if (c != '.' && c != '!' && c != '?') return false;
  return at + 1 == text.size() || IsSpace(text[at + 1]);
}

// A table cell: no line breaks, no unescaped '|', no '<' that a renderer could take for HTML.
std::string Cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '<') {
      out += "&lt;";
    } else {
      out += IsSpace(c) ? ' ' : c;
    }
  }
  return out;
}

// GitHub's heading anchor for a category name (lower case, letters, digits, '-' and '_').
std::string Anchor(std::string_view category) {
  std::string out;
  for (char c : category) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') out += c;
  }
  return out;
}

// "1 scenario", "2 scenarios"; `plural` for irregular nouns.
std::string Counted(std::size_t count, std::string_view noun, std::string_view plural = "") {
  if (count == 1) return fmt::format("1 {}", noun);
  if (plural.empty()) return fmt::format("{} {}s", count, noun);
  return fmt::format("{} {}", count, plural);
}

using Groups = std::map<std::string, std::vector<const Scenario*>, std::less<>>;

Groups GroupByCategory(const std::vector<Scenario>& scenarios) {
  std::vector<const Scenario*> sorted;
  sorted.reserve(scenarios.size());
  for (const Scenario& scenario : scenarios) sorted.push_back(&scenario);
  std::ranges::stable_sort(sorted, {}, &Scenario::name);
  Groups groups;
  for (const Scenario* scenario : sorted) {
    groups[std::string(CategoryOf(scenario->name))].push_back(scenario);
  }
  return groups;
}

void AppendPreamble(std::size_t scenarios, std::size_t categories, std::string& out) {
  fmt::format_to(
      std::back_inserter(out),
      "<!-- Generated from scenarios/catalog/ by RenderCatalogIndex (scenarios/catalog_index.cc).\n"
      "     Do not edit by hand. To regenerate: build scenarios_tests, then run it with\n"
      "     FAULTLINE_UPDATE_INDEX=1. -->\n\n"
      "# The scenario catalogue\n\n"
      "{} in {}, embedded in the `faultline` binary. Each lives in\n"
      "`scenarios/catalog/<category>/<short-name>.yaml`; its description names the real-world "
      "failure it\nmodels and what a correct client must do, and the *expect* column shows what "
      "its `expect:` block\nsays the reference client does with its default policy. Scenarios "
      "tagged `slow` wait out the\nclient's default idle (30 s) or headers (60 s) timeout in real "
      "time.\n\n",
      Counted(scenarios, "scenario"), Counted(categories, "category", "categories"));
}

std::size_t CountDialect(const std::vector<const Scenario*>& group, Dialect dialect) {
  return static_cast<std::size_t>(std::ranges::count(group, dialect, &Scenario::dialect));
}

void AppendSummaryTable(const Groups& groups, std::size_t total, std::string& out) {
  out += "| category | scenarios |";
  for (Dialect dialect : AllDialects())
    fmt::format_to(std::back_inserter(out), " {} |", ToString(dialect));
  out += "\n|---|---:|";
  for (std::size_t i = 0; i < AllDialects().size(); ++i) out += "---:|";
  out += "\n";
  std::vector<std::size_t> totals(AllDialects().size());
  for (const auto& [category, group] : groups) {
    fmt::format_to(std::back_inserter(out), "| [{}](#{}) | {} |", Cell(category), Anchor(category),
                   group.size());
    for (std::size_t i = 0; i < AllDialects().size(); ++i) {
      totals[i] += CountDialect(group, AllDialects()[i]);
      fmt::format_to(std::back_inserter(out), " {} |", CountDialect(group, AllDialects()[i]));
    }
    out += '\n';
  }
  fmt::format_to(std::back_inserter(out), "| **all** | **{}** |", total);
  for (std::size_t count : totals) fmt::format_to(std::back_inserter(out), " **{}** |", count);
  out += '\n';
}

// The scenario's name, linked to its file when it comes from the embedded catalogue.
std::string NameCell(const Scenario& scenario) {
  const std::string name = fmt::format("`{}`", Cell(scenario.name));
  if (!scenario.source.starts_with(kBuiltinPrefix)) return name;
  return fmt::format("[{}](catalog/{})", name, scenario.source.substr(kBuiltinPrefix.size()));
}

void AppendCategory(std::string_view category, const std::vector<const Scenario*>& group,
                    std::string& out) {
  fmt::format_to(std::back_inserter(out), "\n## {}\n\n{}.\n\n", category,
                 Counted(group.size(), "scenario"));
  out += "| scenario | dialect | expect | purpose |\n|---|---|---|---|\n";
  for (const Scenario* scenario : group) {
    fmt::format_to(std::back_inserter(out), "| {} | {} | {} | {} |\n", NameCell(*scenario),
                   ToString(scenario->dialect), Cell(ExpectSummary(scenario->expect)),
                   Cell(FirstSentence(scenario->description)));
  }
}

}  // namespace

std::string FirstSentence(std::string_view text) {
  std::string out;
  bool quoted = false;
  bool space_pending = false;
  for (std::size_t at = 0; at < text.size(); ++at) {
    const char c = text[at];
    if (IsSpace(c)) {
      space_pending = !out.empty();
      continue;
    }
    if (space_pending) out += ' ';
    space_pending = false;
    out += c;
    if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && EndsSentence(text, at)) {
      break;
    }
  }
  return out;
}

std::string_view CategoryOf(std::string_view name) {
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos || slash == 0) return "other";
  return name.substr(0, slash);
}

std::string ExpectSummary(const Expect& expect) {
  std::string out = expect.outcome.value_or("");
  const std::string_view separator = out.empty() ? "" : " ";
  if (expect.failure_code) {
    out += fmt::format("{}{}", separator, *expect.failure_code);
  } else if (expect.failure_class) {
    out += fmt::format("{}({})", separator, *expect.failure_class);
  }
  if (expect.attempts) {
    out += fmt::format("{}{}", out.empty() ? "" : ", ",
                       Counted(static_cast<std::size_t>(*expect.attempts), "attempt"));
  }
  return out;
}

std::string RenderCatalogIndex(const std::vector<Scenario>& scenarios) {
  const Groups groups = GroupByCategory(scenarios);
  std::string out;
  AppendPreamble(scenarios.size(), groups.size(), out);
  AppendSummaryTable(groups, scenarios.size(), out);
  for (const auto& [category, group] : groups) AppendCategory(category, group, out);
  return out;
}

}  // namespace faultline::scenario
