#include "harness/cli/adapter_command.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "harness/cli/adapter_shortcuts.h"
#include "harness/runner.h"
#include "scenarios/loader.h"

namespace faultline::cli {
namespace {

// The dialect names --dialect takes.
std::vector<std::string> DialectNameList() {
  std::vector<std::string> names;
  for (scenario::Dialect dialect : scenario::AllDialects()) {
    names.emplace_back(scenario::ToString(dialect));
  }
  return names;
}

// The self-test's scenarios, written for the dialect asked for. Short waits, so the whole check
// takes a few seconds.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kChecks{{
    {"answer", R"(responses:
  - content: {text: "Hello, world", chunk_size: 4}
expect: {outcome: committed, text: "Hello, world"})"},
    {"retry", R"(responses:
  - {status: 503, retry_after: {seconds: 1}}
  - content: {text: "Hello, world", chunk_size: 4}
expect: {outcome: committed, text: "Hello, world"})"},
    {"no-retry", R"(responses:
  - {status: 400, error: invalid_request}
expect: {outcome: failed, failure_class: invalid-request})"},
    {"cancel", R"(responses:
  - {status: 429, error: rate_limit, retry_after: {seconds: 3}}
  - content: {text: "Hello, world"}
cancel_at: 500ms
expect: {outcome: failed, failure_code: ABORTED})"},
}};

// How to fix each protocol mistake (subject error kinds and lifecycle checks).
constexpr std::array<std::pair<std::string_view, std::string_view>, 15> kFixes{{
    {"cannot-start",
     "the command could not be run: the runner starts it with /bin/sh -c; check the path, the "
     "interpreter and the execute bit"},
    {"exited",
     "end every call with a terminal event before exiting, also when the library throws: catch "
     "around the call and write response/failed with the classified failure (the kit's "
     "runCall/run_call does)"},
    {"killed", "the process died by a signal before its terminal event; see its stderr"},
    {"not-json", "write only JSON lines to stdout; send logs and tracebacks to stderr"},
    {"not-protocol",
     "every line is an event of the protocol's schema (`faultline schema protocol`, "
     "docs/adapter-protocol.md): a known \"type\", that event's required fields with their "
     "types, nothing else; leave an optional field out rather than null"},
    {"no-hello",
     "write adapter/hello first: {\"type\":\"adapter/hello\",\"name\",\"version\","
     "\"policy\"}"},
    {"line-too-long", "write one assistant/chunk per delta, never a whole body on one line"},
    {"output-too-large", "the adapter writes far more than one call needs: a loop?"},
    {"bad-policy", "fix the key the message names; docs/policy.md lists every key"},
    {"LIFE-001", "end each call with exactly one response/committed or response/failed"},
    {"LIFE-002", "write nothing after the terminal event"},
    {"LIFE-003", "write assistant/chunk only between an attempt's response/start and its end"},
    {"LIFE-004",
     "write response/interrupted before the next request goes out: observe requests with the "
     "kit's fetch/transport wrapper, which announces the previous attempt's failure first"},
    {"LIFE-005",
     "write response/start for every request the library sends, its own retries included: wrap "
     "its fetch or transport"},
    {"CANCEL-001",
     "on {\"type\":\"cancel\"} abort the call (also its retry sleep) and end with "
     "response/failed, failure code ABORTED"},
}};

std::string_view FixFor(std::string_view what) {
  for (const auto& [key, fix] : kFixes) {
    if (key == what) return fix;
  }
  return {};
}

std::expected<std::vector<scenario::Scenario>, std::string> CheckScenarios(
    std::string_view dialect) {
  std::vector<scenario::Scenario> out;
  for (const auto& [name, body] : kChecks) {
    const std::string text = fmt::format(
        "faultline: 1\nname: check/{}\ndescription: adapter self-test\ndialect: {}\n{}\n", name,
        dialect, body);
    auto loaded = scenario::ParseScenario(text, fmt::format("<adapter check>/{}", name));
    if (!loaded) return std::unexpected(loaded.error().ToString());
    out.push_back(std::move(*loaded));
  }
  return out;
}

