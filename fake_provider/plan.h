// A response plan: the exact bytes the fake provider sends for one request, and when.
//
// Plans are produced by the sans-I/O core (provider_core.h) and executed by a driver: the real
// server (server.h) with steady timers on a socket, or the virtual driver (virtual_driver.h) into
// an in-memory pipe under a virtual clock. Both must produce the same bytes at the same offsets.
// The plan already contains the HTTP status line, headers and chunked framing: the driver adds
// nothing, so a plan can end a body without its final chunk, or in the middle of a chunk.
//
// Values only; safe to copy and share read-only.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace faultline::provider {

using Duration = std::chrono::microseconds;

struct PlanStep {
  enum class Kind {
    kSend,       // write `bytes` at `at`
    kHeartbeat,  // write `bytes` every `every`, starting at `at` + `every`, for `length`
                 // (nullopt: until the client closes)
    kStall,      // write nothing for `length` (nullopt: until the client closes)
    kClose,      // close the connection (FIN) at `at`
    kReset,      // abort the connection with a TCP RST (SO_LINGER 0) at `at`
  };
  Kind kind = Kind::kSend;
  Duration at{0};  // offset from the request's arrival at which the step begins
  std::string bytes;
  Duration every{0};
  std::optional<Duration> length;

  // What the step writes in total is known for kSend only.
  friend bool operator==(const PlanStep&, const PlanStep&) = default;
};

struct ResponsePlan {
  int attempt = 0;              // 1-based attempt index within the session
  int status = 0;               // 0 when no status line is sent (connection faults)
  std::vector<PlanStep> steps;  // ordered by `at`; kSend steps at the same instant are coalesced
  // After the last step, the connection may serve the next request (a complete, well-framed
  // response). False: the driver closes it (FIN) after the last step unless a step already did.
  bool keep_alive = true;
  std::string summary;  // one line for logs and the journal: "429 rate_limit retry-after=imf(+2s)"
  friend bool operator==(const ResponsePlan&, const ResponsePlan&) = default;
};

// The time at which the plan's last step begins (for stalls "until the client closes" this is
// the start of the stall).
Duration PlanEnd(const ResponsePlan& plan);

}  // namespace faultline::provider
