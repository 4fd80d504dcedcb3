// EXPECT-* checks of the facts a scenario's `expect:` block may state beyond the ending: the
// final failure's facts, each failed attempt's class and code, the retry delays, the chunks, the
// requests that reached the provider and the request headers.
//
// Like the rest of `expect:`, they are written for the scenario's policy. A subject with another
// declared policy is held to what stays true under it: the classes of the attempts it made (the
// provider's answers do not depend on the policy), "no chunks" versus "some", the request count
// its policy twin reaches, the facts of a failure with the expected code, and the headers every
// request carries. Retry delays belong to the policy: RETRY-003 and RETRY-004 judge a declared
// one.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "harness/judge/judge_internal.h"

namespace faultline::harness::judge_internal {
namespace {

// The failures a call reported, in order: every response/interrupted, then a response/failed.
std::vector<const ReportedFailure*> ReportedFailures(const CallView& call) {
  std::vector<const ReportedFailure*> out;
  for (const ClientRecord* record : call.records) {
    const EventKind kind = record->event.kind;
    if (kind != EventKind::kInterrupted && kind != EventKind::kFailed) continue;
    if (record->event.failure) out.push_back(&*record->event.failure);
    if (kind == EventKind::kFailed) break;
  }
  return out;
}

// A number of milliseconds as a subject's line wrote it.
std::string ShownMs(double ms) { return nlohmann::json(ms).dump(); }

// What the stated facts make of one reported failure. `status`, `retry_after_ms` and
// `request_id` are optional in the protocol: a fact about a field the subject does not report
// has no evidence either way, so it is not judged (no evidence, no pass).
struct FactVerdict {
  std::string mismatch;  // "" when every judged fact holds
  bool judged = false;   // some stated fact had its field reported
};

// Each stated fact alone: nullopt when it is not stated or its field not reported, else the
// mismatch ("" when it holds).
std::optional<std::string> StatusFact(const scenario::ExpectFailure& facts,
                                      const ReportedFailure& failure) {
  const std::optional<int> status = failure.status;
  if (!facts.status || !status) return std::nullopt;
  if (*status == *facts.status) return "";
  return fmt::format("failure status {}, expected {}", *status, *facts.status);
}

std::optional<std::string> HintFact(const scenario::ExpectFailure& facts,
                                    const ReportedFailure& failure) {
  const std::optional<double> hint = failure.retry_after_ms;
  if ((!facts.no_retry_after && !facts.retry_after) || !hint) return std::nullopt;
  if (facts.no_retry_after) {
    return fmt::format("failure carries retry_after_ms {}, expected no hint", ShownMs(*hint));
  }
  const double wanted = Ms(*facts.retry_after);
  if (std::abs(*hint - wanted) <= 1) return "";
  return fmt::format("failure retry_after_ms {}, expected {:.0f}", ShownMs(*hint), wanted);
}

std::optional<std::string> RequestIdFact(const scenario::ExpectFailure& facts,
                                         const ReportedFailure& failure) {
  if (!facts.request_id || !failure.request_id) return std::nullopt;
  if (failure.request_id->empty() != *facts.request_id) return "";
  return *facts.request_id ? "failure carries an empty request_id" : "failure carries a request_id";
}

FactVerdict CompareFacts(const scenario::ExpectFailure& facts, const ReportedFailure& failure) {
  FactVerdict out;
  for (const std::optional<std::string>& fact :
       {StatusFact(facts, failure), HintFact(facts, failure), RequestIdFact(facts, failure)}) {
    if (!fact) continue;
    out.judged = true;
    if (fact->empty()) continue;
    out.mismatch = *fact;
    return out;
  }
  return out;
}

// What the stated facts make of call `i`'s ending: the mismatch, or "" when they hold or do not
// apply to it. `judged` is set when some fact had its field reported.
std::string CallFactsMismatch(const View& view, std::size_t i, bool literal, bool* judged) {
  const scenario::Expect& expect = view.scenario.expect;
  const ClientRecord* terminal = view.calls[i].terminal;
  if (terminal == nullptr) return "no terminal event";
  if (terminal->event.kind != EventKind::kFailed) {
    // Without a twin the ending is part of the facts; with one, EXPECT-OUTCOME judges it.
    if (!literal) return {};
    return fmt::format("ended with {}, not a failure", terminal->event.kind);
  }
  if (!literal && expect.failure_code &&
      !CodeMatches(FailureOf(terminal->event), *expect.failure_code, std::nullopt)) {
    return {};  // facts of another ending's failure
  }
  if (!terminal->event.failure) return "the failure has no fields";
  const FactVerdict facts = CompareFacts(*expect.failure, *terminal->event.failure);
  *judged = *judged || facts.judged;
  return facts.mismatch;
}

Verdict FailureFacts(const View& view, bool literal) {
  if (auto unknown = UnlessOutcomeKnown(view)) return *unknown;
  if (auto unreported = UnlessFailureReported(view)) return *unreported;
  bool judged = false;
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const std::string mismatch = CallFactsMismatch(view, i, literal, &judged);
    if (!mismatch.empty()) {
      return Fail(view.calls.size() > 1 ? fmt::format("call {}: {}", i, mismatch) : mismatch);
    }
  }
  if (!judged) {
    return NotApplicable(
        "the subject reports none of the stated facts' fields (status, retry_after_ms and "
        "request_id are optional)");
  }
  return Pass();
}

Verdict AttemptFailures(const View& view, bool literal) {
  const auto& wanted = view.scenario.expect.attempt_failures;
  return EachCall(view, [&](const CallView& call) -> std::string {
    const std::vector<const ReportedFailure*> got = ReportedFailures(call);
    if (literal && got.size() != wanted.size()) {
      return fmt::format("{} failed attempt(s) reported, expected {}", got.size(), wanted.size());
    }
    for (std::size_t i = 0; i < std::min(got.size(), wanted.size()); ++i) {
      const std::string& failure_class = got[i]->failure_class;
      const std::string& code = got[i]->code;
      const auto& expected = wanted[i];
      if ((expected.failure_class && failure_class != *expected.failure_class) ||
          (expected.failure_code &&
           !CodeMatches(*got[i], *expected.failure_code, TruthRetryable(view, i)))) {
        return fmt::format("failed attempt {} was {} {}, expected {} {}", i + 1, failure_class,
                           code, expected.failure_class.value_or("(any class)"),
                           expected.failure_code.value_or("(any code)"));
      }
    }
    return {};
  });
}

Verdict RetryDelays(const View& view) {
  const auto& bounds = view.scenario.expect.retry_delays;
  if (!view.single_call()) {
    return NotApplicable("several concurrent calls share the provider's journal");
  }
  const auto& requests = view.attempts;
  if (requests.size() < bounds.size() + 1) {
    return Fail(fmt::format("{} request(s) reached the provider; {} retries were expected",
                            requests.size(), bounds.size()));
  }
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    const double delay = ArrivedMs(*requests[i + 1]) - EndedMs(*requests[i]);
    const double low = Ms(bounds[i].min) - view.tolerance.early_ms;
    const double high = Ms(bounds[i].max) + view.tolerance.late_ms;
    if (delay < low || delay > high) {
      return Fail(
          fmt::format("retry {} came {:.1f} ms after attempt {} ended, expected "
                      "{:.0f}..{:.0f} ms",
                      i + 1, delay, i + 1, Ms(bounds[i].min), Ms(bounds[i].max)));
    }
  }
  return Pass();
}