// Prints what one run showed; returns whether it found a protocol mistake.
bool Explain(const report::ScenarioResult& result, std::ostream& out) {
  if (result.verdict == report::Verdict::kError) {
    const std::string kind = result.subject_error ? result.subject_error->kind : "run";
    out << fmt::format("  FAIL {}: subject error {}: {}\n", result.name, kind, result.error);
    if (const auto fix = FixFor(kind); !fix.empty()) out << "       fix: " << fix << "\n";
    if (result.subject_error && !result.subject_error->stderr_tail.empty()) {
      out << "       stderr: " << result.subject_error->stderr_tail << "\n";
    }
    return true;
  }
  bool mistake = false;
  for (const report::CheckResult& check : result.checks) {
    if (check.status != report::CheckStatus::kFail) continue;
    const auto fix = FixFor(check.id);
    mistake = mistake || !fix.empty();
    out << fmt::format("  {} {} {}: {}\n", fix.empty() ? "note" : "FAIL", result.name, check.id,
                       check.evidence);
    if (!fix.empty()) out << "       fix: " << fix << "\n";
  }
  if (result.black_box) {
    out << fmt::format(
        "  note {}: only the outcome was reported (black-box); write response/start "
        "and assistant/chunk so that the client-side checks apply\n",
        result.name);
  }
  if (!mistake) out << fmt::format("  ok   {}\n", result.name);
  return mistake;
}

}  // namespace

CLI::App* AddAdapterCommand(CLI::App& app, AdapterCheckOptions& options) {
  CLI::App* adapter = app.add_subcommand("adapter", "Tools for adapter authors.");
  adapter->require_subcommand(1);
  CLI::App* check = adapter->add_subcommand(
      "check",
      "Self-test an adapter against the protocol: a few scenarios over loopback, each "
      "mistake explained with how to fix it.");
  check->add_option("command", options.adapter, "the adapter command, or a shipped adapter")
      ->required();
  check->add_option("--dialect", options.dialect, scenario::DialectNames())
      ->check(CLI::IsMember(DialectNameList()))
      ->capture_default_str();
  check->add_option("--timeout", options.timeout_s, "seconds per scenario")
      ->check(CLI::Range(1.0, 600.0))
      ->capture_default_str();
  check->footer("Exit code: 0 no protocol mistake, 1 some, 2 bad usage.");
  return adapter;
}

ExitCode RunAdapterCheck(const AdapterCheckOptions& options, std::ostream& out, std::ostream& err) {
  auto adapter = ResolveAdapter(options.adapter);
  auto scenarios = CheckScenarios(options.dialect);
  if (!adapter || !scenarios) {
    err << "faultline adapter check: " << (!adapter ? adapter.error() : scenarios.error()) << "\n";
    return ExitCode::kUsageError;
  }
  harness::RunnerOptions runner;
  runner.world = harness::WorldChoice::kReal;
  runner.adapter = adapter->command;
  runner.subject_label = adapter->label;
  runner.jobs = static_cast<int>(scenarios->size());
  runner.timeout = std::chrono::milliseconds(static_cast<long long>(options.timeout_s * 1000));
  auto result = harness::RunAll(*scenarios, runner, {});
  if (!result) {
    err << "faultline adapter check: " << result.error() << "\n";
    return ExitCode::kUsageError;
  }
  out << fmt::format("faultline adapter check: {} ({})\n", adapter->label, options.dialect);
  bool mistakes = false;
  for (const report::ScenarioResult& scenario : result->scenarios) {
    mistakes = Explain(scenario, out) || mistakes;
  }
  out << (mistakes ? "protocol mistakes found: fix them, then run `faultline run --adapter ...` "
                     "over the catalogue\n"
                   : "no protocol mistake; `faultline run --adapter ...` judges the client over "
                     "the whole catalogue\n");
  return mistakes ? ExitCode::kChecksFailed : ExitCode::kSuccess;
}

}  // namespace faultline::cli
