// `faultline serve`: the fake provider as a standalone server.
//
// Hosts one session per scenario (the built-in catalogue by default) on one port, plus the
// control API, prints the session base URLs, logs one line per request and stops cleanly on
// SIGINT/SIGTERM; with --report it then judges every session a client reached (serve_report.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/server/server.h"
#include "harness/cli/cli.h"
#include "harness/cli/serve_report.h"

namespace faultline::cli {

struct ServeOptions {
  std::string listen = "127.0.0.1:0";
  std::vector<std::string> scenarios;  // files or folders; empty = the built-in catalogue
  std::uint64_t seed = 0;
  int threads = 1;
  bool quiet = false;
  // Limits, security and journal options, straight into the server (defaults from there).
  provider::ServerOptions server;
  ServeReportOptions report;  // --report: judge the sessions when the server stops
};

// Registers the `serve` subcommand; `options` is filled when the app parses.
CLI::App* AddServeCommand(CLI::App& app, ServeOptions& options);

// Runs the server until a signal arrives; with --report, then judges what its sessions saw.
// kUsageError for bad options, unreadable or invalid scenarios, or an address that cannot be
// bound.
ExitCode RunServe(const ServeOptions& options, std::ostream& out, std::ostream& err);

struct ListenAddress {
  std::string host;  // without brackets: "127.0.0.1", "::1"
  std::uint16_t port = 0;
};

// "ADDR:PORT", "[v6]:PORT", ":PORT", "PORT" or "localhost:PORT" (loopback).
std::expected<ListenAddress, std::string> ParseListenAddress(std::string_view text);

}  // namespace faultline::cli
