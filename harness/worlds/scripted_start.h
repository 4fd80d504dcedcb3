// When scripted time (listener outages, every route's health) starts for a subject run over real
// sockets, and when a call's first attempt began: the instant the virtual world calls t = 0.
//
// For an adapter, scripted time starts at its first attempt, not at the session's creation nor at
// its hello, since an interpreter may take seconds to load its library and would otherwise miss
// an outage, or meet a route that had already recovered. It is armed from the moment this object
// exists, before the subject is launched (the listener and every route stay as they are at 0): a
// subject's hello may reach the runner after its first request (a wrapper relaying its output, a
// buffered stdout), and an attempt that arrives before an arm would meet scripted time counted
// from the session's creation. The first request's arrival, or the first response/start (OnLine:
// a refused connection never arrives), starts it; for a subject that reports no attempt and
// reaches nothing, a thread starts it kScriptedFallback after the hello (Anchor), and the judge is
// told (Trace::scripted_by_fallback).
//
// Thread-safety: ScriptedStart is shared by a run's threads (every call's reader and launcher).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "fake_provider/server/server.h"
#include "harness/trace/event.h"
#include "harness/trace/trace.h"

namespace faultline::harness {

// How long after an adapter's hello scripted time starts when its first attempt cannot be seen
// (it reports none, and reaches nothing: the listener refuses).
inline constexpr std::chrono::seconds kScriptedFallback{5};

// When a call's first attempt began, from what the subject said so far (`kinds` with their times,
// in order): its response/start, once it reported that attempt over (response/interrupted or
// response/failed) while no request had reached the provider, as when nothing listens. The
// virtual world's t = 0 is that instant, and a scripted cancel counts from it there too.
std::optional<Duration> UnarrivedAttemptStart(
    const std::vector<std::pair<EventKind, Duration>>& kinds);

class ScriptedStart {
 public:
  using Clock = std::chrono::steady_clock;
  // Arms the session's scripted time (Server::ArmOutages).
  ScriptedStart(provider::Server& server, std::string session_id);

  // The subject said hello (or is about to make its first call): the fallback and the waits of
  // later calls count from here. Scripted time is not re-armed: an attempt may have started it.
  void Anchor();
  // A line of the subject's: its first response/start starts the armed outages.
  void OnLine(std::string_view line);

  // Waits until `due` after the anchor (not at all for a `due` of 0; at once on a stop request,
  // or at `give_up` when that comes first).
  void WaitPastAnchor(Duration due, Clock::time_point give_up, std::stop_token stop);

  // Ends the fallback; whether it was what started scripted time.
  bool StopFallback();

 private:
  void Fallback(std::stop_token stop);

  provider::Server& server_;
  const std::string session_id_;
  std::once_flag anchored_;
  std::mutex mutex_;
  std::condition_variable_any anchor_set_;
  std::optional<Clock::time_point> anchored_at_;  // guarded by mutex_: the first hello
  std::atomic<bool> fallback_started_ = false;
  std::jthread fallback_{[this](std::stop_token stop) { Fallback(stop); }};  // last: uses the rest
};

}  // namespace faultline::harness