Verdict Chunks(const View& view, bool literal) {
  const int wanted = *view.scenario.expect.chunks;
  if (view.black_box) return NotApplicable("the subject reports no chunks (black-box)");
  return EachCall(view, [&](const CallView& call) -> std::string {
    const auto seen = static_cast<int>(std::ranges::count_if(
        call.records, [](const auto* record) { return record->event.kind == EventKind::kChunk; }));
    if (literal ? seen == wanted : (seen == 0) == (wanted == 0)) return {};
    return literal ? fmt::format("{} chunk(s), expected {}", seen, wanted)
                   : fmt::format("{} chunk(s), expected {}", seen, wanted == 0 ? "none" : "some");
  });
}

Verdict Requests(const View& view, const PolicyTwin* twin) {
  const int made = static_cast<int>(view.attempts.size());
  if (twin == nullptr) {
    if (made == *view.scenario.expect.requests) return Pass();
    return Fail(fmt::format("{} request(s) reached the provider, expected {}", made,
                            *view.scenario.expect.requests));
  }
  if (const std::string why = BeyondTheTwinsBound(view); !why.empty()) return NotApplicable(why);
  const bool exact = view.tolerance.late_ms <= VirtualTolerance().late_ms;
  for (const TwinOutcome& outcome : twin->outcomes) {
    if (outcome.requests == made) return Pass();
    if (!exact && outcome.give_up == "deadline" && std::abs(outcome.requests - made) <= 1) {
      return Pass();
    }
  }
  return Fail(fmt::format("{} request(s) reached the provider; the declared policy allows {}", made,
                          DescribeOutcomes(*twin)));
}

