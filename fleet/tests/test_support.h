// Helpers the fleet tests share: a small fleet scenario from text, and looking into written SVG.
#pragma once

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/loader.h"

namespace faultline::fleet::fleet_test {

// 50 calls/s for 20 s from 1,000 clients against `provider`, for `policies` (a YAML list); the
// policies are on line 10 of `file`, at column 13, followed by `more` (further lines of the
// fleet section, each indented by two spaces).
inline scenario::Scenario LoadFleet(std::string_view provider, std::string_view policies,
                                    std::string_view file = "exp.yaml",
                                    std::string_view more = "") {
  const std::string text = std::string(R"(faultline: 1
name: fleet/test
description: d
dialect: openai-chat
fleet:
  clients: 1000
  horizon: 20s
  arrivals: {rate: 50}
  provider: )") + std::string(provider) +
                           "\n  policies: " + std::string(policies) + "\n" + std::string(more);
  auto scenario = scenario::ParseScenario(text, std::string(file));
  EXPECT_TRUE(scenario.has_value()) << scenario.error().ToString();
  return scenario.value_or(scenario::Scenario{});
}

// The first group of every match of `pattern` in `text`.
inline std::vector<std::string> AllMatches(const std::string& text, const std::string& pattern) {
  std::vector<std::string> found;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    found.push_back((*it)[1]);
  }
  return found;
}

}  // namespace faultline::fleet::fleet_test
