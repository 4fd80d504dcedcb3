// LIFE-* and COMMIT-*: the shape of each call's event stream and what it commits.
#include "harness/judge_internal.h"

namespace faultline::harness::judge_internal {
namespace {

using nlohmann::json;

std::string Describe(const ClientRecord& record) {
  std::string out = fmt::format("{} at {:.1f} ms", EventType(record), Ms(record.at));
  if (const auto attempt = Int(record.event, "attempt"))
    out += fmt::format(" (attempt {})", *attempt);
  return out;
}

// The tool-call arguments a committed event carries (the first call's), "" when none.
std::string ToolArguments(const json& event) {
  const auto calls = event.find("tool_calls");
  if (calls == event.end() || !calls->is_array() || calls->empty()) return {};
  return Str(calls->front(), "arguments");
}

std::string AttemptsSent(const View& view) {
  std::string out;
  for (const provider::JournalEntry* entry : view.attempts) {
    out += fmt::format("; attempt {} ({}, {} B sent, {}): {}", entry->attempt, entry->plan_summary,
                       entry->bytes_sent, provider::ToString(entry->end),
                       entry->truth.answer ? Quote(*entry->truth.answer) : "no answer");
  }
  return out;
}

// The attempt a single call committed from: the last request that arrived before the commit.
const provider::JournalEntry* CommittingEntry(const View& view, const ClientRecord& commit) {
  const provider::JournalEntry* last = nullptr;
  for (const provider::JournalEntry* entry : view.attempts) {
    if (entry->arrived <= commit.at) last = entry;
  }
  return last;
}

}  // namespace

CheckResult LifeOneTerminal(const View& view) {
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const CallView& call = view.calls[i];
    if (call.terminals == 1) continue;
    if (call.terminals == 0) {
      const std::string last =
          call.records.empty() ? "no event at all" : "last event " + Describe(*call.records.back());
      return Fail("", fmt::format("call {} never ended: {}{}", i, last,
                                  view.trace.subject_timed_out ? "; the subject was stopped by the "
                                                                 "runner's timeout"
                                                               : ""));
    }
    std::string all;
    for (const ClientRecord* record : call.records) {
      if (IsTerminal(*record)) all += (all.empty() ? "" : ", ") + Describe(*record);
    }
    return Fail("", fmt::format("call {} ended {} times: {}", i, call.terminals, all));
  }
  return Pass("");
}

CheckResult LifeNothingAfterTerminal(const View& view) {
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const CallView& call = view.calls[i];
    bool ended = false;
    for (const ClientRecord* record : call.records) {
      if (ended) {
        return Fail("", fmt::format("call {}: {} after its terminal {}", i, Describe(*record),
                                    Describe(*call.terminal)));
      }
      ended = record == call.terminal;
    }
  }
  return Pass("");
}

CheckResult LifeChunksInsideResponse(const View& view) {
  if (view.black_box) return NotApplicable("", "black-box subject: no chunk events");
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    std::optional<std::string> open;  // the response id of the open attempt
    for (const ClientRecord* record : view.calls[i].records) {
      const std::string type = EventType(*record);
      const std::string id = Str(record->event, "response_id");
      if (type == "response/start") {
        open = id;
      } else if (type == "assistant/chunk") {
        if (!open)
          return Fail("", fmt::format("call {}: {} outside any response", i, Describe(*record)));
        if (!id.empty() && id != *open) {
          return Fail("", fmt::format("call {}: {} for response {} while {} is open", i,
                                      Describe(*record), Quote(id), Quote(*open)));
        }
      } else if (type != "adapter/hello") {
        open.reset();
      }
    }
  }
  return Pass("");
}

