// `faultline proxy`: a reverse proxy between a client and a real (or fake) provider that applies
// fault rules to live traffic (docs/proxy.md). The command parses flags, loads the rule file,
// opens the journal (and the --record folder), prints the address it listens on and serves until
// SIGINT/SIGTERM; the proxy itself is faultline::proxy (proxy/server/proxy_server.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>

#include "harness/cli/cli.h"

namespace faultline::cli {

struct ProxyCommandOptions {
  std::string upstream;                // http://HOST:PORT[/PATH]
  std::string listen = "127.0.0.1:0";  // ADDR:PORT
  std::string faults;                  // the rule file; "" = none (a plain proxy)
  std::uint64_t seed = 0;
  std::string journal;  // JSON Lines file; "" = none
  std::string record;   // folder for one cassette per exchange; "" = none
  bool allow_remote = false;
  bool quiet = false;
};

CLI::App* AddProxyCommand(CLI::App& app, ProxyCommandOptions& options);

// Serves until a signal arrives. kUsageError for a bad flag, an invalid rule file, a journal that
// cannot be opened or an address that cannot be bound.
ExitCode RunProxy(const ProxyCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace faultline::cli
