// The virtual driver: executes a response plan under a virtual clock into an in-memory pipe.
//
// It is the fake provider's half of the virtual world: the same ProviderSession, the same plans,
// the same bytes as the real server, but time is a number that jumps from event to event, so a
// 10-minute stall costs nothing. A discrete-event loop (the runner's virtual world, or a test)
// asks when the exchange next does something, advances to that instant, hands the bytes to the
// client core, and tells the exchange when the client closes. The exchange journals itself
// exactly as the real server would.
//
// Thread-safety: none; a virtual world runs on one thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fake_provider/journal.h"
#include "fake_provider/plan/plan.h"

namespace faultline::provider {

// What the client receives, in order.
struct PipeEvent {
  enum class Kind { kBytes, kClose, kReset };
  Kind kind = Kind::kBytes;
  Duration at{0};  // session offset
  std::string bytes;
  friend bool operator==(const PipeEvent&, const PipeEvent&) = default;
};

class VirtualExchange {
 public:
  // Runs `plan` for a request that arrived at session offset `arrived`. `journal`/`entry_index`
  // receive writes and the end (journal may be null in tests that only want bytes).
  VirtualExchange(ResponsePlan plan, Duration arrived, Journal* journal, std::uint64_t entry_index);

  // The next instant at which the server will do something; nullopt when it is finished or only
  // waits for the client to close (a stall or heartbeat "forever" has no next instant unless it
  // heart-beats).
  std::optional<Duration> NextActionAt() const;

  // Executes every step due at or before `now` and returns what the client receives.
  std::vector<PipeEvent> AdvanceTo(Duration now);

  // The client closed its end at `now` (after AdvanceTo(now)).
  void ClientClosed(Duration now);

  // The plan ran to its end (or the connection is gone). `keep_alive()` says whether the
  // connection may carry another request.
  bool finished() const;
  bool keep_alive() const;

 private:
  void Start(std::vector<PipeEvent>& out, const PlanStep& step, Duration at);
  void Write(std::vector<PipeEvent>& out, const std::string& bytes, Duration at);
  void Complete(std::vector<PipeEvent>& out, Duration at);
  void End(EndKind kind, Duration at);
  bool StallingAt(Duration now) const;  // inside a stall or heartbeat window

  ResponsePlan plan_;
  Duration arrived_;
  Journal* journal_;
  std::uint64_t entry_index_;
  std::size_t next_step_ = 0;
  Duration next_heartbeat_{0};  // for a kHeartbeat step in progress
  bool in_heartbeat_ = false;
  bool finished_ = false;
  bool connection_open_ = true;
};

// Runs a plan to completion with no client close (or with one at `client_closes_at`), up to
// `horizon` for open-ended waits. Convenience for tests and for byte-equality checks.
std::vector<PipeEvent> RunVirtually(const ResponsePlan& plan,
                                    std::optional<Duration> client_closes_at, Duration horizon);

}  // namespace faultline::provider
