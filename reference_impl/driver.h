// The real driver: runs the sans-I/O call engine (call.h) over TCP on a Boost.Asio io_context.
//
// It performs the engine's actions — resolve + connect (plain HTTP/1.1, no TLS), write the request
// bytes, read into the engine, one steady_timer for deadlines and backoff waits, close the
// connection of a failed attempt (never reused) — and hands each lifecycle event to the caller's
// sink before performing the actions that came with it (so `response/interrupted` is delivered
// before the backoff wait starts). The engine makes every decision; the driver only reads clocks
// and moves bytes.
//
// Many calls may run concurrently on one io_context (each call runs on its own strand, so the
// io_context may be run by several threads). Cancel() may be called from any thread: it is posted
// to the call's strand, closes the socket and ends the call with ABORTED.
//
// No exception leaves the driver: one thrown while the call handles an input (by the engine, by
// Beast, or by the caller's on_event) or inside one of its coroutines is printed to stderr and
// ends the call in a defined state: a response/failed with code UNKNOWN whose message says what
// was thrown (unless the call had already ended), then on_done.
//
// Ownership: Launch() returns a shared handle; the in-flight operations keep the call alive until
// it is done. The io_context must outlive every handle (the call owns a timer of it). The
// callbacks run on the call's strand; they must not block.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>

#include "reference_impl/call.h"

namespace faultline::ref {

struct DriverCallbacks {
  std::function<void(const LifecycleEvent&)> on_event;  // every lifecycle event, in order
  std::function<void()> on_done;                        // once, after the terminal event
};

class CallDriver {
 public:
  // Starts the call at once (its first connect is posted to `io`).
  static std::shared_ptr<CallDriver> Launch(boost::asio::io_context& io, CallRequest request,
                                            RetryPolicy policy, CallOptions options,
                                            DriverCallbacks callbacks);
  virtual ~CallDriver() = default;

  // Thread-safe: ends the call with ABORTED (a no-op once it is done).
  virtual void Cancel() = 0;

  // Counters for tests; read them once the call is done (or from its strand).
  virtual std::uint64_t connections_opened() const = 0;
  virtual std::uint64_t connections_closed() const = 0;
};

}  // namespace faultline::ref
