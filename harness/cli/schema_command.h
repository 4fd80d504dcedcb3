// `faultline schema scenario|policy|result|protocol`: prints a JSON Schema for editors and
// validators. The schemas are embedded in the binary at build time (harness/trace/
// embedded_schemas.h) from their one home each: scenarios/schema/, reference_impl/schema/,
// reports/schema/, harness/schema/.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>

#include "harness/cli/cli.h"

namespace faultline::cli {

struct SchemaOptions {
  std::string which;
};
CLI::App* AddSchemaCommand(CLI::App& app, SchemaOptions& options);
ExitCode RunSchema(const SchemaOptions& options, std::ostream& out, std::ostream& err);

}  // namespace faultline::cli