std::optional<std::string> HeaderValue(const provider::JournalEntry& entry, std::string_view name) {
  for (const scenario::Header& header : entry.headers) {
    if (std::ranges::equal(header.name, name, [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return header.value;
    }
  }
  return std::nullopt;
}

Verdict RequestHeaders(const View& view) {
  const scenario::Expect& expect = view.scenario.expect;
  if (view.attempts.empty()) return NotApplicable("no request reached the provider");
  for (const provider::JournalEntry* entry : view.attempts) {
    for (const std::string& name : expect.headers_present) {
      if (!HeaderValue(*entry, name)) {
        return Fail(fmt::format("request {} (at {:.1f} ms) has no {} header", entry->attempt,
                                ArrivedMs(*entry), name));
      }
    }
  }
  for (const std::string& name : expect.headers_same) {
    const std::optional<std::string> first = HeaderValue(*view.attempts.front(), name);
    for (const provider::JournalEntry* entry : view.attempts) {
      if (HeaderValue(*entry, name) != first) {
        return Fail(fmt::format(
            "{} is {} on request 1 but {} on request {}", name, Quote(first.value_or("(absent)")),
            Quote(HeaderValue(*entry, name).value_or("(absent)")), entry->attempt));
      }
    }
  }
  return Pass();
}

}  // namespace

bool CodeMatches(const ReportedFailure& got, std::string_view wanted_code,
                 std::optional<bool> wanted_retryable) {
  if (got.code == wanted_code) return true;
  const auto code = ref::ParseFailureCode(got.code);
  const auto wanted = ref::ParseFailureCode(wanted_code);
  return code && wanted && wanted_retryable && ref::ClassOf(*code) == ref::ClassOf(*wanted) &&
         got.retryable == *wanted_retryable;
}

std::optional<bool> TruthRetryable(const View& view, std::size_t k) {
  if (!view.single_call() || view.refusals() || k >= view.attempts.size()) return std::nullopt;
  const std::optional<ref::Failure> failure = TruthFailure(view, *view.attempts[k]);
  if (!failure) return std::nullopt;
  return failure->retryable;
}

std::vector<CheckResult> ExpectFactChecks(const View& view, const PolicyTwin* twin) {
  const scenario::Expect& expect = view.scenario.expect;
  // A partial declaration has no twin (expect.cc): only the facts that hold whatever the policy.
  const bool partial = view.has_policy() && view.declared.partial;
  const bool literal = twin == nullptr && !partial;
  std::vector<CheckResult> out;
  if (expect.failure) {
    out.push_back(Named("EXPECT-FAILURE", "The call's final failure carries the stated facts.",
                        FailureFacts(view, literal)));
  }
  if (!expect.attempt_failures.empty()) {
    out.push_back(Named("EXPECT-ATTEMPT-FAILURES",
                        "Each failed attempt has the stated class and code.",
                        view.black_box ? NotApplicable("the subject reports no attempts")
                                       : AttemptFailures(view, literal)));
  }
  if (!expect.retry_delays.empty()) {
    out.push_back(Named("EXPECT-RETRY-DELAYS", "Each retry waits within its stated bounds.",
                        literal ? RetryDelays(view)
                                : NotApplicable("the delays belong to the scenario's policy; "
                                                "RETRY-003/004 judge the declared one")));
  }
  if (expect.chunks) {
    out.push_back(
        Named("EXPECT-CHUNKS", "The subject emits the stated number of chunks.",
              partial ? NotApplicable(TwinNeedsWholePolicy(view)) : Chunks(view, literal)));
  }
  if (expect.requests) {
    out.push_back(
        Named("EXPECT-REQUESTS", "The stated number of requests reaches the provider.",
              partial ? NotApplicable(TwinNeedsWholePolicy(view)) : Requests(view, twin)));
  }
  if (!expect.headers_present.empty() || !expect.headers_same.empty()) {
    out.push_back(Named("EXPECT-REQUEST-HEADERS",
                        "Every request carries the stated headers, unchanged across attempts.",
                        RequestHeaders(view)));
  }
  return out;
}

}  // namespace faultline::harness::judge_internal
