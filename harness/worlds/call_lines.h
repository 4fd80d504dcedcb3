// The call lines of a scenario run (docs/adapter-protocol.md): what every call of an adapter
// subject is told, each call under its own base URL (provider::CallBaseUrl, so the journal
// attributes each request to its call) and seeded as the in-process reference client seeds it.
// The one place the runner builds them; RoutesOfCall is shared with the reference client's
// requests (reference_calls.h), so both kinds of subject are sent to the same places.
//
// Pure functions. Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/trace/protocol.h"
#include "scenarios/scenario.h"

namespace faultline::harness {

// The call line's routes as call `call` of `calls` gets them: each under that call's own base URL
// (provider::CallBaseUrl), as the primary's base URL is.
std::vector<protocol::RouteLine> RoutesOfCall(std::vector<protocol::RouteLine> routes, int call,
                                              int calls);

// The call line every call of an adapter subject gets, but for what is each call's own
// (CallLines).
protocol::CallLine CallLineOf(const scenario::Scenario& scenario, const std::string& base_url,
                              const std::vector<protocol::RouteLine>& routes);

// Call i's line of `calls`: under its own base URL and routes, seeded `seed` + i.
std::vector<protocol::CallLine> CallLines(const protocol::CallLine& common, int calls,
                                          std::uint64_t seed);

// The line as written to the adapter's stdin (no newline; invalid UTF-8 replaced).
std::string LineText(const protocol::CallLine& call);

}  // namespace faultline::harness
