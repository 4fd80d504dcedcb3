#include "scenarios/rate_window.h"

#include <algorithm>

namespace faultline::scenario {

void RateWindow::Expire(Duration now, Duration length) {
  while (!window_.empty() && window_.front().at + length <= now) {
    tokens_ -= window_.front().tokens;
    window_.pop_front();
  }
}

bool RateWindow::Fits(const RateLimit& limit, std::size_t requests, long long tokens, int cost) {
  const bool requests_ok =
      limit.requests <= 0 || requests + 1 <= static_cast<std::size_t>(limit.requests);
  // A request bigger than the whole budget still passes through an empty window.
  const long long charged = limit.tokens > 0 ? std::min(cost, limit.tokens) : 0;
  const bool tokens_ok = limit.tokens <= 0 || tokens + charged <= limit.tokens;
  return requests_ok && tokens_ok;
}

std::optional<Duration> RateWindow::Admit(const RateLimit& limit, Duration now, int cost) {
  Expire(now, limit.window);
  if (Fits(limit, window_.size(), tokens_, cost)) {
    window_.push_back({now, cost});
    tokens_ += cost;
    return std::nullopt;
  }
  std::size_t remaining = window_.size();
  long long remaining_tokens = tokens_;
  for (const Accepted& oldest : window_) {
    --remaining;
    remaining_tokens -= oldest.tokens;
    if (Fits(limit, remaining, remaining_tokens, cost)) return oldest.at + limit.window - now;
  }
  return limit.window;  // unreachable: an empty window always fits
}

}  // namespace faultline::scenario
