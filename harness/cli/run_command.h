// `faultline run`, `faultline validate` and `faultline report`: the conformance runner's command
// line. Each Add* function registers the subcommand and its flags; each Run* executes it and
// maps the outcome to an exit code (0 all passed, 1 a check failed, 2 bad usage or input, 3 a
// subject error, 4 interrupted, 5 a report not written, 99 a threshold crossed; cli.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/worlds/virtual_world.h"

namespace faultline::cli {

struct RunCommandOptions {
  std::vector<std::string> paths;
  std::string adapter;
  std::string exec;     // an unmodified app's command (--exec)
  std::string gateway;  // a gateway as the subject (--gateway: a shipped one's name or a folder)
  std::string time = "auto";
  int jobs = 0;  // 0: a default that suits the world
  std::uint64_t seed = 0;
  std::string filter;
  int repeat = 1;
  std::string shard;    // "", I/N or auto (shard_option.h)
  int shard_count = 0;  // --shard-count: N for --shard auto; 0 not given
  std::string out_dir = "faultline-reports";
  std::vector<std::string> formats{"json", "junit", "md", "html"};
  std::string policy_file;
  double timeout_s = 300;
  bool verbose = false;
  bool no_reports = false;
  bool last_failed = false;            // only what did not pass in --out's result.json
  std::string fail_on = "violation";   // violation | advisory
  std::size_t max_line = 1024 * 1024;  // adapter line limit in bytes
  // Requests one virtual run may send (--max-virtual-requests).
  std::uint64_t max_virtual_requests = harness::kMaxVirtualRequests;
  std::vector<std::string> thresholds;  // --threshold, repeatable: "ttft.p99<2s"
};
CLI::App* AddRunCommand(CLI::App& app, RunCommandOptions& options);
ExitCode RunRun(const RunCommandOptions& options, std::ostream& out, std::ostream& err);

struct ValidateOptions {
  std::vector<std::string> paths;
};
CLI::App* AddValidateCommand(CLI::App& app, ValidateOptions& options);
ExitCode RunValidate(const ValidateOptions& options, std::ostream& out, std::ostream& err);

struct ReportOptions {
  std::vector<std::string> inputs;
  std::string output;  // file; its extension picks the format unless --format is given
  std::string format;
  bool matrix = false;
};
// `faultline report render` and `faultline report merge`.
CLI::App* AddReportCommand(CLI::App& app, ReportOptions& render, ReportOptions& merge);
ExitCode RunReportRender(const ReportOptions& options, std::ostream& out, std::ostream& err);
ExitCode RunReportMerge(const ReportOptions& options, std::ostream& out, std::ostream& err);

}  // namespace faultline::cli
