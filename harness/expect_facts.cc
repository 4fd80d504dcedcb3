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

#include "harness/judge_internal.h"

namespace faultline::harness::judge_internal {
namespace {

// The failures a call reported, in order: every response/interrupted, then a response/failed.
std::vector<const nlohmann::json*> ReportedFailures(const CallView& call) {
  std::vector<const nlohmann::json*> out;
  for (const ClientRecord* record : call.records) {
    const std::string type = EventType(*record);
    if (type != protocol::kInterrupted && type != protocol::kFailed) continue;
    if (const auto failure = record->event.find("failure"); failure != record->event.end()) {
      out.push_back(&*failure);
    }
    if (type == protocol::kFailed) break;
  }
  return out;
}

std::string MismatchedFact(const scenario::ExpectFailure& facts, const nlohmann::json& failure) {
  const std::optional<int> status = Int(failure, "status");
  if (facts.status && status != facts.status) {
    return fmt::format("failure status {}, expected {}", status ? std::to_string(*status) : "none",
                       *facts.status);
  }
  const auto hint = failure.find("retry_after_ms");
  const bool has_hint = hint != failure.end() && hint->is_number();
  if (facts.no_retry_after && has_hint) {
    return fmt::format("failure carries retry_after_ms {}, expected no hint", hint->dump());
  }
  if (facts.retry_after) {
    const double wanted = Ms(*facts.retry_after);
    if (!has_hint || std::abs(hint->get<double>() - wanted) > 1) {
      return fmt::format("failure retry_after_ms {}, expected {:.0f}",
                         has_hint ? hint->dump() : "none", wanted);
    }
  }
  if (facts.request_id && Str(failure, "request_id").empty() == *facts.request_id) {
    return *facts.request_id ? "failure carries no request_id" : "failure carries a request_id";
  }
  return {};
}

CheckResult FailureFacts(const View& view, bool literal) {
  const scenario::Expect& expect = view.scenario.expect;
  return EachCall(view, [&](const CallView& call) -> std::string {
    if (call.terminal == nullptr) return "no terminal event";
    const nlohmann::json& event = call.terminal->event;
    if (EventType(*call.terminal) != protocol::kFailed) {
      return literal ? fmt::format("ended with {}, not a failure", EventType(*call.terminal))
                     : std::string();  // EXPECT-OUTCOME judges the ending
    }
    const std::string code = FailureField(event, "code");
    if (!literal && expect.failure_code && code != *expect.failure_code) return {};
    const auto failure = event.find("failure");
    if (failure == event.end() || !failure->is_object()) return "the failure has no fields";
    return MismatchedFact(*expect.failure, *failure);
  });
}

CheckResult AttemptFailures(const View& view, bool literal) {
  const auto& wanted = view.scenario.expect.attempt_failures;
  return EachCall(view, [&](const CallView& call) -> std::string {
    const std::vector<const nlohmann::json*> got = ReportedFailures(call);
    if (literal && got.size() != wanted.size()) {
      return fmt::format("{} failed attempt(s) reported, expected {}", got.size(), wanted.size());
    }
    for (std::size_t i = 0; i < std::min(got.size(), wanted.size()); ++i) {
      const std::string failure_class = Str(*got[i], "class");
      const std::string code = Str(*got[i], "code");
      const auto& expected = wanted[i];
      if ((expected.failure_class && failure_class != *expected.failure_class) ||
          (expected.failure_code && code != *expected.failure_code)) {
        return fmt::format("failed attempt {} was {} {}, expected {} {}", i + 1, failure_class,
                           code, expected.failure_class.value_or("(any class)"),
                           expected.failure_code.value_or("(any code)"));
      }
    }
    return {};
  });
}

CheckResult RetryDelays(const View& view) {
  const auto& bounds = view.scenario.expect.retry_delays;
  if (!view.single_call()) {
    return NotApplicable("", "several concurrent calls share the provider's journal");
  }
  const auto& requests = view.attempts;
  if (requests.size() < bounds.size() + 1) {
    return Fail("", fmt::format("{} request(s) reached the provider; {} retries were expected",
                                requests.size(), bounds.size()));
  }
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    const double delay = ArrivedMs(*requests[i + 1]) - EndedMs(*requests[i]);
    const double low = Ms(bounds[i].min) - view.tolerance.early_ms;
    const double high = Ms(bounds[i].max) + view.tolerance.late_ms;
    if (delay < low || delay > high) {
      return Fail("", fmt::format("retry {} came {:.1f} ms after attempt {} ended, expected "
                                  "{:.0f}..{:.0f} ms",
                                  i + 1, delay, i + 1, Ms(bounds[i].min), Ms(bounds[i].max)));
    }
  }
  return Pass("");
}

CheckResult Chunks(const View& view, bool literal) {
  const int wanted = *view.scenario.expect.chunks;
  if (view.black_box) return NotApplicable("", "the subject reports no chunks (black-box)");
  return EachCall(view, [&](const CallView& call) -> std::string {
    const auto seen = static_cast<int>(std::ranges::count_if(
        call.records, [](const auto* record) { return EventType(*record) == protocol::kChunk; }));
    if (literal ? seen == wanted : (seen == 0) == (wanted == 0)) return {};
    return literal ? fmt::format("{} chunk(s), expected {}", seen, wanted)
                   : fmt::format("{} chunk(s), expected {}", seen, wanted == 0 ? "none" : "some");
  });
}

CheckResult Requests(const View& view, const PolicyTwin* twin) {
  const int made = static_cast<int>(view.attempts.size());
  if (twin == nullptr) {
    if (made == *view.scenario.expect.requests) return Pass("");
    return Fail("", fmt::format("{} request(s) reached the provider, expected {}", made,
                                *view.scenario.expect.requests));
  }
  const bool exact = view.tolerance.late_ms <= VirtualTolerance().late_ms;
  for (const TwinOutcome& outcome : twin->outcomes) {
    if (outcome.requests == made) return Pass("");
    if (!exact && outcome.give_up == "deadline" && std::abs(outcome.requests - made) <= 1) {
      return Pass("");
    }
  }
  return Fail("", fmt::format("{} request(s) reached the provider; the declared policy allows {}",
                              made, DescribeOutcomes(*twin)));
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

CheckResult RequestHeaders(const View& view) {
  const scenario::Expect& expect = view.scenario.expect;
  if (view.attempts.empty()) return NotApplicable("", "no request reached the provider");
  for (const provider::JournalEntry* entry : view.attempts) {
    for (const std::string& name : expect.headers_present) {
      if (!HeaderValue(*entry, name)) {
        return Fail("", fmt::format("request {} (at {:.1f} ms) has no {} header", entry->attempt,
                                    ArrivedMs(*entry), name));
      }
    }
  }
  for (const std::string& name : expect.headers_same) {
    const std::optional<std::string> first = HeaderValue(*view.attempts.front(), name);
    for (const provider::JournalEntry* entry : view.attempts) {
      if (HeaderValue(*entry, name) != first) {
        return Fail(
            "", fmt::format("{} is {} on request 1 but {} on request {}", name,
                            Quote(first.value_or("(absent)")),
                            Quote(HeaderValue(*entry, name).value_or("(absent)")), entry->attempt));
      }
    }
  }
  return Pass("");
}

}  // namespace

std::vector<CheckResult> ExpectFactChecks(const View& view, const PolicyTwin* twin) {
  const scenario::Expect& expect = view.scenario.expect;
  const bool literal = twin == nullptr;
  std::vector<CheckResult> out;
  if (expect.failure) {
    out.push_back(Named("EXPECT-FAILURE", "The call's final failure carries the stated facts.",
                        FailureFacts(view, literal)));
  }
  if (!expect.attempt_failures.empty()) {
    out.push_back(Named("EXPECT-ATTEMPT-FAILURES",
                        "Each failed attempt has the stated class and code.",
                        view.black_box ? NotApplicable("", "the subject reports no attempts")
                                       : AttemptFailures(view, literal)));
  }
  if (!expect.retry_delays.empty()) {
    out.push_back(Named("EXPECT-RETRY-DELAYS", "Each retry waits within its stated bounds.",
                        literal ? RetryDelays(view)
                                : NotApplicable("",
                                                "the delays belong to the scenario's policy; "
                                                "RETRY-003/004 judge the declared one")));
  }
  if (expect.chunks) {
    out.push_back(Named("EXPECT-CHUNKS", "The subject emits the stated number of chunks.",
                        Chunks(view, literal)));
  }
  if (expect.requests) {
    out.push_back(Named("EXPECT-REQUESTS", "The stated number of requests reaches the provider.",
                        Requests(view, twin)));
  }
  if (!expect.headers_present.empty() || !expect.headers_same.empty()) {
    out.push_back(Named("EXPECT-REQUEST-HEADERS",
                        "Every request carries the stated headers, unchanged across attempts.",
                        RequestHeaders(view)));
  }
  return out;
}

}  // namespace faultline::harness::judge_internal
