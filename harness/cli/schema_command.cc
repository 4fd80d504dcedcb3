#include "harness/cli/schema_command.h"

#include <ostream>

#include "harness/trace/embedded_schemas.h"

namespace faultline::cli {

CLI::App* AddSchemaCommand(CLI::App& app, SchemaOptions& options) {
  CLI::App* schema = app.add_subcommand(
      "schema",
      "Print a JSON Schema (draft 2020-12): scenario files, policy files, run results, the "
      "adapter protocol's lines, faultline.yaml config files.");
  schema->add_option("which", options.which, "scenario | policy | result | protocol | config")
      ->required()
      ->check(CLI::IsMember({"scenario", "policy", "result", "protocol", "config"}));
  schema->footer(
      "e.g. faultline schema scenario > scenario.schema.json, then point your editor's YAML/JSON "
      "language server at it; faultline schema protocol describes every line an adapter writes "
      "(docs/adapter-protocol.md).");
  return schema;
}

ExitCode RunSchema(const SchemaOptions& options, std::ostream& out, std::ostream& err) {
  const std::string_view schema = harness::EmbeddedSchema(options.which);
  if (schema.empty()) {
    err << "faultline schema: no schema called '" << options.which << "'\n";
    return ExitCode::kUsageError;
  }
  out << schema;
  if (!schema.ends_with('\n')) out << '\n';
  return ExitCode::kSuccess;
}

}  // namespace faultline::cli
