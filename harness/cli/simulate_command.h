// `faultline simulate`: the fleet simulator's command line (fleet/). Parses the flags, loads the
// scenario's fleet section (or builds one from flags), runs the experiment and writes the table
// and the reports; the work is faultline::fleet's. Exit code 0 when the run completed, 2 for bad
// usage or input (a value out of range, a run over the bounds without --large-run), 5 when a
// report could not be written, 6 when the run ran out of memory anyway: no exception escapes.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/cli/cli.h"

namespace faultline::cli {

struct SimulateOptions {
  std::string scenario;               // a scenario file with a `fleet:` section
  std::vector<std::string> policies;  // --compare / --policy
  std::optional<std::uint64_t> seed;
  std::string sweep;
  std::string shard;               // "", I/N or auto (shard_option.h)
  int shard_count = 0;             // --shard-count: N for --shard auto; 0 not given
  std::vector<std::string> merge;  // shard result.json files to join
  bool list_policies = false;
  std::string out_dir = "faultline-simulate";
  std::vector<std::string> formats{"json", "csv", "md", "html"};
  bool no_reports = false;
  bool quiet = false;
  bool large_run = false;  // lift the bounds on events, memory and sweep points (run_cost.h)
  // A fleet from flags, when no scenario is given.
  std::uint64_t clients = 1000;
  double rate = 50;
  std::string horizon = "60s";
  int concurrency = 0;
  double provider_rate = 40;
  int queue = 0;
  std::string service = "100ms";
  std::string timeout;
  int overload_status = 429;
};
CLI::App* AddSimulateCommand(CLI::App& app, SimulateOptions& options);
ExitCode RunSimulate(const SimulateOptions& options, std::ostream& out, std::ostream& err);

// `faultline report merge` of fleet shards: true when `path` holds a `faultline simulate`
// result.json (so that report merge hands it here).
bool IsFleetResultFile(const std::string& path);
// Joins the shards' results into the one an unsharded run gives and writes it to `output` (or
// `out`) as json (default), csv, md or html: `format`, else the output's extension.
ExitCode RunFleetMerge(const std::vector<std::string>& files, const std::string& output,
                       const std::string& format, std::ostream& out, std::ostream& err);

}  // namespace faultline::cli
