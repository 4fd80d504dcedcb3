// EXPECT-*: the scenario's own `expect:` block, checked for every call.
//
// An `expect:` block states what the reference client does with the scenario's policy. A subject
// that declares a policy of its own is held to what THAT policy allows, computed by its policy
// twin (policy_twin.h): the same fields, each compared with the twin's outcomes. Without a usable
// declaration (or twin) the block is judged literally. A partial declaration (declared_policy.h)
// gets no twin, which runs a whole policy: what only the twin can judge (the ending, attempts,
// text, class and code, chunks, requests) is n/a naming the keys it leaves out, and the facts
// that hold whatever the policy are judged as for any declared policy (expect_facts.cc).
#include <algorithm>

#include "harness/judge/judge_internal.h"

namespace faultline::harness::judge_internal {
namespace {

// The failure's class or code (`field` "class" or "code"), "" without a failure.
std::string FailureNamed(const ClientEvent& event, std::string_view field) {
  const ReportedFailure& failure = FailureOf(event);
  return field == "class" ? failure.failure_class : failure.code;
}

// Applies `check` to every call's terminal event; the first mismatch fails.
template <typename Check>
Verdict EveryCall(const View& view, Check check) {
  if (auto unknown = UnlessOutcomeKnown(view)) return *unknown;
  return EachCall(view, [&](const CallView& call) -> std::string {
    if (call.terminal == nullptr) return "no terminal event";
    return check(*call.terminal);
  });
}

// The subject's own count when it reports one (refused connections never reach the journal);
// else the requests the provider saw.
int AttemptsMade(const View& view, const ClientRecord& terminal) {
  const int made = terminal.event.attempt.value_or(0);
  return made > 0 ? made : static_cast<int>(view.attempts.size());
}

// EXPECT-OUTCOME as written: the call ends the way the scenario's reference client ends it.
CheckResult LiteralOutcome(const View& view, const std::string& outcome) {
  const std::string wanted = "response/" + outcome;
  return Named("EXPECT-OUTCOME", fmt::format("The call ends {}.", outcome),
               EveryCall(view, [&](const ClientRecord& terminal) -> std::string {
                 if (ToString(terminal.event.kind) == wanted) return {};
                 return fmt::format("ended with {} {} at {:.1f} ms", terminal.event.kind,
                                    FailureOf(terminal.event).code, Ms(terminal.at));
               }));
}

CheckResult LiteralAttempts(const View& view, int wanted) {
  std::string statement = fmt::format("The call makes {} attempt(s).", wanted);
  if (auto unknown = UnlessAttemptsCountable(view)) {
    return Named("EXPECT-ATTEMPTS", statement, *unknown);
  }
  return Named("EXPECT-ATTEMPTS", std::move(statement),
               EveryCall(view, [&](const ClientRecord& terminal) -> std::string {
                 const int made = AttemptsMade(view, terminal);
                 if (made == wanted) return {};
                 return fmt::format("made {} attempt(s); {} request(s) reached the provider", made,
                                    view.attempts.size());
               }));
}

CheckResult LiteralText(const View& view, const std::string& wanted) {
  std::string statement = fmt::format("The committed text is {}.", Quote(wanted));
  if (auto unreported = UnlessTextReported(view))
    return Named("EXPECT-TEXT", statement, *unreported);
  return Named("EXPECT-TEXT", std::move(statement),
               EveryCall(view, [&](const ClientRecord& terminal) -> std::string {
                 const std::string text = terminal.event.text.value_or("");
                 if (terminal.event.kind == EventKind::kCommitted && text == wanted) return {};
                 return fmt::format("{} with text {}", terminal.event.kind, Quote(text));
               }));
}

// EXPECT-CLASS or EXPECT-CODE as written (`field` "class" or "code"): the call fails so.
Verdict LiteralFailure(const View& view, const char* field, const std::string& wanted) {
  if (auto unreported = UnlessFailureReported(view)) return *unreported;
  // The call's last request tells what retryability a correct client gives its failure.
  const std::optional<bool> last_retryable =
      view.attempts.empty() ? std::nullopt : TruthRetryable(view, view.attempts.size() - 1);
  return EveryCall(view, [&](const ClientRecord& terminal) -> std::string {
    const std::string got = FailureNamed(terminal.event, field);
    const bool failed = terminal.event.kind == EventKind::kFailed;
    if (failed && got == wanted) return {};
    if (failed && std::string_view(field) == "code" &&
        CodeMatches(FailureOf(terminal.event), wanted, last_retryable)) {
      return {};
    }
    return fmt::format("{} with failure {} {}", terminal.event.kind, field,
                       got.empty() ? "(none)" : Quote(got));
  });
}

std::vector<CheckResult> Literal(const View& view) {
  const scenario::Expect& expect = view.scenario.expect;
  std::vector<CheckResult> out;
  if (expect.outcome) out.push_back(LiteralOutcome(view, *expect.outcome));
  if (expect.attempts) out.push_back(LiteralAttempts(view, *expect.attempts));
  if (expect.text) out.push_back(LiteralText(view, *expect.text));
  if (expect.failure_class) {
    out.push_back(Named("EXPECT-CLASS",
                        fmt::format("The call fails with class {}.", *expect.failure_class),
                        LiteralFailure(view, "class", *expect.failure_class)));
  }
  if (expect.failure_code) {
    out.push_back(Named("EXPECT-CODE",
                        fmt::format("The call fails with code {}.", *expect.failure_code),
                        LiteralFailure(view, "code", *expect.failure_code)));
  }
  return out;
}

// Whether `made` attempts fit `outcome`: exactly, or one off when the twin's outcome was decided
// by its deadline (real sockets shift every attempt a little later).
bool AttemptsFit(const TwinOutcome& outcome, int made, bool exact) {
  if (outcome.attempts == made) return true;
  return !exact && outcome.give_up == "deadline" && std::abs(outcome.attempts - made) <= 1;
}

// Over real sockets a silence within the tolerance of a timeout may end either way on EACH
// attempt, while each twin variant decides all attempts alike: a subject may then end as one
// variant does after as many attempts as another made (timed out twice, then committed). So
// any count from the fewest of the same ending to the most of any ending fits, when the twin's
// endings show such a timeout at all.
bool WithinTwinRange(const PolicyTwin& twin, const std::vector<const TwinOutcome*>& same_type,
                     int made) {
  const bool timeout_decides = std::ranges::any_of(
      twin.outcomes, [](const TwinOutcome& outcome) { return outcome.failure_class == "timeout"; });
  if (same_type.empty() || !timeout_decides) return false;
  const int fewest = std::ranges::min(same_type, {}, &TwinOutcome::attempts)->attempts;
  const int most = std::ranges::max(twin.outcomes, {}, &TwinOutcome::attempts).attempts;
  return made >= fewest && made <= most;
}

// The statements of the expectations a declared policy's twin judges.
constexpr const char* kOutcomeAllowed = "The call ends as its declared policy allows.";
constexpr const char* kAttemptsAllowed =
    "The call makes as many attempts as its declared policy allows.";
constexpr const char* kTextAllowed = "A committed text is one the declared policy can commit.";
constexpr const char* kClassAllowed = "A failure has a class the declared policy can end with.";
constexpr const char* kCodeAllowed = "A failure has a code the declared policy can end with.";

// What every check against a declared policy's twin shares.
struct TwinJudge {
  TwinJudge(const View& view, const PolicyTwin& twin)
      : view(view),
        twin(twin),
        exact(view.tolerance.late_ms <= VirtualTolerance().late_ms),
        allowed(DescribeOutcomes(twin)),
        suffix(fmt::format(" (what the declared policy allows, from its twin over "
                           "{} seeds: {})",
                           twin.seeds, allowed)) {}

