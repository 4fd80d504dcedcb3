// The simulator's one event queue of (virtual time, call slot, attempt token, kind), 16 bytes an
// event. Events come out earliest first and, among equal times, the last pushed first: an order
// fixed by the operations alone, so the same inputs give the same run.
//
// Virtual time never goes back, so the queue is a calendar (Brown 1988): a ring of 16,384 slots
// of 1,024 us each covers the next 16.8 s; an event in that window is appended to its slot in
// O(1), and a slot is sorted once, when virtual time reaches it (a few events each in a busy
// fleet). Events further out wait in a binary heap and move into the ring as the window reaches
// them. This replaced a radix heap whose events moved between buckets about five times each,
// a third of the simulator's instructions on the storm benchmark. Virtual time is in
// microseconds from the start of the run. Not thread-safe (one queue per simulation).
#pragma once

#include <cstdint>
#include <vector>

namespace faultline::fleet {

using Micros = std::int64_t;

enum class EventKind : std::uint8_t {
  kArrival,         // the open workload's next logical call
  kStartCall,       // a closed client ends its think time
  kStartAttempt,    // a call sends its next attempt (after its backoff)
  kServiceDone,     // the provider finished a request
  kTimeout,         // a client's per-attempt timeout
  kKick,            // the provider's capacity changed (a brownout ended): start queued work
  kSend,            // the client-side rate limiter may have a token for the attempts waiting
  kGatewayRetry,    // a gateway layer's backoff ended: its next try below
  kGatewayTimeout,  // a gateway layer's per-try timeout
};

// Attempt tokens wrap at 2^28: they are only compared for equality with the call's current one.
inline constexpr std::uint32_t kTokenMask = (1u << 28) - 1;

struct Event {
  Micros time = 0;
  std::uint32_t slot = 0;
  std::uint32_t token : 28 = 0;
  EventKind kind : 4 = EventKind::kArrival;
};
static_assert(sizeof(Event) == 16);

class EventQueue {
 public:
  EventQueue();

  // `event.time` must not be before the last event popped (virtual time only moves forward).
  void Push(const Event& event) {
    const Entry entry{event, next_seq_++};
    const auto slot = static_cast<std::uint64_t>(event.time) >> kSlotBits;
    ++size_;
    if (slot >= current_ + kSlots) {
      PushFar(entry);
    } else if (slot == current_ && sorted_) {
      InsertSorted(entry);
    } else {
      ring_[slot & kRingMask].push_back(entry);
      occupied_[(slot & kRingMask) >> 6] |= std::uint64_t{1} << (slot & 63);
    }
  }
  // The earliest event (among equal times, the last pushed). The queue must not be empty.
  Event Pop() {
    std::vector<Entry>* slot = &ring_[current_ & kRingMask];
    if (!sorted_ || slot->empty()) slot = &Advance();
    const Event event = slot->back().event;
    slot->pop_back();
    --size_;
    return event;
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

 private:
  struct Entry {
    Event event;
    std::uint64_t seq;  // push order: among equal times the higher one comes out first
  };
  static constexpr int kSlotBits = 11;  // 2,048 us a slot
  static constexpr std::uint64_t kSlots = 1 << 12;
  static constexpr std::uint64_t kRingMask = kSlots - 1;

  // True when `a` comes out before `b`.
  static bool Before(const Entry& a, const Entry& b) {
    return a.event.time < b.event.time || (a.event.time == b.event.time && a.seq > b.seq);
  }
  // Moves to the next slot holding events (pulling far events into the window it reaches), sorts
  // it so that its back comes out first, and returns it.
  std::vector<Entry>& Advance();
  std::uint64_t NextOccupied() const;
  void PullFar();
  void PushFar(const Entry& entry);
  void InsertSorted(const Entry& entry);

  std::vector<std::vector<Entry>> ring_;  // slot s of the window at ring_[s & kRingMask]
  std::vector<std::uint64_t> occupied_;   // one bit per ring slot: it holds events
  std::vector<Entry> far_;                // a min-heap by time of events beyond the window
  std::uint64_t current_ = 0;             // the absolute slot being popped
  bool sorted_ = false;                   // the current slot is sorted (and so is popped)
  std::uint64_t next_seq_ = 0;
  std::size_t size_ = 0;
};

}  // namespace faultline::fleet
