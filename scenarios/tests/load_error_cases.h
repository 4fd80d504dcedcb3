// Shared by the loader's error tests: a document that must fail, with the exact position, JSON
// path and message of its error.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "scenarios/loader.h"

namespace faultline::scenario {

struct ErrorCase {
  std::string_view what;
  std::string text;
  int line;
  int column;
  std::string_view path;
  std::string_view message;
};

inline void ExpectErrors(const std::vector<ErrorCase>& cases) {
  for (const ErrorCase& expected : cases) {
    SCOPED_TRACE(expected.what);
    auto scenario = ParseScenario(expected.text, "bad.yaml");
    ASSERT_FALSE(scenario.has_value()) << expected.text;
    const LoadError& error = scenario.error();
    EXPECT_EQ(error.file, "bad.yaml");
    EXPECT_EQ(error.line, expected.line);
    EXPECT_EQ(error.column, expected.column);
    EXPECT_EQ(error.path, expected.path);
    EXPECT_EQ(error.message, expected.message);
  }
}

}  // namespace faultline::scenario
