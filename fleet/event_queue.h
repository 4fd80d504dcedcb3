// The simulator's one event queue of (virtual time, call slot, attempt token, kind), 16 bytes an
// event. Virtual time never goes back, so the queue is a radix heap (Ahuja, Mehlhorn, Orlin and
// Tarjan 1990): events sit in 65 buckets by the highest bit in which their time differs from the
// last time popped; a push is O(1) and each event moves down a few buckets in its life, instead
// of the O(log n) sift of a binary heap over thousands of pending backoffs and timeouts. Events at
// the same instant come out in an order fixed by the operations alone, so the same inputs give the
// same run. Virtual time is in microseconds from the start of the run. Not thread-safe (one queue
// per simulation).
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

// Attempt tokens wrap at 2^29: they are only compared for equality with the call's current one.
inline constexpr std::uint32_t kTokenMask = (1u << 29) - 1;

struct Event {
  Micros time = 0;
  std::uint32_t slot = 0;
  std::uint32_t token : 29 = 0;
  EventKind kind : 3 = EventKind::kArrival;
};
static_assert(sizeof(Event) == 16);

class EventQueue {
 public:
  // `event.time` must not be before the last event popped (virtual time only moves forward).
  void Push(const Event& event) {
    buckets_[BucketOf(event.time)].push_back(event);
    ++heap_size_;
  }
  // The earliest event (among equal times, the last pushed). The queue must not be empty.
  Event Pop() {
    Settle();
    const Event event = buckets_[0].back();
    buckets_[0].pop_back();
    --heap_size_;
    return event;
  }
  bool empty() const { return heap_size_ == 0; }
  std::size_t size() const { return heap_size_; }

 private:
  static constexpr int kBuckets = 65;

  std::size_t BucketOf(Micros time) const {
    const auto diff = static_cast<std::uint64_t>(time ^ last_);
    return diff == 0 ? 0 : static_cast<std::size_t>(64 - __builtin_clzll(diff));
  }
  // Makes bucket 0 hold the earliest events (time == last_): empties the lowest non-empty bucket
  // into the ones below its new minimum. Every event lands in a lower bucket than it was in.
  void Settle() {
    if (!buckets_[0].empty()) return;
    std::size_t b = 1;
    while (buckets_[b].empty()) ++b;  // heap_size_ > 0: some bucket below 65 holds an event
    std::vector<Event>& from = buckets_[b];
    last_ = std::min_element(from.begin(), from.end(), [](const Event& x, const Event& y) {
              return x.time < y.time;
            })->time;
    for (const Event& event : from) buckets_[BucketOf(event.time)].push_back(event);
    from.clear();
  }

  std::vector<Event> buckets_[kBuckets];
  std::size_t heap_size_ = 0;
  Micros last_ = 0;  // the time of the last event popped: no event is earlier
};

}  // namespace faultline::fleet
