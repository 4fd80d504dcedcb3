// `faultline report render|merge`: reports from result files.
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "harness/cli/report_files.h"
#include "harness/cli/run_command.h"
#include "harness/cli/simulate_command.h"
#include "reports/report.h"

namespace faultline::cli {
namespace {

std::expected<report::RunResult, std::string> ReadResult(const std::string& path) {
  const auto json = ReadJsonFile(path);
  if (!json) return std::unexpected(json.error());
  auto result = report::RunResultFromJson(*json);
  if (!result) return std::unexpected(fmt::format("{}: {}", path, result.error()));
  return std::move(*result);
}

std::expected<std::vector<report::RunResult>, std::string> ReadAll(
    const std::vector<std::string>& paths) {
  std::vector<report::RunResult> results;
  for (const std::string& path : paths) {
    auto result = ReadResult(path);
    if (!result) return std::unexpected(result.error());
    results.push_back(std::move(*result));
  }
  return results;
}

std::expected<report::Format, std::string> ChooseFormat(const ReportOptions& options) {
  if (!options.format.empty()) return report::ParseFormat(options.format);
  if (auto format = report::FormatForPath(options.output)) return *format;
  if (options.output.empty()) return report::Format::kMarkdown;  // readable on a terminal
  return std::unexpected(
      fmt::format("cannot tell the format of '{}'; give --format", options.output));
}

}  // namespace

CLI::App* AddReportCommand(CLI::App& app, ReportOptions& render, ReportOptions& merge) {
  CLI::App* report = app.add_subcommand("report", "Render or merge run results (result.json).");
  report->require_subcommand(1);
  CLI::App* render_command = report->add_subcommand(
      "render",
      "Render a result as JSON, JUnit XML, Markdown or HTML (or several results as a "
      "conformance matrix with --matrix).");
  render_command->add_option("results", render.inputs, "result.json file(s)")->required();
  render_command->add_option("-o,--output", render.output,
                             "output file (its extension picks the format); default stdout");
  render_command->add_option("--format", render.format, "json | junit | md | html");
  render_command->add_flag("--matrix", render.matrix,
                           "one column per result: scenario x subject (md or html)");
  CLI::App* merge_command =
      report->add_subcommand("merge",
                             "Combine shard results (same subject, or the shards of one "
                             "`faultline simulate`) into one result.");
  merge_command->add_option("results", merge.inputs, "result.json files")->required();
  merge_command->add_option("-o,--output", merge.output, "output file; default stdout");
  merge_command->add_option("--format", merge.format,
                            "json (default) | junit | md | html; fleet results: json | csv | md | "
                            "html");
  for (CLI::App* command : {render_command, merge_command}) {
    command->footer(
        "Exit code: 0 written, 2 bad usage or input, 5 the output file could not be written (an "
        "I/O error such as a full disk; an earlier file under its name is removed first, so "
        "none is left that looks current).");
  }
  return report;
}

ExitCode RunReportRender(const ReportOptions& options, std::ostream& out, std::ostream& err) {
  auto results = ReadAll(options.inputs);
  auto format = ChooseFormat(options);
  if (!results || !format) {
    err << "faultline report render: " << (!results ? results.error() : format.error()) << "\n";
    return ExitCode::kUsageError;
  }
  if (options.matrix) {
    if (*format != report::Format::kHtml && *format != report::Format::kMarkdown) {
      err << "faultline report render: --matrix renders md or html\n";
      return ExitCode::kUsageError;
    }
    return EmitReport(
        options.output,
        [&](std::ostream& stream) {
          if (*format == report::Format::kHtml) return report::RenderMatrixHtml(*results, stream);
          report::RenderMatrixMarkdown(*results, stream);
        },
        "report render", out, err);
  }
  if (results->size() != 1) {
    err << "faultline report render: give one result (or --matrix for several; merge shards "
           "with `faultline report merge`)\n";
    return ExitCode::kUsageError;
  }
  return EmitReport(
      options.output,
      [&](std::ostream& stream) { report::Render(results->front(), *format, stream); },
      "report render", out, err);
}

ExitCode RunReportMerge(const ReportOptions& options, std::ostream& out, std::ostream& err) {
  // Shards of `faultline simulate` (a CI matrix over seeds or a sweep) are fleet results.
  if (!options.inputs.empty() && IsFleetResultFile(options.inputs.front())) {
    return RunFleetMerge(options.inputs, options.output, options.format, out, err);
  }
  // One file at a time, each parsed, moved into the merger and dropped: hundreds of shards cost
  // the merged runs and one file's JSON, not every file's result beside the merged copy.
  report::ResultMerger merger;
  for (const std::string& path : options.inputs) {
    auto part = ReadResult(path);
    auto added = part ? merger.Add(std::move(*part))
                      : std::expected<void, std::string>(std::unexpected(part.error()));
    if (!added) {
      err << "faultline report merge: " << added.error() << "\n";
      return ExitCode::kUsageError;
    }
  }
  auto merged = std::move(merger).Finish();
  if (!merged) {
    err << "faultline report merge: " << merged.error() << "\n";
    return ExitCode::kUsageError;
  }
  auto format = options.format.empty() && report::FormatForPath(options.output) == std::nullopt
                    ? std::expected<report::Format, std::string>(report::Format::kJson)
                    : ChooseFormat(options);
  if (!format) {
    err << "faultline report merge: " << format.error() << "\n";
    return ExitCode::kUsageError;
  }
  return EmitReport(
      options.output, [&](std::ostream& stream) { report::Render(*merged, *format, stream); },
      "report merge", out, err);
}

}  // namespace faultline::cli
