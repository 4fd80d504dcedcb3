#include "harness/cli/schema_command.h"

#include <ostream>

namespace faultline::cli {

CLI::App* AddSchemaCommand(CLI::App& app, SchemaOptions& options) {
  CLI::App* schema = app.add_subcommand(
      "schema", "Print a JSON Schema (draft 2020-12): scenario files, policy files, run results.");
  schema->add_option("which", options.which, "scenario | policy | result")
      ->required()
      ->check(CLI::IsMember({"scenario", "policy", "result"}));
  schema->footer(
      "e.g. faultline schema scenario > scenario.schema.json, then point your editor's YAML/JSON "
      "language server at it.");
  return schema;
}

ExitCode RunSchema(const SchemaOptions& options, std::ostream& out, std::ostream& err) {
  const std::string_view schema = EmbeddedSchema(options.which);
  if (schema.empty()) {
    err << "faultline schema: no schema called '" << options.which << "'\n";
    return ExitCode::kUsageError;
  }
  out << schema;
  if (!schema.ends_with('\n')) out << '\n';
  return ExitCode::kSuccess;
}

}  // namespace faultline::cli
