#include "harness/worlds/subjects/subject_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "harness/trace/protocol.h"
#include "harness/worlds/subjects/app_subject.h"
#include "scenarios/redact.h"

namespace faultline::harness {
namespace {

// A fault of call `call`'s process, with how the process ended.
SubjectFault ProcessFault(const AdapterRun& run, int call, std::string kind,
                          std::string_view message) {
  return SubjectFault{std::move(kind), fmt::format("call {}: {}", call, message),
                      run.signal ? std::nullopt : std::optional<int>(run.exit_status), run.signal};
}

// Why the process left nothing to judge, as a fault's kind and message: it flooded, or it ended
// without writing anything.
std::optional<std::pair<std::string, std::string>> NothingToJudge(const AdapterRun& run) {
  if (!run.overflow.empty()) {
    return std::pair{run.overflow, std::string(run.overflow == "line-too-long"
                                                   ? "the adapter wrote a line over the runner's "
                                                     "line limit"
                                                   : "the adapter wrote more output than the "
                                                     "runner's limit")};
  }
  if (!run.lines.empty() || run.timed_out) return std::nullopt;
  if (run.exit_status == 126 || run.exit_status == 127) {
    return std::pair{
        std::string("cannot-start"),
        fmt::format("the command could not be started (exit status {})", run.exit_status)};
  }
  return std::pair{
      std::string("exited"),
      fmt::format("the adapter exited with status {} before writing anything", run.exit_status)};
}

// The first way the adapter broke the protocol on call `call`, if any.
std::optional<SubjectFault> FaultOf(const AdapterRun& run, int call, bool saw_hello,
                                    bool saw_terminal, const std::optional<SubjectFault>& line) {
  if (auto nothing = NothingToJudge(run)) {
    return ProcessFault(run, call, nothing->first, nothing->second);
  }
  if (line)
    return SubjectFault{line->kind, fmt::format("call {}: {}", call, line->message), std::nullopt,
                        std::nullopt};
  if (!saw_hello)
    return ProcessFault(run, call, "no-hello", "the first line was not adapter/hello");
  if (saw_terminal || run.timed_out) return std::nullopt;
  if (run.signal) {
    return ProcessFault(
        run, call, "killed",
        fmt::format("the adapter was killed by signal {} before its terminal event", *run.signal));
  }
  return ProcessFault(
      run, call, "exited",
      fmt::format("the adapter exited with status {} before its terminal event", run.exit_status));
}

SubjectFault NotHelloFirst(EventKind first) {
  return SubjectFault{
      "no-hello", fmt::format("the first event is {}, not adapter/hello", ToString(first)), {}, {}};
}

SubjectFault EventOfNoCall(const ClientEvent& event, int call, int calls) {
  return SubjectFault{"not-protocol",
                      fmt::format("{} names call {}, but the run has {} call(s) (0 to {})",
                                  ToString(event.kind), call, calls, calls - 1),
                      {},
                      {}};
}

// Validates and records the lines of call `call`'s process (of `calls`); a session-mode
// process's lines are each filed under the call they name. The first protocol break becomes the
// trace's subject fault.
void CollectLines(const AdapterRun& run, int call, int calls, bool session, Trace& trace) {
  std::optional<SubjectFault> line_fault;
  bool saw_hello = false;
  std::vector<bool> ended(static_cast<std::size_t>(calls), false);
  for (const AdapterLine& line : run.lines) {
    auto event = protocol::ParseLine(line.text);
    if (!event) {
      // The error may quote the line, and the line whatever the adapter printed.
      std::string why = scenario::RedactSecrets(event.error().message);
      trace.protocol_errors.push_back(
          fmt::format("call {} at {:.1f} ms: {}", call, Ms(line.at), why));
      if (!line_fault) line_fault = SubjectFault{event.error().kind, std::move(why), {}, {}};
      continue;
    }
    const bool hello = event->kind == EventKind::kHello;
    if (!saw_hello && !hello && !line_fault) line_fault = NotHelloFirst(event->kind);
    saw_hello = saw_hello || hello;
    const int owner = session ? event->call.value_or(0) : call;
    event->call.reset();
    if (owner >= calls) {
      if (!line_fault) line_fault = EventOfNoCall(*event, owner, calls);
      continue;
    }
    ended[static_cast<std::size_t>(owner)] =
        ended[static_cast<std::size_t>(owner)] || event->terminal();
    trace.client.push_back({line.at, owner, std::move(*event)});
  }
  // A session-mode process answers for every call; any other for its own.
  for (int each = session ? 0 : call; each < (session ? calls : call + 1); ++each) {
    if (trace.subject_fault) return;
    trace.subject_fault =
        FaultOf(run, each, saw_hello, ended[static_cast<std::size_t>(each)], line_fault);
  }
}

// How call `call`'s process (of `calls`) ended, into the trace: the cancel, the runner's stop,
// and its stderr and (an app's) stdout tails.
void AddProcessEnding(const AdapterRun& run, std::size_t call, std::size_t calls, Trace& trace) {
  if (run.cancel_sent && (!trace.cancel_at || *run.cancel_sent < *trace.cancel_at)) {
    trace.cancel_at = run.cancel_sent;
  }
  trace.subject_timed_out = trace.subject_timed_out || run.timed_out;
  trace.interrupted = trace.interrupted || run.interrupted;
  // The moment the stop began, not the exit: a socket the kill closes is closed by the runner.
  const auto stopped = run.stopped.value_or(run.ended);
  if (run.timed_out && (!trace.subject_stopped_at || stopped < *trace.subject_stopped_at)) {
    trace.subject_stopped_at = stopped;
  }
  if (!run.reset_refused.empty()) {
    trace.subject_endings.push_back(
        fmt::format("the adapter's process was not kept for the next run: {}",
                    scenario::RedactSecrets(protocol::ValidUtf8(run.reset_refused))));
  }
  // Tails are kept for the reports, so without the keys the subject printed (a provider's
  // "Incorrect API key provided: sk-...", a debug dump of its headers).
  const std::string label = calls > 1 ? fmt::format("[call {}] ", call) : "";
  if (!run.stderr_text.empty())
    trace.subject_stderr += label + scenario::RedactSecrets(protocol::ValidUtf8(run.stderr_text));
  if (!run.stdout_text.empty())
    trace.subject_stdout += label + scenario::RedactSecrets(protocol::ValidUtf8(run.stdout_text));
}

}  // namespace

std::vector<std::pair<EventKind, Duration>> LineKinds(const std::vector<AdapterLine>& lines) {
  std::vector<std::pair<EventKind, Duration>> kinds;
  for (const AdapterLine& line : lines) {
    if (auto event = protocol::ParseLine(line.text)) kinds.emplace_back(event->kind, line.at);
  }
  return kinds;
}

void AddAdapterRun(const AdapterRun& run, std::size_t call, std::size_t calls, bool session,
                   Trace& trace) {
  CollectLines(run, static_cast<int>(call), static_cast<int>(calls), session, trace);
  AddProcessEnding(run, call, session ? 1 : calls, trace);
}

void AddAppRun(const AdapterRun& run, std::size_t call, std::size_t calls, Trace& trace) {
  const int index = static_cast<int>(call);
  if (!trace.subject_fault) trace.subject_fault = AppFault(run, index);
  if (auto outcome = AppOutcome(run))
    trace.client.push_back({run.ended, index, std::move(*outcome)});
  trace.subject_endings.push_back(fmt::format("call {}: the app {}", call, AppEnding(run)));
  AddProcessEnding(run, call, calls, trace);
}

std::expected<void, std::string> AddRuns(
    const std::vector<CallRun>& runs,
    const std::function<void(const AdapterRun&, std::size_t, std::size_t, Trace&)>& add,
    Trace& trace) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i]) continue;  // served by another call's process
    if (!*runs[i]) return std::unexpected(runs[i]->error());
    add(**runs[i], i, runs.size(), trace);
  }
  std::ranges::stable_sort(trace.client, {}, &ClientRecord::at);
  return {};
}

}  // namespace faultline::harness
