// An unmodified app as a subject (`faultline run --exec CMD`, docs/testing-your-app.md): what it
// is told, and what the runner takes it to have said.
//
// An app speaks no protocol. It is told where the provider is the way apps already are, by the
// environment variables its SDK reads (AppEnvironment: OPENAI_BASE_URL, ANTHROPIC_BASE_URL, ...,
// and FAULTLINE_* for scripts). Its one report is how its process ended (AppOutcome): exit 0 means
// it believes it got its answer (response/committed, text unknown); any other ending means the
// call failed (response/failed, unclassified), or, after the scripted cancel's SIGINT, that it
// was aborted. Its hello, written for it (AppHello), declares the policy the user says it runs
// (`--policy`), or none. The judge then holds it to what the provider's journal shows
// (black-box mode, judge.h); the checks that need its own words (the committed text, the class
// of its failure, its attempts) are not applicable, never passed.
//
// Pure functions. Thread-safety: reentrant.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/trace/event.h"
#include "harness/trace/trace.h"
#include "harness/worlds/subjects/adapter_process.h"
#include "nlohmann/json.hpp"

namespace faultline::harness {

// One call of a scenario, as an app making it is told.
struct AppCall {
  std::string base_url;  // the call's own session base URL, without /v1
  std::string dialect;   // "openai-chat", ...
  std::string model;     // the request's model
  std::string scenario;  // the scenario's name
  int call = 0;          // which call of the scenario, 0-based
  int calls = 1;
  std::string request;    // the request body (JSON text) a script may send as it is
  std::string call_line;  // the adapter protocol's call line (routes, limits, policy)
};

// NAME=VALUE pairs for the app's environment: every SDK's base URL and key variables, the
// FAULTLINE_* ones, and loopback added to NO_PROXY / no_proxy (`no_proxy`: the runner's own
// value of NO_PROXY, which it extends) so that a CI proxy does not take the calls.
std::vector<std::string> AppEnvironment(const AppCall& call, std::string_view no_proxy);

// The name an app's hello carries, which reports show as the subject's.
inline constexpr std::string_view kAppName = "app";

// The hello the runner writes for an app: `policy` is what the user declared for it (the
// adapter protocol's hello policy object), nullopt for none.
ClientEvent AppHello(std::optional<nlohmann::json> policy);

// What an app's ending says, and nothing more: a response/committed without text, or a
// response/failed without a failure (its class unknown).
ClientEvent AppEnded(bool committed);

// The app's terminal event, from how its process ended (above); nullopt when it did not end by
// itself (the runner stopped it: its timeout, a stop request).
std::optional<ClientEvent> AppOutcome(const AdapterRun& run);

// How the app's process ended, for people: "exited with status 1", "was killed by signal 9",
// "was stopped at the runner's timeout".
std::string AppEnding(const AdapterRun& run);

// An app that never ran, call `call`'s: the shell could not start the command (exit 126 or 127).
std::optional<SubjectFault> AppFault(const AdapterRun& run, int call);

}  // namespace faultline::harness
