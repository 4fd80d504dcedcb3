// `faultline schema scenario|policy|result`: prints a JSON Schema for editors and validators.
// The schemas are embedded in the binary at build time (cmake/embed_schemas.cmake) from their one
// home each: scenarios/schema/, reference_impl/schema/, reports/schema/.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>
#include <string_view>

#include "harness/cli/cli.h"

namespace faultline::cli {

// The embedded schema called `name` ("scenario", "policy", "result"); empty for another name.
std::string_view EmbeddedSchema(std::string_view name);

struct SchemaOptions {
  std::string which;
};
CLI::App* AddSchemaCommand(CLI::App& app, SchemaOptions& options);
ExitCode RunSchema(const SchemaOptions& options, std::ostream& out, std::ostream& err);

}  // namespace faultline::cli
