// LIFE-* and COMMIT-*: the shape of each call's event stream and what it commits.
#include "harness/judge/judge_internal.h"

namespace faultline::harness::judge_internal {
namespace {

using nlohmann::json;

std::string Describe(const ClientRecord& record) {
  std::string out = fmt::format("{} at {:.1f} ms", record.event.kind, Ms(record.at));
  if (const auto attempt = record.event.attempt) out += fmt::format(" (attempt {})", *attempt);
  return out;
}

// The tool-call arguments a committed event carries (the first call's), "" when none.
std::string ToolArguments(const ClientEvent& event) {
  if (!event.tool_calls || event.tool_calls->empty()) return {};
  return event.tool_calls->front().arguments;
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

Verdict LifeOneTerminal(const View& view) {
  if (auto unknown = UnlessOutcomeKnown(view)) return *unknown;
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const CallView& call = view.calls[i];
    if (call.terminals == 1) continue;
    if (call.terminals == 0) {
      if (std::string why = StoppedBeforeThePolicyEnds(view); !why.empty()) {
        return NotApplicable(fmt::format("call {} had not ended: {} (ADV-008)", i, why));
      }
      const std::string last =
          call.records.empty() ? "no event at all" : "last event " + Describe(*call.records.back());
      return Fail(fmt::format("call {} never ended: {}{}", i, last,
                              view.trace.subject_timed_out ? "; the subject was stopped by the "
                                                             "runner's timeout"
                                                           : ""));
    }
    std::string all;
    for (const ClientRecord* record : call.records) {
      if (record->event.terminal()) all += (all.empty() ? "" : ", ") + Describe(*record);
    }
    return Fail(fmt::format("call {} ended {} times: {}", i, call.terminals, all));
  }
  return Pass();
}

Verdict LifeNothingAfterTerminal(const View& view) {
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const CallView& call = view.calls[i];
    bool ended = false;
    for (const ClientRecord* record : call.records) {
      if (ended) {
        return Fail(fmt::format("call {}: {} after its terminal {}", i, Describe(*record),
                                Describe(*call.terminal)));
      }
      ended = record == call.terminal;
    }
  }
  return Pass();
}

Verdict LifeChunksInsideResponse(const View& view) {
  if (view.black_box) return NotApplicable("black-box subject: no chunk events");
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    std::optional<std::string> open;  // the response id of the open attempt
    for (const ClientRecord* record : view.calls[i].records) {
      const EventKind type = record->event.kind;
      const std::string id = record->event.response_id;
      if (type == EventKind::kStart) {
        open = id;
      } else if (type == EventKind::kChunk) {
        if (!open)
          return Fail(fmt::format("call {}: {} outside any response", i, Describe(*record)));
        if (!id.empty() && id != *open) {
          return Fail(fmt::format("call {}: {} for response {} while {} is open", i,
                                  Describe(*record), Quote(id), Quote(*open)));
        }
      } else if (type != EventKind::kHello) {
        open.reset();
      }
    }
  }
  return Pass();
}

// Judged from the order of the subject's own lines, not from when the runner read them: a
// response/start is written just before its request goes out, so every retry's start must follow
// the interruption of the attempt before it. The pipe's delay under load cannot reorder lines.
Verdict LifeInterruptBeforeRetry(const View& view) {
  if (view.black_box) return NotApplicable("black-box subject: no response/interrupted");
  bool judged = false;
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    int starts = 0;
    int interrupted = 0;
    for (const ClientRecord* record : view.calls[i].records) {
      const EventKind type = record->event.kind;
      if (type == EventKind::kInterrupted) ++interrupted;
      if (type != EventKind::kStart) continue;
      ++starts;
      if (starts == 1) continue;
      judged = true;
      if (interrupted >= starts - 1) continue;
      return Fail(
          fmt::format("call {}: {} is its attempt {}, but only {} response/interrupted "
                      "event(s) came before it (expected {})",
                      i, Describe(*record), starts, interrupted, starts - 1));
    }
  }
  if (!judged) return NotApplicable("no retry was started");
  return Pass();
}

namespace {

// The attempts the single call's subject reports: its response/start events, or a black box's
// count on its ending (nullopt when it reports none).
std::optional<int> ReportedAttempts(const View& view) {
  const ClientRecord* terminal = view.calls[0].terminal;
  if (view.black_box) return terminal ? terminal->event.attempt : std::nullopt;
  return static_cast<int>(std::ranges::count_if(view.calls[0].records, [](const ClientRecord* r) {
    return r->event.kind == EventKind::kStart;
  }));
}

}  // namespace

