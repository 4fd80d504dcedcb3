// faultline.yaml: the options a team repeats in every command (subject, policy, timeout,
// thresholds, out, ...), a section per command (run:, simulate:, serve:, call:) whose keys are
// that command's long flag names (docs/config.md).
//
// Precedence: a flag on the command line, then its environment variable, then the file, then
// the default. A list option (--threshold, --format, --scenario) given on the command line
// replaces the file's list rather than adding to it: otherwise nothing could drop a threshold the
// file sets for one run.
//
// Lookup: --config FILE, else faultline.yaml in the current directory only (never its parents);
// --no-config ignores both. The values are read exactly as if typed on the command line in the
// current directory (relative paths, --adapter and --exec commands, preset-or-file --policy), so
// a file is only picked up where it means what it says; from elsewhere, --config names it.
//
// The schema is harness/schema/config.schema.json (`faultline schema config`), written by hand;
// harness/tests/config_file_test.cc checks that it and the commands' options agree.
//
// Thread-safety: none; used by the CLI before a command runs.
#pragma once

#include <CLI/CLI.hpp>
#include <expected>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/load_error.h"

namespace faultline::cli {

inline constexpr std::string_view kConfigFileName = "faultline.yaml";

// --config FILE, --no-config and --print-config: one set shared by every command with a section
// (only one command runs).
struct ConfigFlags {
  std::string file;
  bool none = false;
  bool print = false;
};
// Gives `command` the three flags. The commands that have them are the ones the file has a
// section for: this is the one list of them.
void AddConfigFlags(CLI::App& command, ConfigFlags& flags);

// One key a config file may hold.
struct ConfigKey {
  enum class Kind { kFlag, kValue, kList };
  std::string section;  // the command: "run"
  std::string name;     // the option's first long name: "timeout"
  Kind kind = Kind::kValue;
  std::string type;  // CLI11's type name without its checks: "INT", "UINT", "FLOAT", "TEXT"
};
// The keys of every command of `app` that has the config flags, in the order they were added.
std::vector<ConfigKey> ConfigKeys(const CLI::App& app);

// What the file gave the command that runs.
struct AppliedConfig {
  std::string file;  // as given or found; "" when none was read
  // Keys of the command's section that set an option, with where: "faultline.yaml:3".
  std::map<std::string, std::string> set;
  std::vector<std::string> overridden;  // keys of the section that a flag overrode
};

// After app.parse: reads the file the flags choose and gives every option of every section its
// value, unless the command line or an environment variable gave it one. Every section is
// checked, not only `command`'s (the one that runs), so a mistake shows wherever the file is used.
// Errors (file:line:column, the key, what was wrong): the file unreadable or not YAML, an unknown
// section or key ("did you mean"), a value of the wrong shape or one the option refuses.
std::expected<AppliedConfig, scenario::LoadError> ApplyConfigFile(CLI::App& app,
                                                                  const CLI::App& command,
                                                                  const ConfigFlags& flags);

// --print-config: `command`'s effective options as its section of a faultline.yaml, each value
// with where it came from; defaults and unset options commented out.
void PrintEffectiveConfig(const CLI::App& command, const AppliedConfig& applied, std::ostream& out);

}  // namespace faultline::cli