CheckResult LifeInterruptBeforeRetry(const View& view) {
  if (view.black_box) return NotApplicable("", "black-box subject: no response/interrupted");
  if (!view.single_call()) return NotApplicable("", "several concurrent calls");
  const double slack = 2 * view.tolerance.early_ms;  // pipe latency of the adapter's line
  for (std::size_t k = 1; k < view.attempts.size(); ++k) {
    const provider::JournalEntry& next = *view.attempts[k];
    int announced = 0;
    for (const ClientRecord* record : view.calls[0].records) {
      if (EventType(*record) == "response/interrupted" &&
          Ms(record->at) <= ArrivedMs(next) + slack) {
        ++announced;
      }
    }
    if (announced < static_cast<int>(k)) {
      return Fail("", fmt::format("attempt {} reached the provider at {:.1f} ms but only {} "
                                  "response/interrupted event(s) had been received by then "
                                  "(expected {})",
                                  next.attempt, ArrivedMs(next), announced, k));
    }
  }
  return Pass("");
}

CheckResult CommitOneAttempt(const View& view) {
  bool any_commit = false;
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const ClientRecord* terminal = view.calls[i].terminal;
    if (terminal == nullptr || EventType(*terminal) != "response/committed") continue;
    any_commit = true;
    const std::string text = Str(terminal->event, "text");
    const std::string tools = ToolArguments(terminal->event);
    bool any_answer = false;
    bool matched = false;
    for (const provider::JournalEntry* entry : view.attempts) {
      if (!entry->truth.answer) continue;
      any_answer = true;
      matched = matched || (*entry->truth.answer == text && entry->truth.tool_arguments == tools);
    }
    if (!any_answer) continue;  // nothing whole was sent: COMMIT-002 judges it
    if (!matched) {
      return Fail("", fmt::format("call {} committed {}{} at {:.1f} ms, which no single attempt "
                                  "sent{}",
                                  i, Quote(text),
                                  tools.empty() ? "" : " with tool arguments " + Quote(tools),
                                  Ms(terminal->at), AttemptsSent(view)));
    }
  }
  if (!any_commit) return NotApplicable("", "nothing was committed");
  return Pass("");
}

CheckResult CommitWholeAnswerOnly(const View& view) {
  bool any_commit = false;
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const ClientRecord* terminal = view.calls[i].terminal;
    if (terminal == nullptr || EventType(*terminal) != "response/committed") continue;
    any_commit = true;
    if (!view.single_call()) {
      const bool any_answer = std::ranges::any_of(
          view.attempts,
          [](const provider::JournalEntry* e) { return e->truth.answer.has_value(); });
      if (!any_answer) {
        return Fail("", fmt::format("call {} committed, but no attempt carried a whole answer{}", i,
                                    AttemptsSent(view)));
      }
      continue;
    }
    const provider::JournalEntry* entry = CommittingEntry(view, *terminal);
    if (entry == nullptr) {
      return Fail("", fmt::format("committed at {:.1f} ms although no request reached the "
                                  "provider",
                                  Ms(terminal->at)));
    }
    if (entry->truth.answer) continue;
    if (entry->truth.failure_class.empty()) {
      return NotApplicable("", fmt::format("attempt {} ({}) has a verbatim body: no promise",
                                           entry->attempt, entry->plan_summary));
    }
    return Fail("", fmt::format("committed {} at {:.1f} ms from attempt {}, whose response was "
                                "not a whole answer: {} ({}; {} B sent, {})",
                                Quote(Str(terminal->event, "text")), Ms(terminal->at),
                                entry->attempt, entry->truth.failure_class, entry->plan_summary,
                                entry->bytes_sent, provider::ToString(entry->end)));
  }
  if (!any_commit) return NotApplicable("", "nothing was committed");
  return Pass("");
}

CheckResult CommitNoRetryAfter(const View& view) {
  if (!view.single_call()) return NotApplicable("", "several concurrent calls share the provider");
  const ClientRecord* terminal = view.calls[0].terminal;
  if (terminal == nullptr || EventType(*terminal) != "response/committed") {
    return NotApplicable("", "nothing was committed");
  }
  for (const provider::JournalEntry* entry : view.attempts) {
    if (entry->arrived > terminal->at) {
      return Fail("", fmt::format("committed at {:.1f} ms, then attempt {} reached the provider "
                                  "at {:.1f} ms",
                                  Ms(terminal->at), entry->attempt, ArrivedMs(*entry)));
    }
  }
  return Pass("");
}

}  // namespace faultline::harness::judge_internal
