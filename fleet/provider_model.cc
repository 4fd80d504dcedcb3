#include "fleet/provider_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace faultline::fleet {
namespace {

Micros ToMicros(scenario::Duration duration) { return duration.count(); }

// Requests/s the provider admits at a brownout factor (the rules of SlotsAt and TakeRateToken);
// infinity when nothing limits it.
double CapacityPerSecond(const scenario::FleetProvider& spec, const scenario::RateLimit* limit,
                         int tokens_per_request, double factor) {
  double capacity = std::numeric_limits<double>::infinity();
  if (spec.rate > 0) capacity = spec.rate * factor;
  const double service_s = std::chrono::duration<double>(spec.service_mean).count();
  if (spec.concurrency > 0 && service_s > 0) {
    capacity = std::min(capacity, std::floor(spec.concurrency * factor) / service_s);
  }
  const double window_s = limit ? std::chrono::duration<double>(limit->window).count() : 0;
  if (window_s > 0 && limit->requests > 0)
    capacity = std::min(capacity, limit->requests / window_s);
  if (window_s > 0 && limit->tokens > 0 && tokens_per_request > 0) {
    capacity = std::min(capacity, limit->tokens / double(tokens_per_request) / window_s);
  }
  if (spec.tokens_per_minute > 0 && tokens_per_request > 0) {
    capacity = std::min(capacity, spec.tokens_per_minute / 60.0 / tokens_per_request);
  }
  return capacity;
}

}  // namespace

std::vector<std::pair<double, double>> CapacitySteps(const scenario::FleetProvider& spec,
                                                     const scenario::RateLimit* rate_limit,
                                                     int tokens_per_request) {
  ProviderModel model(spec, 0);  // for CapacityAt, the one rule for overlapping brownouts
  std::vector<Micros> edges{0};
  for (const scenario::FleetBrownout& brownout : spec.brownouts) {
    edges.push_back(ToMicros(brownout.from));
    edges.push_back(ToMicros(brownout.from + brownout.length));
  }
  std::ranges::sort(edges);
  std::vector<std::pair<double, double>> steps;
  for (Micros at : edges) {
    const double capacity =
        CapacityPerSecond(spec, rate_limit, tokens_per_request, model.CapacityAt(at));
    if (!std::isfinite(capacity)) return {};
    if (steps.empty() || steps.back().second != capacity) steps.emplace_back(at * 1e-6, capacity);
  }
  return steps;
}

double SampleAround(scenario::FleetDistribution distribution, double mean, double sigma,
                    ref::RetryRng& rng) {
  switch (distribution) {
    case scenario::FleetDistribution::kConstant:
      return mean;
    case scenario::FleetDistribution::kExponential:
      return -std::log1p(-ref::Uniform01(rng)) * mean;
    case scenario::FleetDistribution::kLognormal: {
      const double normal = ref::StandardNormal(rng);
      const double mu = std::log(mean) - sigma * sigma / 2.0;  // so that the mean is `mean`
      return std::exp(mu + sigma * normal);
    }
  }
  return mean;
}

ProviderModel::ProviderModel(const scenario::FleetProvider& spec, std::uint64_t seed,
                             const scenario::RateLimit* rate_limit)
    : spec_(spec),
      rng_(seed),
      rate_limit_(rate_limit),
      rate_tokens_(spec.burst),
      minute_tokens_(spec.tokens_per_minute) {}

double ProviderModel::CapacityAt(Micros now) const {
  double factor = 1.0;
  for (const scenario::FleetBrownout& brownout : spec_.brownouts) {
    const Micros from = ToMicros(brownout.from);
    if (now >= from && now < from + ToMicros(brownout.length)) {
      factor = std::min(factor, brownout.capacity);
    }
  }
  return factor;
}

int ProviderModel::SlotsAt(Micros now) const {
  if (spec_.concurrency == 0) return std::numeric_limits<int>::max();
  return static_cast<int>(std::floor(spec_.concurrency * CapacityAt(now)));
}

