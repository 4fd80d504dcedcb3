// The checks of a gateway run (Trace::gateway, harness/gateways/gateway.h): the journal holds
// what the gateway sent its upstreams, the client records what it got back. A gateway may retry
// and fail over as it declares, but must not exceed its declared attempts, retry an upstream
// inside that upstream's Retry-After, splice two upstreams' streams, retry after a stream has
// begun to reach the client, retry what cannot succeed, hide a failed stream from its client,
// drop the Retry-After of a rate limit it passes on, or break an answer an upstream sent whole.
//
// Pure functions of the trace, like the rest of the judge.
#pragma once

#include <vector>

#include "harness/judge/judge.h"
#include "reports/run_result.h"

namespace faultline::harness {

// The gateway checks' ids and statements (GW-001...), for docs and listings.
const std::vector<InvariantInfo>& GatewayCheckCatalog();

// Judges a gateway run; the client in front of it is the reference client, not judged here, and
// the scenario's `expect:` is not either: gateways may legitimately differ in how they end a
// call (two tries or three), never in the invariants above.
std::vector<report::CheckResult> JudgeGateway(const Trace& trace, const Tolerance& tolerance);

}  // namespace faultline::harness
