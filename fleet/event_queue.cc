#include "fleet/event_queue.h"

#include <algorithm>

namespace faultline::fleet {
namespace {

// The far heap's order: std::push_heap keeps the greatest on top, so "greater" is "later".
bool Later(const auto& a, const auto& b) { return a.event.time > b.event.time; }

}  // namespace

EventQueue::EventQueue() : ring_(kSlots), occupied_(kSlots / 64, 0) {}

void EventQueue::PushFar(const Entry& entry) {
  far_.push_back(entry);
  std::push_heap(far_.begin(), far_.end(), Later<Entry, Entry>);
}

// The first occupied ring slot from the current one on, as an absolute slot; kSlots past the
// current one when the ring is empty.
std::uint64_t EventQueue::NextOccupied() const {
  const std::uint64_t words = kSlots / 64;
  const std::uint64_t start = current_ & kRingMask;
  // The first word without the bits before `start`, then every word once, wrapping around.
  for (std::uint64_t i = 0; i <= words; ++i) {
    const std::uint64_t word = ((start >> 6) + i) % words;
    std::uint64_t bits = occupied_[word];
    if (i == 0) bits &= ~std::uint64_t{0} << (start & 63);
    if (i == words) bits &= (std::uint64_t{1} << (start & 63)) - 1;
    if (bits == 0) continue;
    const std::uint64_t ring_slot = word * 64 + static_cast<std::uint64_t>(__builtin_ctzll(bits));
    return current_ + ((ring_slot - start) & kRingMask);
  }
  return current_ + kSlots;
}

// Far events whose slot the window now covers join their slots (Advance sorts the current one
// after this).
void EventQueue::PullFar() {
  while (!far_.empty() &&
         (static_cast<std::uint64_t>(far_.front().event.time) >> kSlotBits) < current_ + kSlots) {
    const Entry entry = far_.front();
    std::pop_heap(far_.begin(), far_.end(), Later<Entry, Entry>);
    far_.pop_back();
    const auto slot = static_cast<std::uint64_t>(entry.event.time) >> kSlotBits;
    ring_[slot & kRingMask].push_back(entry);
    occupied_[(slot & kRingMask) >> 6] |= std::uint64_t{1} << (slot & 63);
  }
}

std::vector<EventQueue::Entry>& EventQueue::Advance() {
  std::vector<Entry>& done = ring_[current_ & kRingMask];
  if (sorted_ && done.empty()) {
    occupied_[(current_ & kRingMask) >> 6] &= ~(std::uint64_t{1} << (current_ & 63));
  }
  sorted_ = false;
  std::uint64_t next = NextOccupied();
  if (next == current_ + kSlots) {  // the ring is empty: jump to the earliest far event
    next = static_cast<std::uint64_t>(far_.front().event.time) >> kSlotBits;
  }
  current_ = next;
  PullFar();
  std::vector<Entry>& slot = ring_[current_ & kRingMask];
  std::sort(slot.begin(), slot.end(), [](const Entry& a, const Entry& b) { return Before(b, a); });
  sorted_ = true;
  return slot;
}

void EventQueue::InsertSorted(const Entry& entry) {
  std::vector<Entry>& slot = ring_[current_ & kRingMask];
  // Sorted so that the back comes out first: skip, from the back, what comes out before it.
  auto at = slot.end();
  while (at != slot.begin() && Before(*(at - 1), entry)) --at;
  slot.insert(at, entry);
  occupied_[(current_ & kRingMask) >> 6] |= std::uint64_t{1} << (current_ & 63);
}

}  // namespace faultline::fleet
