// What one scenario run over real sockets is given (RealWorld, real_world.h), and the fallbacks of
// its scripted times, shared by every kind of subject: the in-process reference client
// (reference_calls.h), adapter processes and apps (subjects/).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>

#include "harness/trace/trace.h"
#include "nlohmann/json.hpp"

namespace faultline::harness {

struct RealRunOptions {
  std::uint64_t seed = 0;                     // the reference client's retry RNG
  std::uint64_t provider_seed = 0;            // the provider session (chaos draws, ids)
  Duration timeout{std::chrono::minutes(5)};  // the subject is stopped after this
  std::size_t max_line_bytes = 1024 * 1024;   // an adapter line over this is a subject error
  // A stop request ends the run early: the reference client's calls are cancelled, adapter
  // processes get SIGTERM (SIGKILL a second later); the trace says `interrupted`.
  std::stop_token stop;
};

// An unmodified app as the subject (subjects/app_subject.h): its command, and the policy the user
// declares for it (the adapter protocol's hello policy object; nullopt: none).
struct AppSubject {
  std::string command;
  std::optional<nlohmann::json> policy;
};

// A scripted cancel counts from the call's first attempt; when that is never known (nothing
// arrives and the subject reports no attempt), it goes this much later than scripted.
inline constexpr std::chrono::seconds kCancelFallback{5};

}  // namespace faultline::harness
