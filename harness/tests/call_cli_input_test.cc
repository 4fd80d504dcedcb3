// `faultline call` with hostile command-line input: text that ends up in JSON (the request body,
// the retry log, response ids) and is not UTF-8 is a usage error (exit 2) with a clear message,
// never an abort (json::dump threw on it) nor a hang (it threw inside the driver).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "harness/tests/faultline_process.h"

namespace faultline::cli {
namespace {

using ::testing::HasSubstr;
using Child = test_support::FaultlineProcess;

std::vector<std::string> CallArgs(std::vector<std::string> extra) {
  // Port 1: nothing listens; these calls must be refused before any connection.
  std::vector<std::string> args = {"call", "--base-url", "http://127.0.0.1:1", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CallCliInputTest, NonUtf8MessageIsAUsageError) {
  Child child(CallArgs({"--message", "\xff"}));
  EXPECT_EQ(child.Wait(), 2) << child.err();
  EXPECT_THAT(child.err(), HasSubstr("--message must be valid UTF-8"));
  EXPECT_EQ(child.out(), "");
}

TEST(CallCliInputTest, NonUtf8ModelIsAUsageError) {
  Child child(CallArgs({"--model", "gpt-\xc3"}));
  EXPECT_EQ(child.Wait(), 2) << child.err();
  EXPECT_THAT(child.err(), HasSubstr("--model must be valid UTF-8"));
}

TEST(CallCliInputTest, NonUtf8CallIdWithARetryLogIsAUsageError) {
  const auto log = std::filesystem::temp_directory_path() /
                   ("faultline-call-input-" + std::to_string(::getpid()) + ".jsonl");
  Child child(CallArgs({"--call-id", "c-\xfe", "--retry-log", log.string()}));
  EXPECT_EQ(child.Wait(), 2) << child.err();
  EXPECT_THAT(child.err(), HasSubstr("--call-id must be valid UTF-8"));
  std::filesystem::remove(log);
}

TEST(CallCliInputTest, AdapterModeChecksItsFlagsToo) {
  Child child({"call", "--adapter", "--call-id", "\x80"});
  child.CloseStdin();
  EXPECT_EQ(child.Wait(), 2) << child.err();
  EXPECT_THAT(child.err(), HasSubstr("--call-id must be valid UTF-8"));
}

}  // namespace
}  // namespace faultline::cli
