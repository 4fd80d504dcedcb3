// EXPECT-*: the scenario's own `expect:` block, checked for every call.
#include "harness/judge_internal.h"

namespace faultline::harness::judge_internal {
namespace {

CheckResult Named(std::string id, std::string statement, CheckResult result) {
  result.id = std::move(id);
  result.statement = std::move(statement);
  return result;
}

// Applies `check` to every call's terminal event; the first mismatch fails.
template <typename Check>
CheckResult EveryCall(const View& view, Check check) {
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const ClientRecord* terminal = view.calls[i].terminal;
    if (terminal == nullptr) return Fail("", fmt::format("call {} has no terminal event", i));
    if (std::string evidence = check(*terminal); !evidence.empty()) {
      return Fail("", view.calls.size() > 1 ? fmt::format("call {}: {}", i, evidence) : evidence);
    }
  }
  return Pass("");
}

}  // namespace

std::vector<CheckResult> ExpectChecks(const View& view) {
  const scenario::Expect& expect = view.scenario.expect;
  std::vector<CheckResult> out;
  if (expect.outcome) {
    const std::string wanted = "response/" + *expect.outcome;
    out.push_back(Named("EXPECT-OUTCOME", fmt::format("The call ends {}.", *expect.outcome),
                        EveryCall(view, [&](const ClientRecord& terminal) -> std::string {
                          if (EventType(terminal) == wanted) return {};
                          return fmt::format("ended with {} {} at {:.1f} ms", EventType(terminal),
                                             FailureField(terminal.event, "code"), Ms(terminal.at));
                        })));
  }
  if (expect.attempts) {
    const int wanted = *expect.attempts;
    out.push_back(Named("EXPECT-ATTEMPTS", fmt::format("The call makes {} attempt(s).", wanted),
                        EveryCall(view, [&](const ClientRecord& terminal) -> std::string {
                          // The subject's own count when it reports one (refused connections never
                          // reach the journal); else the requests the provider saw.
                          int made = Int(terminal.event, "attempt").value_or(0);
                          if (made <= 0) made = static_cast<int>(view.attempts.size());
                          if (made == wanted) return {};
                          return fmt::format(
                              "made {} attempt(s); {} request(s) reached the provider", made,
                              view.attempts.size());
                        })));
  }
  if (expect.text) {
    out.push_back(Named("EXPECT-TEXT",
                        fmt::format("The committed text is {}.", Quote(*expect.text)),
                        EveryCall(view, [&](const ClientRecord& terminal) -> std::string {
                          const std::string text = Str(terminal.event, "text");
                          if (EventType(terminal) == "response/committed" && text == *expect.text) {
                            return {};
                          }
                          return fmt::format("{} with text {}", EventType(terminal), Quote(text));
                        })));
  }
  const auto failure_check = [&](const char* field, const std::string& wanted) {
    return EveryCall(view, [&, field](const ClientRecord& terminal) -> std::string {
      const std::string got = FailureField(terminal.event, field);
      if (EventType(terminal) == "response/failed" && got == wanted) return {};
      return fmt::format("{} with failure {} {}", EventType(terminal), field,
                         got.empty() ? "(none)" : Quote(got));
    });
  };
  if (expect.failure_class) {
    out.push_back(Named("EXPECT-CLASS",
                        fmt::format("The call fails with class {}.", *expect.failure_class),
                        failure_check("class", *expect.failure_class)));
  }
  if (expect.failure_code) {
    out.push_back(Named("EXPECT-CODE",
                        fmt::format("The call fails with code {}.", *expect.failure_code),
                        failure_check("code", *expect.failure_code)));
  }
  return out;
}

}  // namespace faultline::harness::judge_internal
