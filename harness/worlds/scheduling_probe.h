// How late this machine runs things: the evidence that lets timing verdicts hold on a loaded CI
// runner.
//
// Over real sockets a client that sleeps 2 s may wake, run and reach the provider a second late
// when the machine is loaded (seen: load 26-38 on 2 cores); judged against fixed tolerances it
// fails checks it keeps. Load only ever makes things later, so lower bounds (no retry before the
// server's Retry-After) stay exact, and only upper bounds need room: the real world measures how
// late a sleeping thread wakes during each run and the judge widens its upper tolerances by what
// was measured (judge.h Tolerance), saying so in the evidence. A client that retries too early
// still fails, whatever the load.
//
// LatenessSeries is the sans-I/O core (samples in, a window's worst lateness out); SchedulingProbe
// drives it from a thread that sleeps to absolute deadlines.
//
// Thread-safety: LatenessSeries is not synchronised; SchedulingProbe is (Record on its thread,
// queries from any).
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>

namespace faultline::harness {

class LatenessSeries {
 public:
  using Clock = std::chrono::steady_clock;
  // Keeps at most `capacity` samples, the newest.
  explicit LatenessSeries(std::size_t capacity) : capacity_(capacity) {}

  // A wake-up due at `due` that happened at `woke`.
  void Record(Clock::time_point due, Clock::time_point woke);

  // The latest any wake-up due in [from, to] came; zero when none was late (or none was due).
  std::chrono::microseconds WorstBetween(Clock::time_point from, Clock::time_point to) const;

 private:
  struct Sample {
    Clock::time_point due;
    std::chrono::microseconds late;
  };
  std::size_t capacity_;
  std::deque<Sample> samples_;  // in `due` order
};

class SchedulingProbe {
 public:
  using Clock = LatenessSeries::Clock;
  // Wakes every `period` (and burns a little CPU each time, as a client's wake-up does) until
  // destroyed; keeps about `history` of samples.
  explicit SchedulingProbe(std::chrono::milliseconds period = std::chrono::milliseconds(20),
                           std::chrono::minutes history = std::chrono::minutes(30));
  ~SchedulingProbe();
  SchedulingProbe(const SchedulingProbe&) = delete;
  SchedulingProbe& operator=(const SchedulingProbe&) = delete;

  std::chrono::microseconds WorstBetween(Clock::time_point from, Clock::time_point to) const;

 private:
  void Loop(std::stop_token stop);
  std::chrono::milliseconds period_;
  mutable std::mutex mu_;
  LatenessSeries series_;  // guarded by mu_
  std::jthread thread_;
};

}  // namespace faultline::harness
