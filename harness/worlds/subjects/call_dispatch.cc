#include "harness/worlds/subjects/call_dispatch.h"

#include <fmt/format.h>

#include <thread>

#include "harness/worlds/call_lines.h"

namespace faultline::harness {
namespace {

std::string CancelLine(int call) { return fmt::format(R"({{"type":"cancel","call":{}}})", call); }

}  // namespace

void CallDispatch::OnLine(std::string_view line) {
  const auto event = protocol::ParseLine(line);
  if (!event) return;  // the protocol check reports it
  std::lock_guard lock(mutex_);
  if (event->kind == EventKind::kHello && !settled_by_hello_) {
    settled_by_hello_ = true;
    session_ = event->session;
    resets_ = event->session && event->reset;
    settled_.notify_all();
  }
  if (!event->terminal() || !session_.value_or(false)) return;
  ended_.insert(event->call.value_or(0));
  if (static_cast<int>(ended_.size()) < calls_) return;
  if (resets_) {
    stdin_->Reset();
  } else {
    stdin_->Close();
  }
}

void CallDispatch::Ended() {
  std::lock_guard lock(mutex_);
  if (!session_) session_ = false;
  settled_.notify_all();
}

bool CallDispatch::ServedBySession(int i, const protocol::CallLine& line,
                                   std::chrono::steady_clock::time_point give_up,
                                   std::stop_token stop) {
  std::unique_lock lock(mutex_);
  settled_.wait_until(lock, stop, give_up, [&] { return session_.has_value(); });
  if (!session_.value_or(false)) return false;
  protocol::CallLine numbered = line;
  numbered.call = i;
  stdin_->Write(LineText(numbered));
  if (cancelled_) stdin_->Write(CancelLine(i));
  return true;
}

void CallDispatch::Cancel() {
  std::lock_guard lock(mutex_);
  cancelled_ = true;
  if (!session_.value_or(false)) {
    stdin_->Write(R"({"type":"cancel"})");
    return;
  }
  for (int i = 0; i < calls_; ++i) {
    if (!ended_.contains(i)) stdin_->Write(CancelLine(i));
  }
}

std::optional<bool> CallDispatch::declared() const {
  std::lock_guard lock(mutex_);
  return settled_by_hello_ ? session_ : std::nullopt;
}

bool CallDispatch::session() const {
  std::lock_guard lock(mutex_);
  return session_.value_or(false);
}

std::vector<CallRun> RunEachCall(int calls, Duration interval, ScriptedStart& scripted,
                                 std::chrono::steady_clock::time_point give_up,
                                 std::stop_token stop,
                                 const std::function<CallRun(int)>& run_call) {
  std::vector<CallRun> runs(static_cast<std::size_t>(calls));
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < calls; ++i) {
      threads.emplace_back([&, i] {
        scripted.WaitPastAnchor(interval * i, give_up, stop);
        runs[static_cast<std::size_t>(i)] = run_call(i);
        scripted.Anchor();  // a first call that never wrote a line must not hold the others back
      });
    }
  }  // every thread joined
  return runs;
}

}  // namespace faultline::harness
