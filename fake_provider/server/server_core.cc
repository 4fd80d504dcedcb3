#include "fake_provider/server/server_core.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

#include "fake_provider/plan/plan_compiler.h"

namespace faultline::provider::internal {

ServerClock::ServerClock()
    : steady_anchor_(std::chrono::steady_clock::now()),
      wall_anchor_(std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now())) {}

WallTime ServerClock::ToWall(SteadyTime t) const {
  return wall_anchor_ + std::chrono::duration_cast<Duration>(t - steady_anchor_);
}

SteadyTime ServerClock::ToSteady(WallTime t) const { return steady_anchor_ + (t - wall_anchor_); }

int LatenessHistogram::BucketOf(std::uint64_t us) {
  if (us < kExactBuckets) return static_cast<int>(us);
  const int exponent = std::min(static_cast<int>(std::bit_width(us)) - 1, kMaxExponent);
  if (exponent == kMaxExponent && us >= (std::uint64_t{2} << kMaxExponent)) return kBuckets - 1;
  const int sub = static_cast<int>((us >> (exponent - 5)) & (kSubBuckets - 1));
  return kExactBuckets + (exponent - 6) * kSubBuckets + sub;
}

// The middle of the bucket's range (its value for the exact buckets).
std::uint64_t LatenessHistogram::ValueOf(int bucket) {
  if (bucket < kExactBuckets) return static_cast<std::uint64_t>(bucket);
  const int exponent = (bucket - kExactBuckets) / kSubBuckets + 6;
  const int sub = (bucket - kExactBuckets) % kSubBuckets;
  const std::uint64_t width = std::uint64_t{1} << (exponent - 5);
  return (std::uint64_t{1} << exponent) + static_cast<std::uint64_t>(sub) * width + width / 2;
}

void LatenessHistogram::Record(Duration lateness) {
  const std::int64_t us = std::max<std::int64_t>(0, lateness.count());
  buckets_[BucketOf(static_cast<std::uint64_t>(us))].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  std::int64_t seen = max_us_.load(std::memory_order_relaxed);
  while (us > seen && !max_us_.compare_exchange_weak(seen, us, std::memory_order_relaxed)) {
  }
}

LatenessHistogram::Summary LatenessHistogram::Summarize() const {
  std::array<std::uint64_t, kBuckets> counts;
  std::uint64_t total = 0;
  for (int i = 0; i < kBuckets; ++i) {
    counts[i] = buckets_[i].load(std::memory_order_relaxed);
    total += counts[i];
  }
  Summary summary;
  summary.count = total;
  summary.max_us = max_us_.load(std::memory_order_relaxed);
  if (total == 0) return summary;
  auto percentile = [&](double p) {
    const auto rank =
        static_cast<std::uint64_t>(std::max(1.0, std::ceil(p * static_cast<double>(total))));
    std::uint64_t seen = 0;
    for (int i = 0; i < kBuckets; ++i) {
      seen += counts[i];
      if (seen >= rank) {
        return std::min(static_cast<std::int64_t>(ValueOf(i)), summary.max_us);
      }
    }
    return summary.max_us;
  };
  summary.p50_us = percentile(0.50);
  summary.p99_us = percentile(0.99);
  return summary;
}

SessionState::SessionState(std::string id, std::string base_url, std::uint16_t dedicated_port,
                           scenario::Scenario scenario, std::uint64_t seed, WallTime start,
                           JournalLimits journal_limits, std::shared_ptr<SessionState> parent)
    : id_(std::move(id)),
      base_url_(std::move(base_url)),
      dedicated_port_(dedicated_port),
      scenario_(scenario),
      seed_(seed),
      journal_limits_(journal_limits),
      parent_(std::move(parent)),
      has_outages_(!scenario.listener_outages.empty()),
      provider_(std::make_shared<const CompiledScenario>(std::move(scenario)), seed, start),
      journal_(std::make_shared<Journal>(journal_limits)),
      start_(start) {}

Admission SessionState::Admit(HttpRequest& request, std::string_view path, std::uint64_t connection,
                              bool keep_secrets, WallTime now) {
  // A route journals into its parent's journal, on its parent's time axis (the parent's lock is
  // taken and released first: locks are only ever taken parent before route).
  const std::shared_ptr<SessionState> parent = parent_.lock();
  // The first attempt of an armed session starts its scripted time, on every route.
  const bool started = parent ? parent->AnchorIfArmed(now) : AnchorIfArmed(now);
  std::shared_ptr<Journal> shared = parent ? parent->journal() : nullptr;
  const std::optional<WallTime> shared_start =
      parent ? std::optional<WallTime>(parent->start()) : std::nullopt;
  std::lock_guard lock(mu_);
  const std::shared_ptr<Journal>& journal = shared ? shared : journal_;
  const WallTime start = shared_start.value_or(start_);
  Admitted admitted = provider::Admit(provider_, *journal,
                                      {.request = request,
                                       .path = path,
                                       .connection = connection,
                                       .keep_secrets = keep_secrets,
                                       .now = now,
                                       .session_start = start});
  return Admission{std::move(admitted.plan), journal, admitted.entry_index, start, now, started};
}

