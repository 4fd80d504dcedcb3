// The in-process reference client as the subject of a run over real sockets: its request for each
// call of the scenario, and the calls run on one io_context driven on the caller's thread (each
// call's launch when due, the scripted cancel, the run's timeout and a stop request). Every call
// is one client's: they share its breakers and retry budget (ref::ClientState).
//
// Thread-safety: RunReferenceCalls blocks its caller; another thread may request a stop through
// RealRunOptions::stop.
#pragma once

#include <chrono>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/trace/protocol.h"
#include "harness/trace/trace.h"
#include "harness/worlds/real_run.h"
#include "reference_impl/call.h"
#include "reference_impl/policy.h"
#include "scenarios/scenario.h"

namespace faultline::harness {

// The reference client's request of each of `calls` calls: call i under its own base URL
// (provider::CallBaseUrl), with its routes.
std::expected<std::vector<ref::CallRequest>, std::string> ReferenceRequests(
    const scenario::Scenario& scenario, const std::string& base_url,
    const std::vector<protocol::RouteLine>& routes, int calls);

// When the session's first request reached the provider, if one did yet.
using FirstArrival = std::function<std::optional<Duration>()>;

// Runs call i as `requests[i]` (call i due i x call_interval after `start`) until every call is
// done, recording their events in `trace` (times from `start`), with its cancel, timeout and
// interruption.
void RunReferenceCalls(const scenario::Scenario& scenario, const ref::RetryPolicy& policy,
                       const RealRunOptions& options, std::chrono::steady_clock::time_point start,
                       FirstArrival first_arrival, std::vector<ref::CallRequest> requests,
                       Trace& trace);

}  // namespace faultline::harness
