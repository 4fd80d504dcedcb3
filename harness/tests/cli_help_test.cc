// `faultline help [COMMAND]` and `faultline version`: the words a user types first answer as
// --help and --version do, not with "A subcommand is required".
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/cli.h"

namespace faultline::cli {
namespace {

struct Said {
  ExitCode code;
  std::string out, err;
};

Said Faultline(std::vector<const char*> args) {
  args.insert(args.begin(), "faultline");
  std::ostringstream out, err;
  const ExitCode code = Run(static_cast<int>(args.size()), args.data(), out, err);
  return {code, out.str(), err.str()};
}

TEST(CliHelpTest, HelpShowsWhatDashDashHelpShows) {
  const Said help = Faultline({"help"});
  EXPECT_EQ(help.code, ExitCode::kSuccess) << help.err;
  EXPECT_NE(help.out.find("Usage:"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("simulate"), std::string::npos) << help.out;
}

TEST(CliHelpTest, HelpOfACommandIsThatCommandsHelp) {
  const Said help = Faultline({"help", "run"});
  EXPECT_EQ(help.code, ExitCode::kSuccess) << help.err;
  EXPECT_NE(help.out.find("--adapter"), std::string::npos) << help.out;
  const Said unknown = Faultline({"help", "runn"});
  EXPECT_EQ(unknown.code, ExitCode::kUsageError);
  EXPECT_NE(unknown.err.find("no command \"runn\"; the commands are serve, call, run"),
            std::string::npos)
      << unknown.err;
}

TEST(CliHelpTest, VersionPrintsTheVersion) {
  const Said version = Faultline({"version"});
  EXPECT_EQ(version.code, ExitCode::kSuccess) << version.err;
  EXPECT_EQ(version.out.rfind("faultline ", 0), 0U) << version.out;
  EXPECT_EQ(version.out, Faultline({"--version"}).out);
}

}  // namespace
}  // namespace faultline::cli
