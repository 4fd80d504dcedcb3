#include "fake_provider/server/plan_execution.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <optional>
#include <utility>

#include "beast/awaitable_tuple.h"
#include "fake_provider/server/server_engine.h"

namespace faultline::provider::internal {
namespace {

using net::kTuple;
constexpr std::size_t kClientReadChunk = 4096;

bool ClientGone(const boost::system::error_code& ec) {
  return ec == asio::error::broken_pipe || ec == asio::error::connection_reset ||
         ec == asio::error::eof || ec == asio::error::not_connected ||
         ec == asio::error::connection_aborted || ec == asio::error::shut_down;
}

// The mutable state of one execution, shared by the step runner and the client watch (both run
// on the connection's executor, never at the same time).
struct Exchange {
  explicit Exchange(const ExchangeContext& context) : ctx(context) {}

  // Only a plan that waits needs the timers (PlanWaits): one written at once does not pay for
  // them (each finds its service under a lock when it is made, and cancels when destroyed).
  void MakeTimers() {
    timer.emplace(ctx.socket.get_executor());
    idle.emplace(ctx.socket.get_executor());
  }

  Duration Offset(WallTime t) const { return t - ctx.session_start; }
  Duration NowOffset() const { return Offset(ctx.engine.clock().Now()); }

  const ExchangeContext& ctx;
  // Owned here, not by the coroutines that wait on them: under `||` the loser is cancelled
  // through its last operation, which must still exist.
  std::optional<asio::steady_timer> timer;  // the step runner's
  std::optional<asio::steady_timer> idle;   // the client watch's, once it stops reading
  bool waiting_for_content = false;         // inside a stall or heartbeat step
  bool further_request = false;             // a further request's bytes came (journalled once)
  std::optional<ExchangeEnd> steps_end;     // set when the step runner finished on its own
  std::optional<ExchangeEnd> client_end;    // set when the watch saw the client go
};

// The server is stopping or this coroutine was cancelled: start no new wait or write.
asio::awaitable<bool> Interrupted(const Exchange& x) {
  if (x.ctx.engine.stopping()) co_return true;
  const bool cancelled = co_await Cancelled();
  co_return cancelled;
}

// Waits until `offset` after the arrival. False when cancelled (client gone, server stopping).
asio::awaitable<bool> WaitUntil(Exchange& x, Duration offset) {
  const bool interrupted = co_await Interrupted(x);
  if (interrupted) co_return false;
  const SteadyTime due = x.ctx.engine.clock().ToSteady(x.ctx.arrived + offset);
  if (due <= std::chrono::steady_clock::now()) co_return true;
  x.timer->expires_at(due);
  auto [ec] = co_await x.timer->async_wait(kTuple);
  co_return !ec;
}

// Waits until cancelled (the client goes, the plan's other half ends, the server stops).
asio::awaitable<void> WaitForever(const Exchange& x, asio::steady_timer& timer) {
  const bool interrupted = co_await Interrupted(x);
  if (interrupted) co_return;
  timer.expires_at(SteadyTime::max());
  co_await timer.async_wait(kTuple);
}

// A write of bytes planned for `planned` (session offset), started at `at`.
struct WriteStart {
  Duration at;
  Duration planned;
};

// Records how late the write planned for `offset` after arrival starts.
WriteStart StartWrite(Exchange& x, Duration offset) {
  const WriteStart start{x.NowOffset(), x.Offset(x.ctx.arrived) + offset};
  if (offset > Duration::zero()) x.ctx.engine.lateness().Record(start.at - start.planned);
  return start;
}

// Journals a finished write. Returns an end when the exchange is over (write failure), nullopt
// to carry on; `cancelled` is set when the write was cancelled.
std::optional<ExchangeEnd> EndWrite(Exchange& x, const WriteStart& start,
                                    const boost::system::error_code& ec, std::size_t written,
                                    bool& cancelled) {
  x.ctx.engine.counters().bytes_sent.fetch_add(written, std::memory_order_relaxed);
  if (written > 0 || !ec) {
    x.ctx.journal.RecordWrite(x.ctx.entry_index, {start.at, start.planned, written});
  }
  if (!ec) return std::nullopt;
  if (ec == asio::error::operation_aborted || x.ctx.engine.stopping()) {
    cancelled = true;  // the client watch or Stop() ended the write
    return std::nullopt;
  }
  const EndKind kind = !ClientGone(ec)         ? EndKind::kWriteFailed
                       : x.waiting_for_content ? EndKind::kStalledClientGaveUp
                                               : EndKind::kClientClosed;
  return ExchangeEnd{kind, x.NowOffset(), ec.message()};
}

// Writes `bytes` planned for `offset` after arrival, now (StartWrite, EndWrite).
asio::awaitable<std::optional<ExchangeEnd>> WriteNow(Exchange& x, const std::string& bytes,
                                                     Duration offset, bool& cancelled) {
  const WriteStart start = StartWrite(x, offset);
  auto [ec, written] = co_await asio::async_write(x.ctx.socket, asio::buffer(bytes), kTuple);
  co_return EndWrite(x, start, ec, written, cancelled);
}

// WriteNow, unless the exchange was interrupted first.
asio::awaitable<std::optional<ExchangeEnd>> Write(Exchange& x, const std::string& bytes,
                                                  Duration offset, bool& cancelled) {
  const bool interrupted = co_await Interrupted(x);
  if (interrupted) {
    cancelled = true;
    co_return std::nullopt;
  }
  auto end = co_await WriteNow(x, bytes, offset, cancelled);
  co_return end;
}

// No bytes until the end of the step (finite), or until the client goes (forever).
asio::awaitable<std::optional<ExchangeEnd>> Stall(Exchange& x, const PlanStep& step,
                                                  bool& cancelled) {
  if (step.length) {
    const bool held = co_await WaitUntil(x, step.at + *step.length);
    cancelled = !held;
  } else {
    co_await WaitForever(x, *x.timer);
    cancelled = true;
  }
  co_return std::nullopt;
}

asio::awaitable<std::optional<ExchangeEnd>> Heartbeat(Exchange& x, const PlanStep& step,
                                                      bool& cancelled) {
  Duration offset{0};
  for (int k = 1; NextHeartbeat(step, k, offset); ++k) {
    const bool due = co_await WaitUntil(x, offset);
    if (!due) {
      cancelled = true;
      co_return std::nullopt;
    }
    auto end = co_await Write(x, step.bytes, offset, cancelled);
    if (end || cancelled) co_return end;
  }
  // Finite: hold until the end of the step. Forever (or every == 0): until the client goes.
  co_return co_await Stall(x, step, cancelled);
}

ExchangeEnd CloseOrReset(Exchange& x, PlanStep::Kind kind) {
  boost::system::error_code ec;
  if (kind == PlanStep::Kind::kReset) {
    // SO_LINGER {on, 0}: close() discards the send queue and answers with RST.
    x.ctx.socket.set_option(asio::socket_base::linger(true, 0), ec);
    x.ctx.socket.close(ec);
    return {EndKind::kResetByServer, x.NowOffset(), {}};
  }
  x.ctx.socket.shutdown(tcp::socket::shutdown_send, ec);
  return {EndKind::kClosedByServer, x.NowOffset(), ec ? ec.message() : std::string()};
}

// One step; returns an end when the exchange is over before the plan is, sets `cancelled` when
// it was interrupted.
asio::awaitable<std::optional<ExchangeEnd>> RunStep(Exchange& x, const PlanStep& step,
                                                    bool& cancelled) {
  using Kind = PlanStep::Kind;
  if (step.kind == Kind::kHeartbeat || step.kind == Kind::kStall) {
    x.waiting_for_content = true;
    std::optional<ExchangeEnd> end;
    if (step.kind == Kind::kStall) {
      end = co_await Stall(x, step, cancelled);
    } else {
      end = co_await Heartbeat(x, step, cancelled);
    }
    if (!cancelled && !end) x.waiting_for_content = false;
    co_return end;
  }
  const bool due = co_await WaitUntil(x, step.at);
  if (!due) {
    cancelled = true;
    co_return std::nullopt;
  }
  if (step.kind == Kind::kSend) {
    auto end = co_await Write(x, step.bytes, step.at, cancelled);
    co_return end;
  }
  co_return CloseOrReset(x, step.kind);
}

// `at_once`: the plan never waits (PlanWaits false: all due at arrival, no stall or heartbeat),
// and its steps run here without RunStep's coroutines, timer check and cancellation check: a
// stream written at once is most of a load test's work. Nothing cancels such a plan (it does not
// run under `||`, and Stop() closes the socket instead, which fails the write), so the server
// stopping is the one interruption to look for.
asio::awaitable<void> RunSteps(Exchange& x, bool at_once) {
  co_await asio::this_coro::throw_if_cancelled(false);
  for (const PlanStep& step : x.ctx.plan.steps) {
    bool cancelled = false;
    std::optional<ExchangeEnd> end;
    if (!at_once) {
      end = co_await RunStep(x, step, cancelled);
    } else if (x.ctx.engine.stopping()) {
      co_return;
    } else if (step.kind == PlanStep::Kind::kSend) {  // WriteNow without a coroutine of its own
      const WriteStart start = StartWrite(x, step.at);
      auto [ec, written] =
          co_await asio::async_write(x.ctx.socket, asio::buffer(step.bytes), kTuple);
      end = EndWrite(x, start, ec, written, cancelled);
    } else {
      end = CloseOrReset(x, step.kind);
    }
    if (cancelled) co_return;
    if (end) {
      x.steps_end = std::move(end);
      co_return;
    }
  }
  x.steps_end = ExchangeEnd{EndKind::kCompleted, x.NowOffset(), {}};
}

// Notes, once, that bytes past this exchange's request came while its response was in progress:
// from `from` on in the buffer, anything but the blank lines a client may send between requests.
void NoteFurtherRequest(Exchange& x, std::size_t from) {
  if (x.further_request) return;
  const auto data = x.ctx.buffer.data();
  const std::string_view bytes(static_cast<const char*>(data.data()), data.size());
  if (from >= bytes.size() || bytes.find_first_not_of("\r\n", from) == std::string_view::npos) {
    return;
  }
  x.further_request = true;
  x.ctx.journal.RecordFurtherRequest(x.ctx.entry_index, x.NowOffset());
}

// Reads what the client has sent so far into the buffer without blocking. Returns the reason
// when the client has gone (EOF, reset).
std::optional<std::string> DrainReadable(Exchange& x) {
  auto& buffer = x.ctx.buffer;
  while (buffer.size() < x.ctx.read_limit) {
    const std::size_t room = std::min(kClientReadChunk, x.ctx.read_limit - buffer.size());
    boost::system::error_code ec;
    const std::size_t n = x.ctx.socket.read_some(buffer.prepare(room), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) return std::nullopt;
    if (ec == asio::error::eof) return "the client closed the connection";
    if (ec) return ec.message();
    const std::size_t before = buffer.size();
    buffer.commit(n);
    x.ctx.engine.counters().bytes_received.fetch_add(n, std::memory_order_relaxed);
    NoteFurtherRequest(x, before);
    if (n < room) return std::nullopt;
  }
  return std::nullopt;
}

asio::awaitable<void> WatchClient(Exchange& x) {
  co_await asio::this_coro::throw_if_cancelled(false);
  while (true) {
    const bool interrupted = co_await Interrupted(x);
    if (interrupted) co_return;
    if (x.ctx.buffer.size() >= x.ctx.read_limit) {
      // Enough pipelined bytes: stop reading (TCP flow control holds the rest).
      co_await WaitForever(x, *x.idle);
      co_return;
    }
    auto [ec] = co_await x.ctx.socket.async_wait(tcp::socket::wait_read, kTuple);
    // Aborted: the plan finished first, or Stop() closed the socket.
    if (ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor ||
        x.ctx.engine.stopping()) {
      co_return;
    }
    std::optional<std::string> gone = ec ? std::optional(ec.message()) : DrainReadable(x);
    if (gone) {
      const EndKind kind =
          x.waiting_for_content ? EndKind::kStalledClientGaveUp : EndKind::kClientClosed;
      x.client_end = ExchangeEnd{kind, x.NowOffset(), std::move(*gone)};
      co_return;
    }
  }
}

}  // namespace

bool PlanWaits(const ResponsePlan& plan) {
  return std::any_of(plan.steps.begin(), plan.steps.end(), [](const PlanStep& step) {
    return step.at > Duration::zero() || step.kind == PlanStep::Kind::kStall ||
           step.kind == PlanStep::Kind::kHeartbeat;
  });
}

bool NextHeartbeat(const PlanStep& step, int k, Duration& offset) {
  if (step.every <= Duration::zero()) return false;
  const Duration elapsed = step.every * k;
  if (step.length && elapsed > *step.length) return false;
  offset = step.at + elapsed;
  return true;
}

namespace {

// Journals how the exchange ended. The step runner's own end wins: it may have closed the
// socket, which also ends the watch.
ExchangeEnd ConcludeExchange(Exchange& x) {
  ExchangeEnd end =
      x.steps_end    ? std::move(*x.steps_end)
      : x.client_end ? std::move(*x.client_end)
                     : ExchangeEnd{EndKind::kServerShutdown, x.NowOffset(), "the server stopped"};
  x.ctx.journal.End(x.ctx.entry_index, end.kind, end.at, end.detail);
  return end;
}

// Should anything throw anyway (allocation), the exchange still ends in the journal, as a
// failed write, and the connection is closed.
ExchangeEnd FailExchange(const ExchangeContext& context, std::exception_ptr failure) {
  context.engine.LogFailure("a response plan")(failure);
  const Duration at = context.engine.clock().Now() - context.session_start;
  ExchangeEnd end{EndKind::kWriteFailed, at, "internal error: the response plan failed"};
  context.journal.End(context.entry_index, end.kind, end.at, end.detail);
  boost::system::error_code ignored;
  context.socket.close(ignored);
  return end;
}

}  // namespace

// One coroutine for the exchange and its failure handling: every request pays for each frame.
asio::awaitable<ExchangeEnd> ExecutePlan(const ExchangeContext& context) {
  using namespace asio::experimental::awaitable_operators;
  std::exception_ptr failure;
  try {
    Exchange x(context);
    NoteFurtherRequest(x, 0);  // sent with the request, before any of its response (pipelined)
    if (PlanWaits(context.plan)) {
      x.MakeTimers();
      co_await (RunSteps(x, /*at_once=*/false) || WatchClient(x));
    } else {
      co_await RunSteps(x, /*at_once=*/true);
    }
    co_return ConcludeExchange(x);
  } catch (...) {
    failure = std::current_exception();
  }
  co_return FailExchange(context, failure);
}

}  // namespace faultline::provider::internal
