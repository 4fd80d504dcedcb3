#include "proxy/fault_rules.h"

#include <algorithm>
#include <string>
#include <utility>

#include "fake_provider/provider_core.h"
#include "fake_provider/wire/dialect.h"
#include "hashing/fnv1a.h"

namespace faultline::proxy {
namespace {

bool PathMatches(const std::optional<std::string>& pattern, std::string_view path) {
  if (!pattern) return true;
  if (pattern->ends_with('*')) {
    return path.starts_with(std::string_view(*pattern).substr(0, pattern->size() - 1));
  }
  return path == *pattern;
}

bool Matches(const scenario::ProxyRule& rule, std::string_view path,
             std::optional<scenario::Dialect> dialect, std::uint64_t index) {
  const scenario::ProxyMatch& match = rule.match;
  if (!PathMatches(match.path, path)) return false;
  if (rule.answers && !dialect) return false;
  if (!match.dialects.empty() &&
      (!dialect || std::ranges::find(match.dialects, *dialect) == match.dialects.end())) {
    return false;
  }
  return match.requests.empty() || std::ranges::find(match.requests, index) != match.requests.end();
}

// A scenario of one response in `dialect`, for the fake provider's plan compiler.
std::unique_ptr<provider::CompiledScenario> Compile(scenario::Dialect dialect,
                                                    std::optional<scenario::ResponseSpec> spec) {
  scenario::Scenario scenario;
  scenario.name = "proxy";
  scenario.dialect = dialect;
  scenario.responses.push_back(spec.value_or(scenario::ResponseSpec{}));
  return std::make_unique<provider::CompiledScenario>(std::move(scenario));
}

}  // namespace

RuleBook::RuleBook(scenario::ProxyRules rules) : rules_(std::move(rules)) {
  compiled_.resize(rules_.rules.size());
  for (std::size_t i = 0; i < rules_.rules.size(); ++i) {
    const scenario::ProxyRule& rule = rules_.rules[i];
    if (!rule.answers) continue;
    for (scenario::Dialect dialect : scenario::AllDialects()) {
      const bool meets =
          rule.match.dialects.empty() ||
          std::ranges::find(rule.match.dialects, dialect) != rule.match.dialects.end();
      if (meets) compiled_[i][static_cast<std::size_t>(dialect)] = Compile(dialect, rule.response);
    }
  }
  for (scenario::Dialect dialect : scenario::AllDialects()) {
    plain_[static_cast<std::size_t>(dialect)] = Compile(dialect, std::nullopt);
  }
}

Selection RuleBook::Select(std::string_view path, std::optional<scenario::Dialect> dialect,
                           std::uint64_t index, std::uint64_t seed) const {
  for (std::size_t i = 0; i < rules_.rules.size(); ++i) {
    const scenario::ProxyRule& rule = rules_.rules[i];
    if (!Matches(rule, path, dialect, index)) continue;
    // Each rule draws on its own (its name salts the seed), so adding a rule never changes
    // another rule's draws.
    const double draw =
        provider::ChaosDraw(seed ^ hashing::Fnv1a64(rule.name), static_cast<int>(index));
    if (draw >= rule.probability) continue;
    Selection selection{&rule, nullptr};
    if (rule.answers) selection.compiled = compiled_[i][static_cast<std::size_t>(*dialect)].get();
    return selection;
  }
  return {};
}

const provider::CompiledScenario& RuleBook::Plain(scenario::Dialect dialect) const {
  return *plain_[static_cast<std::size_t>(dialect)];
}

}  // namespace faultline::proxy
