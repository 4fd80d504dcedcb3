#include "reference_impl/sticky_route.h"

namespace faultline::ref {

void StickyRoute::Moved(std::string_view route, Time now) {
  std::lock_guard lock(mutex_);
  if (moved_at_ && now < *moved_at_) return;
  route_ = std::string(route);
  moved_at_ = now;
}

std::optional<std::string> StickyRoute::At(Time now) const {
  std::lock_guard lock(mutex_);
  if (!moved_at_ || now >= *moved_at_ + reset_) return std::nullopt;
  return route_;
}

}  // namespace faultline::ref
