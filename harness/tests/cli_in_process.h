// `faultline ARGS...` run in this process through cli::Run, for CLI tests that need no child
// process: the exit code and what the command wrote to stdout and stderr.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/cli.h"

namespace faultline::cli::test_support {

struct Ran {
  ExitCode code;
  std::string out, err;
};

inline Ran Faultline(std::vector<std::string> args) {
  args.insert(args.begin(), "faultline");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  std::ostringstream out, err;
  const ExitCode code = Run(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

}  // namespace faultline::cli::test_support
