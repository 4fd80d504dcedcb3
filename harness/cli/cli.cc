#include "harness/cli/cli.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>

#include "faultline/version.h"
#include "harness/cli/adapter_command.h"
#include "harness/cli/call_command.h"
#include "harness/cli/cassette_command.h"
#include "harness/cli/config_file.h"
#include "harness/cli/proxy_command.h"
#include "harness/cli/run_command.h"
#include "harness/cli/schema_command.h"
#include "harness/cli/serve_command.h"
#include "harness/cli/simulate_command.h"

namespace faultline::cli {

namespace {

// Every subcommand's options, filled in by parsing, and its app (which says whether it was the
// one given).
struct Commands {
  ServeOptions serve_options;
  ProxyCommandOptions proxy_options;
  CallCommandOptions call_options;
  RunCommandOptions run_options;
  ValidateOptions validate_options;
  ReportOptions render_options, merge_options;
  AdapterCheckOptions adapter_options;
  SimulateOptions simulate_options;
  SchemaOptions schema_options;
  CassetteImportOptions cassette_import_options;
  ConfigFlags config;  // --config, --no-config, --print-config of the commands below that have them
  CLI::App* serve = nullptr;
  CLI::App* proxy = nullptr;
  CLI::App* call = nullptr;
  CLI::App* run = nullptr;
  CLI::App* validate = nullptr;
  CLI::App* report = nullptr;
  CLI::App* adapter = nullptr;
  CLI::App* simulate = nullptr;
  CLI::App* schema = nullptr;
  CLI::App* cassette_import = nullptr;  // `cassette import`
  CLI::App* help = nullptr;             // `faultline help [COMMAND]`, as git and go answer it
  std::string help_topic;
  CLI::App* version = nullptr;
};

// In the order --help lists them.
void AddCommands(CLI::App& app, Commands& c) {
  c.serve = AddServeCommand(app, c.serve_options);
  c.call = AddCallCommand(app, c.call_options);
  c.run = AddRunCommand(app, c.run_options);
  c.validate = AddValidateCommand(app, c.validate_options);
  c.report = AddReportCommand(app, c.render_options, c.merge_options);
  c.adapter = AddAdapterCommand(app, c.adapter_options);
  c.simulate = AddSimulateCommand(app, c.simulate_options);
  c.proxy = AddProxyCommand(app, c.proxy_options);
  c.cassette_import = AddCassetteCommand(app, c.cassette_import_options);
  c.schema = AddSchemaCommand(app, c.schema_options);
  c.help = app.add_subcommand("help", "show this help, or a command's: faultline help run");
  c.help->add_option("command", c.help_topic, "the command whose help to show");
  c.version = app.add_subcommand("version", "print faultline's version (as --version does)");
  // The commands whose options a team repeats: faultline.yaml has a section for each.
  for (CLI::App* command : {c.serve, c.call, c.run, c.simulate}) AddConfigFlags(*command, c.config);
}

// After the command line: the config file's values for the command that runs (if it has a
// section), or --print-config's answer, or a usage error. nullopt: go on and run the command.
std::optional<ExitCode> ApplyConfig(CLI::App& app, const Commands& c, std::ostream& out,
                                    std::ostream& err) {
  const CLI::App* command = nullptr;
  for (const CLI::App* candidate : {c.serve, c.call, c.run, c.simulate}) {
    if (candidate->parsed()) command = candidate;
  }
  if (command == nullptr) return std::nullopt;
  const std::string name = command->get_name();
  auto applied = ApplyConfigFile(app, *command, c.config);
  if (!applied) {
    err << "faultline " << name << ": " << applied.error().ToString() << "\n";
    return ExitCode::kUsageError;
  }
  if (c.config.print) {
    PrintEffectiveConfig(*command, *applied, out);
    return ExitCode::kSuccess;
  }
  if (!applied->set.empty()) {  // say so: a run that differs from its flags must not surprise
    std::vector<std::string> keys;
    for (const auto& entry : applied->set) keys.push_back(entry.first);
    err << fmt::format(
        "faultline {}: {} sets {}{} (--print-config shows all; --no-config ignores it)\n", name,
        applied->file, fmt::join(keys, ", "),
        applied->overridden.empty()
            ? ""
            : fmt::format("; flags override {}", fmt::join(applied->overridden, ", ")));
  }
  return std::nullopt;
}

// `faultline help [COMMAND]`: the help --help shows, of the whole tool or of one command.
ExitCode RunHelp(const CLI::App& app, const std::string& topic, std::ostream& out,
                 std::ostream& err) {
  if (topic.empty()) {
    // app.help() would show the parsed subcommand's, this one's.
    out << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
    return ExitCode::kSuccess;
  }
  std::string names;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (command->get_name() == topic) {
      out << command->help(app.get_name());
      return ExitCode::kSuccess;
    }
    names += (names.empty() ? "" : ", ") + command->get_name();
  }
  err << "faultline help: no command \"" << topic << "\"; the commands are " << names << "\n";
  return ExitCode::kUsageError;
}

ExitCode RunParsed(const CLI::App& app, const Commands& c, std::ostream& out, std::ostream& err) {
  if (c.help->parsed()) return RunHelp(app, c.help_topic, out, err);
  if (c.version->parsed()) {
    out << "faultline " << kVersion << "\n";
    return ExitCode::kSuccess;
  }
  if (c.serve->parsed()) return RunServe(c.serve_options, out, err);
  if (c.proxy->parsed()) return RunProxy(c.proxy_options, out, err);
  if (c.call->parsed()) return RunCall(c.call_options, std::cin, out, err);
  if (c.run->parsed()) return RunRun(c.run_options, out, err);
  if (c.validate->parsed()) return RunValidate(c.validate_options, out, err);
  if (c.report->get_subcommand("render")->parsed()) {
    return RunReportRender(c.render_options, out, err);
  }
  if (c.report->get_subcommand("merge")->parsed()) return RunReportMerge(c.merge_options, out, err);
  if (c.adapter->get_subcommand("check")->parsed()) {
    return RunAdapterCheck(c.adapter_options, out, err);
  }
  if (c.simulate->parsed()) return RunSimulate(c.simulate_options, out, err);
  if (c.schema->parsed()) return RunSchema(c.schema_options, out, err);
  if (c.cassette_import->parsed()) {
    return RunCassetteImport(c.cassette_import_options, out, err);
  }
  return ExitCode::kUsageError;
}

}  // namespace

ExitCode Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"faultline: chaos testing and simulation for the recovery paths of LLM API clients.",
               "faultline"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "faultline " + std::string(kVersion));
  Commands commands;
  AddCommands(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error, out, err);
    return code == 0 ? ExitCode::kSuccess : ExitCode::kUsageError;
  }
  if (const std::optional<ExitCode> done = ApplyConfig(app, commands, out, err)) return *done;
  return RunParsed(app, commands, out, err);
}

std::vector<ConfigKey> ConfigFileKeys() {
  CLI::App app;
  Commands commands;
  AddCommands(app, commands);
  return ConfigKeys(app);
}

}  // namespace faultline::cli
