#include "harness/declared_policy.h"

#include <algorithm>
#include <cmath>

namespace faultline::harness {
namespace {

using nlohmann::json;

std::optional<double> Number(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number()) return std::nullopt;
  return found->get<double>();
}

std::string Text(const json& object, const char* key, std::string fallback) {
  if (!object.is_object()) return fallback;
  const auto found = object.find(key);
  if (found == object.end() || !found->is_string()) return fallback;
  return found->get<std::string>();
}

bool Flag(const json& object, const char* key, bool fallback) {
  if (!object.is_object()) return fallback;
  const auto found = object.find(key);
  if (found == object.end() || !found->is_boolean()) return fallback;
  return found->get<bool>();
}

const json& Child(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  const auto found = object.find(key);
  return found == object.end() ? kNull : *found;
}

}  // namespace

DeclaredPolicy ParseDeclaredPolicy(const json& policy) {
  DeclaredPolicy out;
  if (!policy.is_object()) return out;
  out.present = true;
  const json& max_attempts = Child(policy, "max_attempts");
  if (max_attempts.is_number_integer()) out.max_attempts = max_attempts.get<int>();
  out.unbounded = max_attempts.is_string() && max_attempts.get<std::string>() == "unbounded";
  if (const json& classes = Child(policy, "retryable_classes"); classes.is_array()) {
    out.retryable_classes.emplace();
    for (const json& name : classes) {
      if (name.is_string()) out.retryable_classes->insert(name.get<std::string>());
    }
  }
  if (const json& backoff = Child(policy, "backoff"); backoff.is_object()) {
    const auto base = Number(backoff, "base_ms");
    const auto cap = Number(backoff, "cap_ms");
    if (base && cap) {
      out.backoff = DeclaredBackoff{.strategy = Text(backoff, "strategy", "exponential"),
                                    .base_ms = *base,
                                    .cap_ms = *cap,
                                    .multiplier = Number(backoff, "multiplier").value_or(2),
                                    .jitter = Number(backoff, "jitter").value_or(0)};
    }
  }
  const json& retry_after = Child(policy, "retry_after");
  out.retry_after_honored = Flag(retry_after, "honor", true);
  out.retry_after_cap_ms = Number(retry_after, "cap_ms");
  out.over_cap = Text(retry_after, "over_cap", "give-up");
  const json& timeouts = Child(policy, "timeouts");
  out.connect_ms = Number(timeouts, "connect_ms");
  out.response_headers_ms = Number(timeouts, "response_headers_ms");
  out.idle_ms = Number(timeouts, "idle_ms");
  out.total_ms = Number(timeouts, "total_ms");
  out.heartbeats_reset_idle = Flag(timeouts, "heartbeats_reset_idle", false);
  return out;
}

DeclaredPolicy ReadDeclaredPolicy(const Trace& trace) {
  for (const ClientRecord& record : trace.client) {
    if (record.call == 0 && EventType(record) == "adapter/hello") {
      return ParseDeclaredPolicy(Child(record.event, "policy"));
    }
  }
  return {};
}

DelayBounds BackoffBounds(const DeclaredBackoff& backoff, int retry_index) {
  const double nominal = std::min(
      backoff.cap_ms, backoff.base_ms * std::pow(backoff.multiplier, std::max(retry_index, 0)));
  if (backoff.strategy == "full-jitter") return {0, nominal};
  if (backoff.strategy == "equal-jitter") return {nominal / 2, nominal};
  if (backoff.strategy == "decorrelated-jitter") {
    return {std::min(backoff.base_ms, backoff.cap_ms), backoff.cap_ms};
  }
  const double jitter = std::clamp(backoff.jitter, 0.0, 1.0);
  return {nominal * (1 - jitter), std::min(backoff.cap_ms, nominal * (1 + jitter))};
}

}  // namespace faultline::harness
