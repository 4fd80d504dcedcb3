#include "harness/worlds/scripted_start.h"

#include "harness/trace/protocol.h"

namespace faultline::harness {

std::optional<Duration> UnarrivedAttemptStart(
    const std::vector<std::pair<EventKind, Duration>>& kinds) {
  std::optional<Duration> start;
  for (const auto& [kind, at] : kinds) {
    if (kind == EventKind::kStart && !start) start = at;
    if (start && (kind == EventKind::kInterrupted || kind == EventKind::kFailed)) return start;
  }
  return std::nullopt;
}

ScriptedStart::ScriptedStart(provider::Server& server, std::string session_id)
    : server_(server), session_id_(std::move(session_id)) {
  server_.ArmOutages(session_id_);
}

void ScriptedStart::Anchor() {
  std::call_once(anchored_, [&] {
    std::lock_guard lock(mutex_);
    anchored_at_ = Clock::now();
    anchor_set_.notify_all();
  });
}

void ScriptedStart::OnLine(std::string_view line) {
  const auto event = protocol::ParseLine(line);
  if (event && event->kind == EventKind::kStart) server_.StartArmedOutages(session_id_);
}

void ScriptedStart::WaitPastAnchor(Duration due, Clock::time_point give_up, std::stop_token stop) {
  if (due <= Duration{0}) return;
  std::unique_lock lock(mutex_);
  if (!anchor_set_.wait_until(lock, stop, give_up, [&] { return anchored_at_.has_value(); })) {
    return;
  }
  anchor_set_.wait_until(lock, stop, std::min(give_up, *anchored_at_ + due), [] { return false; });
}

bool ScriptedStart::StopFallback() {
  fallback_.request_stop();
  fallback_.join();
  return fallback_started_;
}

void ScriptedStart::Fallback(std::stop_token stop) {
  std::unique_lock lock(mutex_);
  if (!anchor_set_.wait(lock, stop, [&] { return anchored_at_.has_value(); })) return;
  const auto due = *anchored_at_ + kScriptedFallback;
  if (anchor_set_.wait_until(lock, stop, due, [] { return false; }) || stop.stop_requested()) {
    return;
  }
  fallback_started_ = server_.StartArmedOutages(session_id_);
}

}  // namespace faultline::harness
