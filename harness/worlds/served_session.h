// A `faultline serve` session judged after the fact (`faultline serve --report`,
// docs/testing-your-app.md): the requests a hand-run app (or a test suite) sent it, as the trace
// an `--exec` run of that app would have given.
//
// Nobody ran the app here, so nothing says how its calls ended unless its user does: without a
// stated outcome the trace says so (Trace::outcome_unknown) and the judge leaves the checks of an
// ending n/a; with one, every call the journal shows ends that way at the end of its last
// exchange, as an app's exit would. Its hello declares the policy given for the app, or none.
//
// Pure function. Thread-safety: reentrant.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "fake_provider/journal.h"
#include "harness/trace/trace.h"
#include "nlohmann/json.hpp"

namespace faultline::harness {

enum class StatedOutcome { kCommitted, kFailed };

struct ServedSession {
  std::vector<provider::JournalEntry> journal;  // on the session's own time axis
  std::optional<Duration> scripted_from;        // Server::ScriptedStart
  // The wall clock at the session's start, for what a client reads against its clock.
  std::chrono::system_clock::time_point wall_start{};
};

// nullopt when no request of the session counted (it has nothing to judge).
std::optional<Trace> ServedTrace(ServedSession session, std::optional<nlohmann::json> policy,
                                 std::optional<StatedOutcome> outcome);

}  // namespace faultline::harness