  // The twin's outcomes that end as the subject's call did.
  std::vector<const TwinOutcome*> SameType(const ClientRecord& terminal) const {
    std::vector<const TwinOutcome*> out;
    for (const TwinOutcome& outcome : twin.outcomes) {
      if (outcome.type == terminal.event.kind) out.push_back(&outcome);
    }
    return out;
  }

  const View& view;
  const PolicyTwin& twin;
  const bool exact;  // virtual time: attempts match the twin's exactly
  const std::string allowed;
  const std::string suffix;  // closes the evidence: what the twin allows
};

Verdict TwinOutcomeFits(const TwinJudge& judge) {
  return EveryCall(judge.view, [&](const ClientRecord& terminal) -> std::string {
    if (!judge.SameType(terminal).empty()) return {};
    return fmt::format("ended with {} {} at {:.1f} ms; the declared policy allows {}",
                       terminal.event.kind, FailureOf(terminal.event).code, Ms(terminal.at),
                       judge.allowed);
  });
}

Verdict TwinAttemptsFit(const TwinJudge& judge) {
  const View& view = judge.view;
  if (auto unknown = UnlessAttemptsCountable(view)) return *unknown;
  return EveryCall(view, [&](const ClientRecord& terminal) -> std::string {
    const int made = AttemptsMade(view, terminal);
    auto candidates = judge.SameType(terminal);
    if (candidates.empty()) return {};  // EXPECT-OUTCOME reports it
    if (std::ranges::any_of(candidates, [&](const TwinOutcome* outcome) {
          return AttemptsFit(*outcome, made, judge.exact);
        })) {
      return {};
    }
    if (!judge.exact && WithinTwinRange(judge.twin, candidates, made)) return {};
    return fmt::format("made {} attempt(s) ({} request(s) reached the provider) and {}{}", made,
                       view.attempts.size(), terminal.event.kind, judge.suffix);
  });
}

// The distinct texts of `outcomes`, quoted and joined by " or "; "" when none.
std::string QuotedTexts(const std::vector<const TwinOutcome*>& outcomes) {
  std::vector<std::string> texts;
  for (const TwinOutcome* outcome : outcomes) {
    if (std::ranges::find(texts, outcome->text) == texts.end()) texts.push_back(outcome->text);
  }
  std::string quoted;
  for (const std::string& text : texts) quoted += (quoted.empty() ? "" : " or ") + Quote(text);
  return quoted;
}

Verdict TwinTextFits(const TwinJudge& judge) {
  if (auto unreported = UnlessTextReported(judge.view)) return *unreported;
  return EveryCall(judge.view, [&](const ClientRecord& terminal) -> std::string {
    if (terminal.event.kind != EventKind::kCommitted) return {};
    const std::string text = terminal.event.text.value_or("");
    const std::vector<const TwinOutcome*> same_type = judge.SameType(terminal);
    if (std::ranges::any_of(same_type,
                            [&](const TwinOutcome* outcome) { return outcome->text == text; })) {
      return {};
    }
    const std::string wanted = QuotedTexts(same_type);
    return fmt::format("committed {}; the declared policy commits {}{}", Quote(text),
                       wanted.empty() ? "nothing" : wanted, judge.suffix);
  });
}

// EXPECT-CLASS or EXPECT-CODE (`field` "class" or "code", `member` the twin's matching field).
Verdict TwinFailureFits(const TwinJudge& judge, const char* field,
                        std::string TwinOutcome::*member) {
  if (auto unreported = UnlessFailureReported(judge.view)) return *unreported;
  return EveryCall(judge.view, [&](const ClientRecord& terminal) -> std::string {
    if (terminal.event.kind != EventKind::kFailed) return {};
    const std::string got = FailureNamed(terminal.event, field);
    for (const TwinOutcome* outcome : judge.SameType(terminal)) {
      if (outcome->*member == got) return {};
      // A code of the same class and retryability as the twin's behaves as the twin's does.
      if (member == &TwinOutcome::failure_code &&
          CodeMatches(FailureOf(terminal.event), outcome->failure_code, outcome->retryable)) {
        return {};
      }
    }
    return fmt::format("failed with {} {}{}", field, got.empty() ? "(none)" : Quote(got),
                       judge.suffix);
  });
}

std::vector<CheckResult> PolicyRelative(const View& view, const PolicyTwin& twin) {
  const scenario::Expect& expect = view.scenario.expect;
  const TwinJudge judge(view, twin);
  std::vector<CheckResult> out;
  if (expect.outcome)
    out.push_back(Named("EXPECT-OUTCOME", kOutcomeAllowed, TwinOutcomeFits(judge)));
  if (expect.attempts) {
    out.push_back(Named("EXPECT-ATTEMPTS", kAttemptsAllowed, TwinAttemptsFit(judge)));
  }
  if (expect.text) out.push_back(Named("EXPECT-TEXT", kTextAllowed, TwinTextFits(judge)));
  if (expect.failure_class) {
    out.push_back(Named("EXPECT-CLASS", kClassAllowed,
                        TwinFailureFits(judge, "class", &TwinOutcome::failure_class)));
  }
  if (expect.failure_code) {
    out.push_back(Named("EXPECT-CODE", kCodeAllowed,
                        TwinFailureFits(judge, "code", &TwinOutcome::failure_code)));
  }
  // Stopped by the runner before its policy would end the call: no ending to compare.
  const bool none_ended =
      std::ranges::none_of(view.calls, [](const CallView& call) { return call.terminal; });
  if (const std::string why = StoppedBeforeThePolicyEnds(view); !why.empty() && none_ended) {
    for (CheckResult& check : out) check = Named(check.id, check.statement, NotApplicable(why));
  }
  if (const std::string why = BeyondTheTwinsBound(view); !why.empty()) {
    for (CheckResult& check : out) check = Named(check.id, check.statement, NotApplicable(why));
  }
  return out;
}

// A partial declaration: the twin's expectations n/a, the facts judged as for any policy.
std::vector<CheckResult> WithoutTwin(const View& view) {
  const scenario::Expect& expect = view.scenario.expect;
  std::vector<CheckResult> out;
  const auto unjudged = [&](const char* id, const char* statement) {
    out.push_back(Named(id, statement, NotApplicable(TwinNeedsWholePolicy(view))));
  };
  if (expect.outcome) unjudged("EXPECT-OUTCOME", kOutcomeAllowed);
  if (expect.attempts) unjudged("EXPECT-ATTEMPTS", kAttemptsAllowed);
  if (expect.text) unjudged("EXPECT-TEXT", kTextAllowed);
  if (expect.failure_class) unjudged("EXPECT-CLASS", kClassAllowed);
  if (expect.failure_code) unjudged("EXPECT-CODE", kCodeAllowed);
  for (CheckResult& check : ExpectFactChecks(view, nullptr)) out.push_back(std::move(check));
  return out;
}

}  // namespace

namespace {

// A scenario that sets a total deadline (the call line's `limits`) is written for a client that
// applies it: what a client with another deadline does there says nothing of its handling of
// this one. Why the subject is not judged on the scenario's expectations, else "".
std::string DeadlineNotApplied(const View& view) {
  const std::optional<nlohmann::json> limits = protocol::CallLimits(view.scenario);
  if (!limits || !limits->contains("timeouts") || !(*limits)["timeouts"].contains("total_ms")) {
    return {};
  }
  const nlohmann::json& wanted = (*limits)["timeouts"]["total_ms"];
  if (!view.has_policy()) return {};  // judged literally, or n/a, as for any scenario
  const bool stated = view.declared.States("timeouts.total_ms");  // a partial one may not
  const std::optional<double> declared = stated ? view.declared.total_ms() : std::nullopt;
  if (declared && wanted.is_number() && *declared == wanted.get<double>()) return {};
  return fmt::format(
      "the scenario is written for a client that applies the call's total deadline of {} ms "
      "(the call line's limits.timeouts.total_ms), and the subject declares {}",
      wanted.dump(),
      declared ? fmt::format("{:.0f} ms", *declared)
      : stated ? std::string("none")
               : std::string("no timeouts.total_ms"));
}

// Scripted time (listener outages, route health) starts at the subject's first attempt; when the
// runner could not see it (no response/start, nothing arrived), it started on a fallback timer
// and the windows the expectations assume may not be the ones the subject met.
std::string ScriptedTimeUnanchored(const View& view) {
  if (!view.trace.scripted_by_fallback) return {};
  return "the subject reported no attempt and none reached the provider, so the scenario's "
         "scripted time (outages, route health) could not start at its first attempt; it "
         "started on the runner's fallback, after the subject's hello";
}

}  // namespace

std::vector<CheckResult> ExpectChecks(const View& view) {
  std::string why = DeadlineNotApplied(view);
  if (why.empty()) why = ScriptedTimeUnanchored(view);
  if (!why.empty()) {
    std::vector<CheckResult> out = Literal(view);
    for (CheckResult& check : ExpectFactChecks(view, nullptr)) out.push_back(std::move(check));
    for (CheckResult& check : out) check = Named(check.id, check.statement, NotApplicable(why));
    return out;
  }
  if (view.has_policy() && view.declared.partial) return WithoutTwin(view);
  // `expect:` is written for the scenario's policy (or the reference defaults): a subject declaring
  // exactly that gets no twin (Runner) and is held to it as written.
  if (view.twin != nullptr && view.twin->usable() && view.has_policy()) {
    std::vector<CheckResult> out = PolicyRelative(view, *view.twin);
    for (CheckResult& check : ExpectFactChecks(view, view.twin)) out.push_back(std::move(check));
    return out;
  }
  std::vector<CheckResult> out = Literal(view);
  for (CheckResult& check : ExpectFactChecks(view, nullptr)) out.push_back(std::move(check));
  return out;
}

}  // namespace faultline::harness::judge_internal
