// The sans-I/O core of `faultline proxy`: one exchange (a client's request, the upstream's answer)
// and the faults a rule (fault_rules.h) applies to it, as the writes, closes and waits to perform.
//
// The driver (proxy_server.h) hands the core the client's request, then the upstream's bytes as
// they arrive, each with its time (an offset from the request's arrival), and performs the
// actions the core returns, in order, each no earlier than its `at`. The core never reads a clock
// or touches a socket, so every fault can be tested in virtual time.
//
// What the client gets:
//   - no rule: the upstream's bytes, byte for byte, as they arrive;
//   - a rule that answers (non-2xx status, connection fault): the fake provider's plan for that
//     response entry (its status, error body, Retry-After, headers_delay), and the upstream is
//     not called;
//   - a rule that acts on the upstream's answer: its head, delayed by headers_delay and with
//     Retry-After (and the other hint headers) injected; on a 2xx body, the stream faults after
//     event N (stall, delay, malformed or error events in the dialect's own shape, rendered by
//     the fake provider) and the termination at event N or byte K, as the scenario format
//     names them. A body with faults is sent chunked, event by event; one without, as it came.
//
// One ProxyExchange per request; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/http_request.h"
#include "fake_provider/journal.h"
#include "fake_provider/plan/plan.h"
#include "fake_provider/wire/dialect.h"
#include "fake_provider/wire/event_splitter.h"
#include "fake_provider/wire/sse_framing.h"
#include "proxy/fault_rules.h"
#include "reference_impl/http_response.h"

namespace faultline::proxy {

using provider::Duration;
using provider::WallTime;

struct Action {
  enum class Kind {
    kSendUpstream,  // connect to the upstream and send `bytes` (the request), now
    kWrite,         // write `bytes` to the client at `at`
    kClose,         // close the client's connection (FIN) at `at`
    kReset,         // reset it (RST) at `at`
    kHold,          // from `at`, send nothing and keep it open until the client goes
    kFinish,        // the response is whole at `at`: the connection may carry the next request
  };
  Kind kind = Kind::kWrite;
  Duration at{0};  // offset from the request's arrival at the proxy
  std::string bytes;
  friend bool operator==(const Action&, const Action&) = default;
};

// Where the upstream is: its Host, and the path its URL puts before every request's target.
struct Upstream {
  std::string authority;    // "127.0.0.1:8080"
  std::string path_prefix;  // "" or "/s/demo" (no trailing slash)
};

struct ExchangeSetup {
  std::uint64_t index = 1;  // 1-based among the proxy's requests
  std::uint64_t seed = 0;
  WallTime now;         // the request's arrival (Date headers, ids)
  Duration arrived{0};  // the same, as an offset from the proxy's start (the journal's axis)
  std::uint64_t connection = 0;
  Upstream upstream;
};

// Both sides of one exchange, for the journal (proxy_journal.h). Times are offsets from the
// proxy's start.
struct ExchangeRecord {
  std::string dialect;  // "" when no dialect serves the path
  std::string rule;     // the rule that applied; "" for none
  std::string faults;   // what the proxy did, and what it could not ("... not reached")
  // The request as the client sent it; the status, writes and end as the client was answered.
  provider::JournalEntry client;
  // The request as the proxy sent it upstream; the status, arrivals and end of the answer.
  provider::JournalEntry upstream;
  bool upstream_called = false;
  std::string client_bytes;    // every byte the client was sent
  std::string upstream_bytes;  // every byte the upstream sent
  std::uint64_t upstream_events = 0;
};

class ProxyExchange {
 public:
  ProxyExchange(const RuleBook& book, provider::HttpRequest request, const ExchangeSetup& setup);

  // The first actions: kSendUpstream, or the whole answer of a rule that answers.
  std::vector<Action> Start();
  std::vector<Action> OnUpstreamBytes(std::string_view bytes, Duration at);
  // The upstream closed (FIN) or reset its connection.
  std::vector<Action> OnUpstreamEnd(Duration at, bool reset);
  // The upstream could not be reached or written to: a 502 in the dialect's shape.
  std::vector<Action> OnUpstreamFailed(Duration at, std::string_view reason);

  // Whether the upstream's bytes are still wanted (false once the answer is decided: a cut, a
  // stall forever, the end of the upstream's message). The driver then closes that connection.
  bool wants_upstream() const { return !upstream_done_; }

  // What the driver did with the actions: a write went out at `at`; the exchange ended.
  void Wrote(Duration planned, Duration at, std::size_t size);
  void Ended(provider::EndKind end, Duration at, std::string detail = {});

  const ExchangeRecord& record() const { return record_; }

 private:
  enum class Phase { kForward, kSkipping, kBytes, kEnded };

  std::vector<Action> Take();
  void Push(Action::Kind kind, Duration at);
  void Emit(Duration at, std::string_view bytes);
  void EmitBody(Duration at, std::string_view data);
  void Note(std::string text);
  void FollowPlan(const provider::ResponsePlan& plan);
  std::string UpstreamRequest();  // and journals it
  bool StreamRequested() const;
  // The upstream's answer.
  void OnHead(Duration at);
  std::string RewrittenHead(Duration at) const;
  void OnBody(std::string_view data, Duration at);
  void OnPiece(std::string_view bytes, const provider::EventSplitter::Piece& piece, Duration at);
  void ForwardBudget(std::string_view bytes, Duration at);
  void ApplyFaults(std::uint64_t events, Duration at);
  void Inject(const scenario::EventFault& fault, Duration at);
  provider::SseEvent ErrorEvent(const scenario::EventFault& fault) const;
  void ReachCut(Duration at);
  void Terminate(Duration at);
  void UpstreamComplete(Duration at);
  void UpstreamBroke(Duration at, bool reset);
  void NoteUnreached();
  void EndUpstream(provider::EndKind end, Duration at, std::string detail = {});

  const RuleBook& book_;
  provider::HttpRequest request_;
  ExchangeSetup setup_;
  std::optional<scenario::Dialect> dialect_;
  Selection selection_;
  ExchangeRecord record_;
  std::vector<Action> out_;
  Duration release_{0};  // no write goes out before this (headers_delay, stalls, delays)

  ref::HttpResponseParser parser_;
  std::string head_raw_;  // the upstream's bytes until its head is whole
  bool head_done_ = false;
  bool upstream_done_ = false;
  bool reframe_ = false;  // the body is sent chunked, event by event (it has faults)
  std::optional<provider::EventSplitter> splitter_;  // a stream of the dialect's framing
  std::optional<provider::SseFramer> framer_;
  std::vector<scenario::EventFault> faults_;  // by after_event
  scenario::Termination end_;
  std::size_t next_fault_ = 0;
  std::uint64_t events_ = 0;
  Phase phase_ = Phase::kForward;
  bool cut_done_ = false;
  std::string pending_;     // the event in progress, held until it is whole
  std::size_t budget_ = 0;  // kBytes: bytes still to send before the cut
  std::vector<std::string> notes_;
};

}  // namespace faultline::proxy
