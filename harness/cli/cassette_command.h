// `faultline cassette import`: cassettes and a scenario that plays them, from a HAR file or from
// aimock fixtures (docs/cassettes.md). The command reads the file, calls the importer
// (cassette_import/har_import.h, aimock_import.h), writes the cassettes and the scenario
// into --out and lists what it skipped, with the reason, on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "harness/cli/cli.h"

namespace faultline::cli {

struct CassetteImportOptions {
  std::string har;     // a HAR 1.2 file; or
  std::string aimock;  // an aimock fixture file
  std::string out;     // the folder the cassettes and the scenario go to
  std::string scenario = "scenario.yaml";
  std::string name;                     // the scenario's name; "" = imported/<the input's stem>
  std::string dialect = "openai-chat";  // --aimock: the dialect the fixtures are rendered in
  int chunk_size = 20;                  // --aimock: aimock's default chunk size
  double latency_ms = 0;                // --aimock: aimock's default latency per chunk
};

// Adds `cassette` with its subcommand `import`; returns `cassette import`.
CLI::App* AddCassetteCommand(CLI::App& app, CassetteImportOptions& options);

// kSuccess once the cassettes and the scenario are written; kUsageError for a file that cannot
// be read or converted (the error names the file and the JSON path) or a folder not written.
ExitCode RunCassetteImport(const CassetteImportOptions& options, std::ostream& out,
                           std::ostream& err);

}  // namespace faultline::cli
