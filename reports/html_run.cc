#include "reports/html_run.h"

#include "fmt/format.h"

namespace faultline::report::internal {

std::string Lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

std::string GroupAnchor(const ScenarioResult& scenario) {
  std::string slug = "run-";
  for (const char c : Lowercase(scenario.name + "-" + scenario.world)) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    slug += keep ? c : '-';
  }
  return slug;
}

std::string RunAnchor(const ScenarioResult& scenario) {
  return fmt::format("{}-{}", GroupAnchor(scenario), scenario.repetition + 1);
}

std::string SourceText(const ScenarioResult& scenario) {
  if (scenario.source_line <= 0) return scenario.source;
  return fmt::format("{}:{}", scenario.source, scenario.source_line);
}

std::string_view StatusClass(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass:
      return "pass";
    case CheckStatus::kFail:
      return "fail";
    case CheckStatus::kNotApplicable:
      return "na";
  }
  return "na";
}

}  // namespace faultline::report::internal
