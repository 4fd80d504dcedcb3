#include "harness/judge/policy_twin.h"

#include <fmt/format.h>

#include <algorithm>

#include "harness/trace/protocol.h"

namespace faultline::harness {
namespace {

TwinOutcome OutcomeOf(const ClientRecord& terminal) {
  const ClientEvent& event = terminal.event;
  TwinOutcome outcome;
  outcome.type = event.kind;
  outcome.ended_ms = Ms(terminal.at);
  if (outcome.type == EventKind::kCommitted) {
    outcome.text = event.text.value_or("");
    return outcome;
  }
  if (event.failure) {
    outcome.failure_class = event.failure->failure_class;
    outcome.failure_code = event.failure->code;
    outcome.retryable = event.failure->retryable;
  }
  outcome.give_up = event.give_up;
  return outcome;
}

// `policy` with every timeout moved by `shift` (never below 1 ms).
ref::RetryPolicy Shifted(ref::RetryPolicy policy, std::chrono::milliseconds shift) {
  for (auto* timeout : {&policy.timeouts.connect, &policy.timeouts.response_headers,
                        &policy.timeouts.idle, &policy.timeouts.total}) {
    if (*timeout) **timeout = std::max(std::chrono::milliseconds(1), **timeout + shift);
  }
  if (policy.timeouts.total) {
    policy.min_attempt_time = std::min(policy.min_attempt_time, *policy.timeouts.total);
  }
  return policy;
}

// One policy the twin runs: the declared one, or one moved within the timeout tolerance.
struct Variant {
  ref::RetryPolicy policy;
  Duration retry_lag{0};
};

// Over real sockets a timeout may fire a little early or late, and a retry may leave late: the
// twin also runs the policy with its timeouts moved by the tolerance either way, and with its
// retries lagging by half and all of it.
std::vector<Variant> VariantsOf(const ref::RetryPolicy& policy,
                                std::chrono::milliseconds tolerance) {
  std::vector<Variant> variants{{policy}};
  if (tolerance.count() > 0) {
    variants.push_back({Shifted(policy, -tolerance)});
    variants.push_back({Shifted(policy, tolerance)});
    variants.push_back({policy, std::chrono::duration_cast<Duration>(tolerance / 2)});
    variants.push_back({policy, std::chrono::duration_cast<Duration>(tolerance)});
  }
  return variants;
}

// Adds each call's ending in `trace` to the twin's outcomes, once each.
void AddOutcomes(const Trace& trace, PolicyTwin& twin) {
  const auto requests = static_cast<int>(std::ranges::count_if(
      trace.journal, [](const provider::JournalEntry& entry) { return entry.attempt > 0; }));
  std::vector<int> starts(static_cast<std::size_t>(std::max(trace.calls, 1)) + 1, 0);
  for (const ClientRecord& record : trace.client) {
    const auto call = static_cast<std::size_t>(std::clamp(record.call, 0, trace.calls));
    if (record.event.kind == EventKind::kStart) ++starts[call];
    if (!record.event.terminal()) continue;
    TwinOutcome outcome = OutcomeOf(record);
    outcome.attempts = starts[call];
    outcome.requests = requests;
    if (std::ranges::find(twin.outcomes, outcome) == twin.outcomes.end()) {
      twin.outcomes.push_back(std::move(outcome));
    }
  }
}

}  // namespace

Duration LeadOfFirstAttempt(const Trace& trace) {
  if (trace.client.empty()) return Duration{0};
  // Scripted time starts at the subject's first attempt (worlds/real_world.h): the lead is what
  // lies between the two accounts of it (its response/start line and its request's arrival).
  const Duration scripted = trace.scripted_from.value_or(trace.client.front().at);
  return std::max(Duration{0}, FirstRequestAt(trace) - scripted);
}

void MergeTwins(PolicyTwin& into, const PolicyTwin& from) {
  if (!from.error.empty()) return;  // no runs to add
  into.seeds += from.seeds;
  for (const TwinOutcome& outcome : from.outcomes) {
    if (std::ranges::find(into.outcomes, outcome) == into.outcomes.end()) {
      into.outcomes.push_back(outcome);
    }
  }
  into.never_ends = into.never_ends || from.never_ends;
  into.request_bound = std::max(into.request_bound, from.request_bound);
}

PolicyTwin ComputeTwin(const scenario::Scenario& scenario, const ref::RetryPolicy& policy,
                       std::uint64_t seed, std::uint64_t provider_seed,
                       const TwinOptions& twin_options) {
  PolicyTwin twin;
  const int seeds = twin_options.seeds;
  const auto tolerance =
      std::chrono::milliseconds(static_cast<long long>(twin_options.timeout_tolerance_ms));
  const std::vector<Variant> variants = VariantsOf(policy, tolerance);
  const std::uint64_t max_requests = twin_options.max_requests;
  const std::shared_ptr<const CompiledSessions> compiled =
      twin_options.compiled ? twin_options.compiled : CompileSessions(scenario);
  std::uint64_t requests_sent = 0;  // by every run so far
  for (int i = 0; i < seeds * static_cast<int>(variants.size()); ++i) {
    if (max_requests > 0 && requests_sent >= kTwinRunsAtTheBound * max_requests) {
      twin.request_bound = max_requests;  // judged on the runs made so far
      twin.never_ends = true;
      break;
    }
    VirtualRunOptions options;
    options.seed = seed + static_cast<std::uint64_t>(i % seeds) * 0x9e3779b97f4a7c15ULL;
    options.provider_seed = provider_seed;
    const Variant& variant = variants[static_cast<std::size_t>(i / seeds)];
    options.policy = variant.policy;
    options.retry_lag = variant.retry_lag;
    options.scripted_lead = twin_options.scripted_lead;
    options.one_client = twin_options.one_client;
    options.horizon = kTwinHorizon;
    options.max_requests = max_requests;
    options.compiled = compiled;
    auto trace = RunVirtual(scenario, options);
    if (!trace) {
      twin.error = trace.error();
      return twin;
    }
    ++twin.seeds;
    requests_sent += trace->journal.size();
    if (trace->subject_timed_out) twin.never_ends = true;
    if (StoppedAtRequestBound(*trace, max_requests)) twin.request_bound = max_requests;
    AddOutcomes(*trace, twin);
  }
  return twin;
}

std::optional<double> PolicyTwin::earliest_end_ms() const {
  if (outcomes.empty()) return std::nullopt;
  return std::ranges::min(outcomes, {}, &TwinOutcome::ended_ms).ended_ms;
}

std::string DescribeOutcomes(const PolicyTwin& twin) {
  std::vector<std::string> parts;
  for (const TwinOutcome& outcome : twin.outcomes) {
    const std::string part =
        outcome.type == EventKind::kCommitted
            ? fmt::format("committed after {} attempt(s)", outcome.attempts)
            : fmt::format("failed {} ({}) after {} attempt(s){}", outcome.failure_code,
                          outcome.failure_class, outcome.attempts,
                          outcome.give_up.empty() ? "" : ", gave up: " + outcome.give_up);
    if (std::ranges::find(parts, part) == parts.end()) parts.push_back(part);
  }
  if (twin.request_bound > 0) {
    parts.push_back(fmt::format("still sending requests after {} requests", twin.request_bound));
  } else if (twin.never_ends) {
    parts.push_back(
        fmt::format("still running after {} h",
                    std::chrono::duration_cast<std::chrono::hours>(kTwinHorizon).count()));
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == parts.size() ? " or " : ", ") + parts[i];
  }
  return out;
}

}  // namespace faultline::harness
