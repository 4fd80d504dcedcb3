// The values of a pure function of a text for the few texts it was asked about last on this
// thread. A virtual run asks the same questions of the same bytes over and over (the request
// body a call sends, an error body read by the client, the fingerprint and the judge), and the
// answers parse JSON; comparing the text costs a small part of that.
//
// Thread-safety: one instance per thread (declare it thread_local).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace faultline::ref {

template <typename Value, std::size_t kSize = 4>
class RecentMemo {
 public:
  // compute(text) when `text` is none of the last kSize texts asked about, else its kept value.
  template <typename Compute>
  const Value& Get(std::string_view text, Compute compute) {
    for (std::size_t i = 0; i < used_; ++i) {
      if (entries_[i].first == text) return entries_[i].second;
    }
    std::pair<std::string, Value>& slot = entries_[next_];
    slot = {std::string(text), compute(text)};
    next_ = (next_ + 1) % kSize;
    if (used_ < kSize) ++used_;
    return slot.second;
  }

 private:
  std::array<std::pair<std::string, Value>, kSize> entries_{};
  std::size_t used_ = 0;
  std::size_t next_ = 0;  // the slot replaced next (the oldest)
};

}  // namespace faultline::ref
