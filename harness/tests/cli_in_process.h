// `faultline ARGS...` run in this process through cli::Run, for CLI tests that need no child
// process: the exit code and what the command wrote to stdout and stderr.
#pragma once

#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/shard.h"

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

// For a test's lifetime, exactly `set` of the variables `--shard auto` reads (the others unset,
// whatever CI engine runs the test), then the environment as it was.
class ShardVariables {
 public:
  explicit ShardVariables(const harness::ShardEnvironment& set) {
    for (const std::string_view view : harness::kShardVariables) {
      const std::string name(view);
      const char* value = std::getenv(name.c_str());
      saved_[name] = value ? std::optional<std::string>(value) : std::nullopt;
      const auto given = set.find(name);
      if (given != set.end()) {
        ::setenv(name.c_str(), given->second.c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ~ShardVariables() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ShardVariables(const ShardVariables&) = delete;
  ShardVariables& operator=(const ShardVariables&) = delete;

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

}  // namespace faultline::cli::test_support
