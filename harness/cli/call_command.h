// `faultline call`: one LLM call with the reference client (reference_impl/), printing its
// lifecycle events — curl with recovery.
//
//   faultline call --base-url URL --dialect D [--message TEXT] [--model M] [--no-stream]
//                  [--policy FILE] [--seed N] [--api-key K] [--json]
//                  [--retry-log FILE [--call-id ID]]
//   faultline call --adapter [--retry-log FILE]
//
// The first form prints one readable line per lifecycle event (or, with --json, the adapter
// protocol's JSON lines). With --adapter it speaks the adapter protocol (docs/adapter-protocol.md)
// on stdin and stdout: it reads one {"type":"call",...} line, writes adapter/hello and then every
// event as a JSON line, and honours a later {"type":"cancel"} line; so the runner can drive the
// reference client as an external process exactly like a third-party adapter.
//
// With --retry-log, every scheduled retry is appended to FILE (JSONL, reference_impl/retry_log.h)
// and flushed before the wait; a restarted call with the same FILE and --call-id recovers its
// attempt count and does not start before the logged retry time. In adapter mode the call line
// may carry "retry_log" and "call_id" instead.
//
// Exit code: 0 committed, 1 failed, 2 usage or input error.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <string>

#include "harness/cli/cli.h"

namespace faultline::cli {

struct CallCommandOptions {
  std::string base_url;
  std::string dialect = "openai-chat";
  std::string message = "Say hello.";
  std::string model;  // empty: a per-dialect default
  std::string api_key = "sk-faultline";
  bool no_stream = false;
  std::string policy_file;  // empty: the default policy
  std::optional<std::uint64_t>
      seed;  // unset: a random seed, so concurrent calls do not retry in step
  bool json = false;
  bool adapter = false;
  bool session = false;          // with `adapter`: one process, one client, every call of a run
  std::string retry_log;         // empty: no durable retry log
  std::string call_id = "call";  // the retry log's key
};

// Registers the `call` subcommand; `options` is filled when the app parses.
CLI::App* AddCallCommand(CLI::App& app, CallCommandOptions& options);

// Runs the call. `in` is read only in adapter mode.
ExitCode RunCall(const CallCommandOptions& options, std::istream& in, std::ostream& out,
                 std::ostream& err);

}  // namespace faultline::cli
