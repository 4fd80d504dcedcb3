// The trace of one scenario run: what the client said (lifecycle events, timestamped on receipt)
// merged with what the provider saw (its journal, the ground truth).
//
// Both worlds produce the same Trace, so the invariants (judge.h) and metrics (metrics.h) are pure
// functions of it. Every time is an offset from the run's time zero, the call's first request at
// the provider (FirstRequestAt): a subject's start-up (an interpreter loading its library) comes
// before it, at negative times, and never counts. Client records and journal entries compare
// directly.
//
// Values only. Thread-safety: values.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fake_provider/journal.h"
#include "harness/trace/event.h"
#include "nlohmann/json.hpp"

namespace faultline::harness {

using Duration = std::chrono::microseconds;

// One line the subject wrote (an adapter-protocol event, docs/adapter-protocol.md).
struct ClientRecord {
  Duration at{0};     // when the runner received it
  int call = 0;       // which concurrent call of the scenario (0-based)
  ClientEvent event;  // the line, parsed and validated at receipt
};

// A subject that broke the adapter protocol: its own verdict, never a client bug.
struct SubjectFault {
  std::string kind;     // report::SubjectError kinds: "cannot-start", "no-hello", "exited", ...
  std::string message;  // what exactly, with the offending line or exit status
  std::optional<int> exit_status;
  std::optional<int> signal;
};

// A gateway between the client and the routes (harness/gateways/gateway.h): the journal then
// holds what the gateway sent its upstreams, the client records what it got back.
struct GatewayRun {
  std::string name;
  int max_upstream_attempts = 1;  // GatewayDeclaration
};

struct Trace {
  int calls = 1;  // calls the scenario made
  // Every call ran in one client that keeps its circuit breakers and retry budget from call to
  // call (the in-process reference client, ref::ClientState). An adapter runs each call in a
  // process of its own, so its calls share nothing: false.
  bool one_client = false;
  std::vector<ClientRecord> client;             // in receipt order
  std::vector<provider::JournalEntry> journal;  // in arrival order
  std::optional<Duration> cancel_at;            // when the runner sent the cancel
  Duration ended{0};                            // when the runner stopped watching
  // The wall clock at the trace's time zero (virtual: the virtual world's own), for what a client
  // reads against its own clock (a Retry-After date that Date.parse reads). Not fingerprinted.
  std::chrono::system_clock::time_point wall_start{};
  bool subject_timed_out = false;              // the runner had to stop the subject
  std::optional<Duration> subject_stopped_at;  // when it did: connections closed from then on
                                               // were closed by the runner, not the client
  std::string subject_stderr;                  // free-form, kept for the report
  std::string subject_stdout;                  // an app's (free text); an adapter's is events
  std::vector<std::string> subject_endings;    // how an app's processes ended, for people
  std::vector<std::string> protocol_errors;    // lines that were not valid protocol JSON
  std::optional<SubjectFault> subject_fault;   // the first protocol break, if any
  bool interrupted = false;  // the run was stopped by a stop request (Ctrl-C): not judged
  // Nobody said how the calls ended (a `faultline serve` session judged from its journal alone,
  // worlds/served_session.h): the checks of an ending are n/a, never failed.
  bool outcome_unknown = false;
  // The subject sends a request of its own choosing (an unmodified app: `--exec`, a served
  // session), not the call line's: ROUTE-008 cannot hold it to the routes' own bodies.
  bool own_request = false;
  // Over real sockets: how late the machine ran things during the run (the worst wake-up of the
  // world's scheduling probe, or of the provider's planned writes); the judge's upper tolerances
  // grow with it (judge.h Tolerance).
  std::optional<Duration> scheduling_lateness;
  // When the scenario's scripted time (listener outages, route health) started: the subject's
  // first attempt over real sockets (worlds/real_world.h); nullopt: with the session. Started by
  // the runner's fallback, it says nothing of the subject's first attempt.
  std::optional<Duration> scripted_from;
  bool scripted_by_fallback = false;
  std::optional<GatewayRun> gateway;  // the subject is a gateway (judge/gateway_checks.h)
};

// The trace as the run result stores it (times in ms; see reports/run_result.h).
nlohmann::json TraceToJson(const Trace& trace);

// A hex digest of everything in the trace that the subject and provider decided (events, times,
// journal records; not connection ids or socket error texts). Equal seeds in the virtual world
// give equal fingerprints.
std::string Fingerprint(const Trace& trace);
// TraceToJson(trace) and Fingerprint(trace) together, the JSON built once.
std::pair<nlohmann::json, std::string> TraceJsonAndFingerprint(const Trace& trace);

// The real world's fingerprint: only what the seed determines there, never a wall-clock time:
// the provider's plan for each request that reached it (attempt, status, plan summary and its
// ground truth) and `verdicts` (the runner's account of the run's verdict and failed checks).
// Equal seeds give equal fingerprints run after run, on any machine load.
std::string SeededFingerprint(const Trace& trace, std::string_view verdicts);

// Where the run's time zero lies in the trace's own frame: the first request's arrival at the
// provider when every attempt reached it (or the subject reports none); else, some attempt having
// been refused before it reached the provider, the subject's first response/start; with neither,
// the trace's own zero. A subject's response/start may come long before its request on a loaded
// machine (seen: 690 ms), so arrivals come first.
Duration FirstRequestAt(const Trace& trace);

// Moves every time of the trace (client records, journal arrivals, writes and ends, the cancel,
// the stop and the end) by -`zero`, so that `zero` becomes time zero.
void ShiftTimes(Trace& trace, Duration zero);

// The worst lateness the trace itself shows: a planned provider write that went out late.
Duration ProviderWriteLateness(const Trace& trace);

// One trace per call of a scenario with several concurrent calls, when the journal says which
// call sent every request that counted (each call has its own base URL onto the shared session,
// fake_provider/admission.h); nullopt when it does not, or for a single call. Trace i holds call
// i's records (as call 0, after the subject's hello) and the journal entries it sent; the
// cancel, end and stop times are the run's. The invariants judge each call on its own trace.
std::optional<std::vector<Trace>> SplitByCall(const Trace& trace);

// Whether the record is a terminal event (for range algorithms).
inline bool IsTerminal(const ClientRecord& record) { return record.event.terminal(); }
double Ms(Duration duration);

}  // namespace faultline::harness
