// Where and when the calls of a scenario run against one adapter command go
// (docs/adapter-protocol.md, "Session mode"): call 0's process says in its hello whether it
// serves every call (session) or each call gets a process of its own (per-call); every call is
// due i x call_interval after scripted time's anchor (RunEachCall).
//
// Thread-safety: CallDispatch is shared by the run's threads: call 0's reader thread tells it
// each line, the other calls' threads ask it where their call goes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <expected>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "harness/trace/protocol.h"
#include "harness/worlds/scripted_start.h"
#include "harness/worlds/subjects/adapter_process.h"

namespace faultline::harness {

class CallDispatch {
 public:
  // `known`: the mode a hello of the same command declared before (the other calls need not wait
  // for this run's); `stdin`: call 0's process's.
  CallDispatch(int calls, std::optional<bool> known, std::shared_ptr<AdapterStdin> stdin)
      : calls_(calls), session_(known), stdin_(std::move(stdin)) {}

  // A line of call 0's process: its hello settles the mode; in session mode, once every call has
  // ended, its stdin closes (the adapter exits at its end), or, when its hello declared `reset`,
  // it is told to reset (AdapterStdin::Reset: the process may serve the next run).
  void OnLine(std::string_view line);

  // Call 0's process ended: a mode no hello settled is per-call.
  void Ended();

  // Call `i` (> 0) is due: true when call 0's process serves it (its line is written there, with
  // a cancel after it when the cancel came already); false when it needs a process of its own.
  // Waits for the mode, at most until `give_up` or a stop request (then: its own process, which
  // the stop ends at once).
  bool ServedBySession(int i, const protocol::CallLine& line,
                       std::chrono::steady_clock::time_point give_up, std::stop_token stop);

  // The scripted cancel, due now (call 0's reader thread): per-call, call 0's cancel; in session
  // mode one for every call started and not ended, and every later call's right after its line.
  void Cancel();

  // What a hello declared this run (nullopt: none did).
  std::optional<bool> declared() const;
  bool session() const;

 private:
  const int calls_;
  mutable std::mutex mutex_;
  std::condition_variable_any settled_;
  std::optional<bool> session_;  // guarded by mutex_, as the rest
  bool settled_by_hello_ = false;
  bool resets_ = false;  // its hello declared `reset`
  const std::shared_ptr<AdapterStdin> stdin_;
  std::set<int> ended_;  // session mode: the calls whose terminal event came
  bool cancelled_ = false;
};

// What one call of a run made: its process's run, the error of a process that could not be
// started, or nullopt when no process was its own (a session-mode adapter served it).
using CallRun = std::optional<std::expected<AdapterRun, std::string>>;

// Every call on a thread of its own: call i starts i x `interval` after scripted time's anchor
// (at once on a stop request, or when `give_up` passes first), as `run_call(i)` runs it.
std::vector<CallRun> RunEachCall(int calls, Duration interval, ScriptedStart& scripted,
                                 std::chrono::steady_clock::time_point give_up,
                                 std::stop_token stop, const std::function<CallRun(int)>& run_call);

}  // namespace faultline::harness
