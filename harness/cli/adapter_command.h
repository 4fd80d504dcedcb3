// `faultline adapter check CMD`: a short self-test of an adapter against the protocol, for
// adapter authors. It runs four small scenarios over loopback (a clean answer, a retried 503, a
// 400 that must not be retried, a cancel during a Retry-After wait) and explains each protocol
// mistake it sees (a subject error, a lifecycle check that failed) with how to fix it. Client
// behaviour the protocol does not govern (commits, retries, timeouts) is listed as findings
// for `faultline run` to judge over the whole catalogue.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "harness/cli/cli.h"

namespace faultline::cli {

struct AdapterCheckOptions {
  std::string adapter;
  std::string dialect = "openai-chat";
  double timeout_s = 30;
};

CLI::App* AddAdapterCommand(CLI::App& app, AdapterCheckOptions& options);
ExitCode RunAdapterCheck(const AdapterCheckOptions& options, std::ostream& out, std::ostream& err);

}  // namespace faultline::cli