Verdict LifeAttemptsAgree(const View& view) {
  if (!view.single_call()) return NotApplicable("several concurrent calls share the provider");
  const int requests = static_cast<int>(view.attempts.size());
  const bool outages = view.refusals();
  const std::optional<int> counted = ReportedAttempts(view);
  if (!counted) return NotApplicable("black-box subject: no attempt count reported");
  const int reported = *counted;
  // Refused connections never reach the provider; a cancel or the runner may stop an attempt
  // before its request was written.
  const bool cut_short = view.trace.cancel_at || view.trace.subject_stopped_at;
  const bool fewer_ok = outages || (cut_short && reported == requests + 1);
  if (requests == reported || (requests < reported && fewer_ok)) return Pass();
  if (requests > reported) {
    return Fail(
        fmt::format("{} request(s) reached the provider but the subject reports {} "
                    "attempt(s): attempts it made without reporting them",
                    requests, reported));
  }
  return Fail(
      fmt::format("the subject reports {} attempt(s) but only {} request(s) reached "
                  "the provider: attempts that never arrived (a dead connection, a "
                  "wrong endpoint)",
                  reported, requests));
}

Verdict CommitOneAttempt(const View& view) {
  if (auto unreported = UnlessTextReported(view)) return *unreported;
  bool any_commit = false;
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const ClientRecord* terminal = view.calls[i].terminal;
    if (terminal == nullptr || terminal->event.kind != EventKind::kCommitted) continue;
    any_commit = true;
    const std::string text = terminal->event.text.value_or("");
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
      return Fail(
          fmt::format("call {} committed {}{} at {:.1f} ms, which no single attempt "
                      "sent{}",
                      i, Quote(text), tools.empty() ? "" : " with tool arguments " + Quote(tools),
                      Ms(terminal->at), AttemptsSent(view)));
    }
  }
  if (!any_commit) return NotApplicable("nothing was committed");
  return Pass();
}

namespace {

// Several calls share the attempts, so none can be matched to its call: a commit needs some
// attempt that carried a whole answer. The evidence when none did, else "".
std::string NoWholeAnswerForAnyCall(const View& view, std::size_t i) {
  const bool any_answer = std::ranges::any_of(
      view.attempts, [](const provider::JournalEntry* e) { return e->truth.answer.has_value(); });
  if (any_answer) return {};
  return fmt::format("call {} committed, but no attempt carried a whole answer{}", i,
                     AttemptsSent(view));
}

// One call's commit, against the attempt it committed from: nullopt when that carried a whole
// answer.
std::optional<Verdict> CommittedFromBrokenAnswer(const View& view, const ClientRecord& terminal) {
  const provider::JournalEntry* entry = CommittingEntry(view, terminal);
  if (entry == nullptr) {
    return Fail(
        fmt::format("committed at {:.1f} ms although no request reached the "
                    "provider",
                    Ms(terminal.at)));
  }
  if (entry->truth.answer) return std::nullopt;
  if (entry->truth.failure_class.empty()) {
    return NotApplicable(fmt::format("attempt {} ({}) has a verbatim body: no promise",
                                     entry->attempt, entry->plan_summary));
  }
  return Fail(
      fmt::format("committed {} at {:.1f} ms from attempt {}, whose response was "
                  "not a whole answer: {} ({}; {} B sent, {})",
                  terminal.event.text ? Quote(*terminal.event.text)
                                      : std::string("an answer (its exit status 0)"),
                  Ms(terminal.at), entry->attempt, entry->truth.failure_class, entry->plan_summary,
                  entry->bytes_sent, provider::ToString(entry->end)));
}

}  // namespace

Verdict CommitWholeAnswerOnly(const View& view) {
  bool any_commit = false;
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const ClientRecord* terminal = view.calls[i].terminal;
    if (terminal == nullptr || terminal->event.kind != EventKind::kCommitted) continue;
    any_commit = true;
    if (!view.single_call()) {
      if (std::string none = NoWholeAnswerForAnyCall(view, i); !none.empty()) {
        return Fail(std::move(none));
      }
      continue;
    }
    if (auto broken = CommittedFromBrokenAnswer(view, *terminal)) return *broken;
  }
  if (!any_commit) return NotApplicable("nothing was committed");
  return Pass();
}

Verdict CommitNoRetryAfter(const View& view) {
  if (!view.single_call()) return NotApplicable("several concurrent calls share the provider");
  const ClientRecord* terminal = view.calls[0].terminal;
  if (terminal == nullptr || terminal->event.kind != EventKind::kCommitted) {
    return NotApplicable("nothing was committed");
  }
  for (const provider::JournalEntry* entry : view.attempts) {
    if (entry->arrived > terminal->at) {
      return Fail(
          fmt::format("committed at {:.1f} ms, then attempt {} reached the provider "
                      "at {:.1f} ms",
                      Ms(terminal->at), entry->attempt, ArrivedMs(*entry)));
    }
  }
  return Pass();
}

}  // namespace faultline::harness::judge_internal