bool ProviderModel::TakeRateToken(Micros now) {
  if (spec_.rate <= 0) return true;
  const double rate = spec_.rate * CapacityAt(now);
  rate_tokens_ = std::min(spec_.burst, rate_tokens_ + rate * (now - rate_updated_) * 1e-6);
  rate_updated_ = now;
  if (rate_tokens_ < 1.0) return false;
  rate_tokens_ -= 1.0;
  return true;
}

Micros ProviderModel::SampleService() {
  const double mean = static_cast<double>(ToMicros(spec_.service_mean));
  return static_cast<Micros>(SampleAround(spec_.service, mean, spec_.service_sigma, rng_));
}

// Anthropic's documented rule: "your capacity is continuously replenished up to your maximum
// limit". A request bigger than the whole bucket passes a full one (RateWindow's rule).
std::optional<Micros> ProviderModel::TakeMinuteTokens(Micros now, int tokens) {
  if (spec_.tokens_per_minute <= 0) return std::nullopt;
  const double per_micro = spec_.tokens_per_minute / 60e6;
  minute_tokens_ =
      std::min(spec_.tokens_per_minute, minute_tokens_ + per_micro * (now - minute_updated_));
  minute_updated_ = now;
  const double needed = std::min<double>(tokens, spec_.tokens_per_minute);
  if (minute_tokens_ >= needed) {
    minute_tokens_ -= needed;
    return std::nullopt;
  }
  return static_cast<Micros>(std::ceil((needed - minute_tokens_) / per_micro));
}

// When capacity is likely to free: the next rate token, or the queue ahead served by the slots.
Micros ProviderModel::HonestWait(Micros now) const {
  Micros wait = 0;
  const double rate = spec_.rate * CapacityAt(now);
  if (spec_.rate > 0 && rate_tokens_ < 1.0) {
    wait = rate > 0 ? static_cast<Micros>((1.0 - rate_tokens_) / rate * 1e6) : 1'000'000;
  }
  const int slots = SlotsAt(now);
  if (spec_.concurrency > 0 && busy_ >= slots) {
    const double per_slot = static_cast<double>(queue_.size() + 1) / std::max(slots, 1);
    wait = std::max(wait, static_cast<Micros>(per_slot * ToMicros(spec_.service_mean)));
  }
  return std::max<Micros>(wait, 1000);
}

std::optional<Micros> ProviderModel::Hint(Micros honest) const {
  switch (spec_.overload.hint) {
    case scenario::FleetOverload::Hint::kHonest:
      return std::max<Micros>(honest, 1000);
    case scenario::FleetOverload::Hint::kConstant:
      return ToMicros(spec_.overload.constant);
    case scenario::FleetOverload::Hint::kNone:
      return std::nullopt;
  }
  return std::nullopt;
}

Admission ProviderModel::Arrive(Micros now, RequestId id, int tokens) {
  if (!TakeRateToken(now)) return {Admission::Kind::kOverloaded, 0, Hint(HonestWait(now))};
  if (rate_limit_ != nullptr) {
    if (auto wait = window_.Admit(*rate_limit_, scenario::Duration(now), tokens)) {
      return {Admission::Kind::kRateLimited, 0, wait->count()};
    }
  }
  if (auto wait = TakeMinuteTokens(now, tokens)) {
    return {Admission::Kind::kRateLimited, 0, Hint(*wait)};
  }
  if (busy_ < SlotsAt(now) && queue_.empty()) {
    ++busy_;
    return {Admission::Kind::kServing, now + SampleService(), std::nullopt};
  }
  if (queue_.size() < static_cast<std::size_t>(spec_.queue)) {
    queue_.push_back(id);
    return {Admission::Kind::kQueued, 0, std::nullopt};
  }
  return {Admission::Kind::kOverloaded, 0, Hint(HonestWait(now))};
}

std::optional<Started> ProviderModel::StartQueued(Micros now) {
  if (queue_.empty() || busy_ >= SlotsAt(now)) return std::nullopt;
  const RequestId id = queue_.front();
  queue_.pop_front();
  ++busy_;
  return Started{id, now + SampleService()};
}

std::optional<Started> ProviderModel::Complete(Micros now) {
  --busy_;
  return StartQueued(now);
}

}  // namespace faultline::fleet
