// Retry policies as JSON: strict loading, and the `policy` object of `adapter/hello`
// (docs/adapter-protocol.md).
//
// The format is documented key by key in docs/policy.md, with its JSON Schema in
// reference_impl/schema/policy.schema.json (a test keeps the two in step with this loader). In
// short, every key optional, omitted keys keeping the RetryPolicy defaults (or, with "extends",
// the named preset's values: presets.h):
//
//   {
//     "extends": "openai-node",               // a preset to start from; own keys override
//     "mode": "standard",                     // standard | always
//     "max_attempts": 3,                      // attempts in all, 1..1000, or "unbounded"
//     "max_retries": 2,                       // alias: max_attempts - 1 (null: unbounded)
//     "retryable_classes": ["rate-limit", "timeout", ...],      // docs/failure-taxonomy.md class
//     names "retry_phases": ["connect", "response-headers", "stream", "finish"], "stream_retries":
//     "until-commit",       // before-output | first-event | never "stream_retry_on":
//     ["error-event", "transport"],          // which stream failures "statuses": {"retry": [408,
//     "5xx"], "never": [400]},     // before the class rules "should_retry_header": true, // honour
//     x-should-retry "backoff": {"strategy": "full-jitter",  // exponential | full-jitter |
//     equal-jitter |
//                 "base_ms": 500,             //   decorrelated-jitter
//                 "cap_ms": 8000, "multiplier": 2, "jitter": 0.25,
//                 "jitter_mode": "symmetric"},  // symmetric | down | up (exponential only)
//     "retry_after": {"honor": true, "mode": "floor",   // floor | replace
//                     "parse": "rfc9110",               // rfc9110 | date-parse
//                     "cap_ms": 60000,                  // null: no cap
//                     "jitter": 0.1, "over_cap": "give-up",  // give-up | backoff
//                     "missing": "backoff",             // no hint: backoff | give-up
//                     "zero": "backoff",                // backoff | immediate
//                     "sources": ["retry-after-ms", "retry-after", "retry-after-date", "body",
//                                 "ratelimit-reset"],
//                     "statuses": null},                // or [429, 503]: whose hints are read
//     "min_attempt_ms": 1000,
//     "timeouts": {"connect_ms": 10000, "response_headers_ms": 60000, "idle_ms": 30000,
//                  "heartbeats_reset_idle": false, "total_ms": 600000},  // null disables one
//     "budget": {"capacity": 10, "retry_cost": 1, "success_refund": 0.1,  // or null: none
//                "failure_cost": 0, "retry_threshold": 0},                 // gRPC throttling
//     "routing": {"failover": true,           // false: every attempt on the first route
//                 "breaker": {"threshold": 5, "cooldown_ms": 30000, "half_open_probes": 1},
//                 "sticky": {"reset_ms": 180000}}  // or null (the default): not sticky
//   }
//
// Loading is strict: an unknown key is an error that suggests the nearest known key, a wrong type
// or an out-of-range value is an error, and every error names the JSON path of the offending value
// ("backoff.cap_ms", "retryable_classes[2]"). Durations are integer milliseconds.
//
// Pure functions; thread-safe.
#pragma once

#include <expected>
#include <span>
#include <string>
#include <string_view>

#include "nlohmann/json.hpp"
#include "reference_impl/policy.h"

namespace faultline::ref {

// Parses and validates a policy document.
std::expected<RetryPolicy, PolicyError> LoadPolicy(std::string_view json_text);
std::expected<RetryPolicy, PolicyError> PolicyFromJson(const nlohmann::json& json);

// The full policy in the format above; LoadPolicy(PolicyToJson(p).dump()) == p.
nlohmann::json PolicyToJson(const RetryPolicy& policy);

// "; did you mean 'x'?" for the known key closest to `word`, else "": the strict loaders' one
// suggestion rule (this file's and route_json.h's).
std::string DidYouMean(std::string_view word, std::span<const std::string_view> candidates);

// The `policy` object of `adapter/hello`: PolicyToJson plus "max_retries" (max_attempts - 1, or
// null when unbounded), which is what the runner judges the attempt count against.
nlohmann::json PolicyToHelloJson(const RetryPolicy& policy);

}  // namespace faultline::ref
