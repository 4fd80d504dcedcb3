#include "harness/cli/cli.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "faultline/version.h"
#include "harness/cli/adapter_command.h"
#include "harness/cli/call_command.h"
#include "harness/cli/run_command.h"
#include "harness/cli/schema_command.h"
#include "harness/cli/serve_command.h"
#include "harness/cli/simulate_command.h"

namespace faultline::cli {

ExitCode Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"faultline: chaos testing and simulation for the recovery paths of LLM API clients.",
               "faultline"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "faultline " + std::string(kVersion));
  ServeOptions serve_options;
  CLI::App* serve = AddServeCommand(app, serve_options);
  CallCommandOptions call_options;
  CLI::App* call = AddCallCommand(app, call_options);
  RunCommandOptions run_options;
  CLI::App* run = AddRunCommand(app, run_options);
  ValidateOptions validate_options;
  CLI::App* validate = AddValidateCommand(app, validate_options);
  ReportOptions render_options, merge_options;
  CLI::App* report = AddReportCommand(app, render_options, merge_options);
  AdapterCheckOptions adapter_options;
  CLI::App* adapter = AddAdapterCommand(app, adapter_options);
  SimulateOptions simulate_options;
  CLI::App* simulate = AddSimulateCommand(app, simulate_options);
  SchemaOptions schema_options;
  CLI::App* schema = AddSchemaCommand(app, schema_options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error, out, err);
    return code == 0 ? ExitCode::kSuccess : ExitCode::kUsageError;
  }
  if (serve->parsed()) return RunServe(serve_options, out, err);
  if (call->parsed()) return RunCall(call_options, std::cin, out, err);
  if (run->parsed()) return RunRun(run_options, out, err);
  if (validate->parsed()) return RunValidate(validate_options, out, err);
  if (report->get_subcommand("render")->parsed()) return RunReportRender(render_options, out, err);
  if (report->get_subcommand("merge")->parsed()) return RunReportMerge(merge_options, out, err);
  if (adapter->get_subcommand("check")->parsed()) return RunAdapterCheck(adapter_options, out, err);
  if (simulate->parsed()) return RunSimulate(simulate_options, out, err);
  if (schema->parsed()) return RunSchema(schema_options, out, err);
  return ExitCode::kUsageError;
}

}  // namespace faultline::cli
