// The simulator's one event queue: a binary min-heap of (virtual time, kind, call slot, attempt
// token), 24 bytes an event. Events at the same instant come out in an order fixed by the heap's
// operations alone, so the same inputs give the same run. Virtual time is in microseconds from
// the start of the run. Not thread-safe (one queue per simulation).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace faultline::fleet {

using Micros = std::int64_t;

enum class EventKind : std::uint8_t {
  kArrival,       // the open workload's next logical call
  kStartCall,     // a closed client ends its think time
  kStartAttempt,  // a call sends its next attempt (after its backoff)
  kServiceDone,   // the provider finished a request
  kTimeout,       // a client's per-attempt timeout
  kKick,          // the provider's capacity changed (a brownout ended): start queued work
};

struct Event {
  Micros time = 0;
  std::uint32_t slot = 0;
  std::uint32_t token = 0;
  EventKind kind = EventKind::kArrival;
};

class EventQueue {
 public:
  void Push(const Event& event) {
    heap_.push_back(event);
    std::push_heap(heap_.begin(), heap_.end(), Later);
  }
  Event Pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    const Event event = heap_.back();
    heap_.pop_back();
    return event;
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void Reserve(std::size_t n) { heap_.reserve(n); }

 private:
  static bool Later(const Event& a, const Event& b) { return a.time > b.time; }
  std::vector<Event> heap_;
};

}  // namespace faultline::fleet
