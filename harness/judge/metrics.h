// Latency and cost of one scenario run under its faults, computed from the trace. Times count
// from the call's first request at the provider (or, when none arrived, the subject's first
// event after its hello): an adapter's interpreter start-up is never latency.
//
//   first_token_ms       first assistant/chunk of the attempt that committed
//   terminal_ms          the terminal event
//   forced_minimum_ms    the least time the scenario forces on any correct client: every
//                        Retry-After floor it waited, plus the scripted duration of the answer
//                        that was committed (delays, finite stalls, pacing)
//   recovery_overhead_ms terminal - forced minimum: what the client's own recovery cost
//   attempts             requests that reached the provider
//   wasted_bytes/tokens  bytes the provider sent on attempts whose output was discarded (tokens
//                        as the subject reported them, else bytes / 4)
//   calls                with several calls at once: each call's first token, terminal and
//                        attempts, from the same t = 0 (the fields above are call 0's)
//
// Pure. Thread-safety: reentrant.
#pragma once

#include "harness/trace/trace.h"
#include "reports/run_result.h"

namespace faultline::harness {

report::Metrics ComputeMetrics(const Trace& trace);

}  // namespace faultline::harness