// A fresh Journal rather than Clear(): exchanges still running keep writing into the old one,
// so their indexes cannot collide with the new journal's.
void SessionState::Reset(WallTime now) {
  for (const auto& route : routes()) route->Reset(now);
  std::lock_guard lock(mu_);
  provider_.Reset(now);
  journal_ = std::make_shared<Journal>(journal_limits_);
  start_ = now;
}

void SessionState::AnchorOutages(WallTime now) {
  for (const auto& route : routes()) route->AnchorOutages(now);
  std::lock_guard lock(mu_);
  provider_.AnchorOutages(now);
}

void SessionState::ArmOutages() {
  for (const auto& route : routes()) route->ArmOutages();
  std::lock_guard lock(mu_);
  provider_.ArmOutages();
}

bool SessionState::AnchorIfArmed(WallTime now) {
  {
    std::lock_guard lock(mu_);
    if (!provider_.armed()) return false;
  }
  AnchorOutages(now);
  return true;
}

std::optional<WallTime> SessionState::scripted_start() const {
  std::lock_guard lock(mu_);
  return provider_.scripted_start();
}

void SessionState::AddRoute(std::shared_ptr<SessionState> route) {
  std::lock_guard lock(mu_);
  routes_.push_back(std::move(route));
}

std::vector<std::shared_ptr<SessionState>> SessionState::routes() const {
  std::lock_guard lock(mu_);
  return routes_;
}

bool SessionState::ListenerDown(WallTime now) const {
  std::lock_guard lock(mu_);
  return provider_.ListenerDown(now);
}

std::optional<WallTime> SessionState::NextListenerChange(WallTime now) const {
  std::lock_guard lock(mu_);
  return provider_.NextListenerChange(now);
}

int SessionState::attempts() const {
  std::lock_guard lock(mu_);
  return provider_.attempts();
}

std::shared_ptr<Journal> SessionState::journal() const {
  std::lock_guard lock(mu_);
  return journal_;
}

WallTime SessionState::start() const {
  std::lock_guard lock(mu_);
  return start_;
}

SessionInfo SessionState::Info() const {
  SessionInfo info{id_,
                   base_url_,
                   scenario_.name,
                   std::string(scenario::ToString(scenario_.dialect)),
                   attempts(),
                   std::nullopt,
                   {}};
  for (const auto& route : routes()) {
    const std::string& url = route->base_url();
    info.routes.push_back({route->scenario().route_id, url,
                           route->dedicated_port() != 0 ? url.substr(0, url.find("/s/")) : ""});
  }
  return info;
}

std::optional<std::string> InvalidSessionIdReason(std::string_view id) {
  if (id.empty()) return "a session id must not be empty";
  if (id.size() > 200) return "a session id must be at most 200 characters";
  if (id.front() == '/' || id.back() == '/') return "a session id must not start or end with '/'";
  for (std::string_view inner : kApiRootSegments) {  // "/v1/"
    const std::string_view segment = inner.substr(1, inner.size() - 2);
    if (id.find(inner) != std::string_view::npos || id.starts_with(inner.substr(1)) ||
        id.ends_with(inner.substr(0, inner.size() - 1)) || id == segment) {
      return fmt::format("a session id must not contain the path segment '{}'", segment);
    }
  }
  if (ResolveTarget(fmt::format("/s/{}/v1/", id)).call >= 0) {
    return "a session id must not end in '/call/<n>' (that names one call of a session)";
  }
  for (char c : id) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '?' || c == '#' || c == '%' || c == '\\') {
      return fmt::format(
          "a session id must be printable ASCII without spaces, '?', '#', '%' or "
          "'\\' (got {:?})",
          std::string(id));
    }
  }
  return std::nullopt;
}

std::string HttpBaseUrl(std::string_view address, std::uint16_t port) {
  std::string host(address);
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  if (host == "::") host = "::1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return fmt::format("http://{}:{}", host, port);
}

}  // namespace faultline::provider::internal
