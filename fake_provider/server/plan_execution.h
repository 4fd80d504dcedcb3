// Internal to the real server: executing one response plan on a socket with steady timers.
//
// Each kSend step is one async_write at its instant (the plan has already coalesced whatever is
// due together); timers are only armed for steps in the future. While a plan waits, a concurrent
// read notices the client closing or resetting and cancels the plan; anything the client sends
// meanwhile (a pipelined request) is kept in `buffer` for the next parse.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <cstdint>
#include <string>

#include "fake_provider/journal.h"
#include "fake_provider/plan/plan.h"
#include "fake_provider/server/server_core.h"

namespace faultline::provider::internal {

class Engine;

struct ExchangeContext {
  Engine& engine;
  boost::asio::ip::tcp::socket& socket;
  boost::beast::flat_buffer& buffer;  // receives bytes the client sends while the plan runs
  std::size_t read_limit = 0;         // stop reading into `buffer` beyond this size
  const ResponsePlan& plan;
  WallTime arrived;        // the request's arrival; step offsets count from here
  WallTime session_start;  // journal times are offsets from here
  Journal& journal;
  std::uint64_t entry_index = 0;
};

struct ExchangeEnd {
  EndKind kind = EndKind::kCompleted;
  Duration at{0};  // session offset
  std::string detail;
};

// Runs the plan to its end (or until the client goes away or the server stops), journals every
// write and the end. Never throws: should anything in it throw anyway (allocation), the exchange
// ends in the journal as a failed write and the socket is closed. After kResetByServer the socket
// is closed; after kClosedByServer its sending side is shut down.
boost::asio::awaitable<ExchangeEnd> ExecutePlan(const ExchangeContext& context);

// Whether the plan ever waits (a timer, a stall, a heartbeat): only those need the concurrent
// client watch; a plan that is written at once is just written.
bool PlanWaits(const ResponsePlan& plan);

// The heartbeat instants of a kHeartbeat step, as offsets from the request's arrival: at + k *
// every for k = 1, 2, ... while k * every <= length. `every` <= 0 yields none.
bool NextHeartbeat(const PlanStep& step, int k, Duration& offset);

}  // namespace faultline::provider::internal
