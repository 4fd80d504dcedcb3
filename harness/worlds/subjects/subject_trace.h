// What the processes of a subject (adapters, apps) put in a run's trace: an adapter's lines,
// validated against the protocol and filed under the calls they name, the first protocol break as
// the trace's subject fault; an app's outcome from its exit; how each process ended (the cancel,
// the runner's stop, its stderr and stdout tails).
//
// Pure functions of the runs. Thread-safety: reentrant.
#pragma once

#include <cstddef>
#include <expected>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/trace/event.h"
#include "harness/trace/trace.h"
#include "harness/worlds/subjects/adapter_process.h"
#include "harness/worlds/subjects/call_dispatch.h"

namespace faultline::harness {

// The kinds and times of an adapter's lines so far (lines that do not parse are skipped: the
// protocol check reports them), for UnarrivedAttemptStart (scripted_start.h).
std::vector<std::pair<EventKind, Duration>> LineKinds(const std::vector<AdapterLine>& lines);

// What call `call`'s adapter process (of `calls`) did, into the trace; a session-mode process
// (`session`) did it for every call.
void AddAdapterRun(const AdapterRun& run, std::size_t call, std::size_t calls, bool session,
                   Trace& trace);

// What call `call`'s app process (of `calls`) did, into the trace: its outcome, at its exit.
void AddAppRun(const AdapterRun& run, std::size_t call, std::size_t calls, Trace& trace);

// Every call's process into the trace (`add`), in time order; the error of a process that could
// not be started at all (no pipe, no fork).
std::expected<void, std::string> AddRuns(
    const std::vector<CallRun>& runs,
    const std::function<void(const AdapterRun&, std::size_t, std::size_t, Trace&)>& add,
    Trace& trace);

}  // namespace faultline::harness
