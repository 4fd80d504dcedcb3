// TIME-*, CANCEL-*, CLASS-001 and RES-001: deadlines, cancellation, classification, leaks.
#include "harness/judge/judge_internal.h"

namespace faultline::harness::judge_internal {
namespace {

bool ClosedByClient(const provider::JournalEntry& entry) {
  return entry.end == provider::EndKind::kClientClosed ||
         entry.end == provider::EndKind::kStalledClientGaveUp;
}

// The client closed it itself: not the runner stopping a subject that had hung.
bool ClientEnded(const View& view, const provider::JournalEntry& entry) {
  const auto& stopped = view.trace.subject_stopped_at;
  const bool by_runner = stopped && entry.ended + std::chrono::milliseconds(1) >= *stopped;
  return ClosedByClient(entry) && !by_runner;
}

// When the client's idle clock may have started on a content silence that the provider began at
// `from`: a loaded machine hands the client its bytes late, and the client shows content as late
// as it got it (its chunk lines, which it writes after reading the bytes), so its clock restarts
// no later than its last chunk line inside the silence. Judged for a single call only (one
// attempt open at a time: a chunk in the silence is of this attempt).
double ClientIdleFrom(const View& view, const provider::JournalEntry& entry, double from) {
  if (view.calls.size() != 1) return from;
  double latest = from;
  for (const ClientRecord* record : view.calls[0].records) {
    const double at = Ms(record->at);
    if (record->event.kind == EventKind::kChunk && at > latest && at < EndedMs(entry)) latest = at;
  }
  return latest;
}

// TIME-001 or TIME-002: which silences, and the timeout that must cut them short.
struct SilenceRule {
  bool before_headers;
  std::optional<double> limit;  // the declared timeout, ms; nullopt: none
  std::string_view what;        // "idle" or "response-headers"
  std::string_view key;         // the declared policy's key for it
};

// A silence is judged only on the keys the subject states: the timeout, and for a content
// silence of heartbeats whether heartbeats reset it.
std::optional<Verdict> SilenceUnstated(const View& view, const provider::Silence& silence,
                                       const SilenceRule& rule) {
  if (auto unstated = UnlessDeclared(view, {rule.key})) return unstated;
  if (silence.heartbeat && !rule.before_headers) {
    return UnlessDeclared(view, {"timeouts.heartbeats_reset_idle"});
  }
  return std::nullopt;
}

// How an attempt that outlasted its timeout ended, for the evidence.
std::string HowSilenceEnded(const View& view, const provider::JournalEntry& entry, double from) {
  if (ClientEnded(view, entry)) {
    return fmt::format("the client closed it only at {:.1f} ms, {:.1f} ms into the silence",
                       EndedMs(entry), EndedMs(entry) - from);
  }
  if (view.trace.subject_stopped_at) {
    return fmt::format(
        "the client never closed it: the runner stopped the subject at "
        "{:.1f} ms",
        Ms(*view.trace.subject_stopped_at));
  }
  return fmt::format("the client never closed it (exchange {})", provider::ToString(entry.end));
}

// A silence that lasted past the declared timeout: nullopt when the client (or a cancel) ended
// the attempt in time, which settles the attempt's later silences too; else the verdict.
std::optional<Verdict> SilenceOutlasted(const View& view, const provider::JournalEntry& entry,
                                        const provider::Silence& silence, const SilenceRule& rule,
                                        double from) {
  const Tolerance& tolerance = view.tolerance;
  const double idle_from = rule.before_headers ? from : ClientIdleFrom(view, entry, from);
  const double deadline = idle_from + *rule.limit + tolerance.late_ms;
  const bool cancelled = view.trace.cancel_at && Ms(*view.trace.cancel_at) < deadline;
  if (ClientEnded(view, entry) && EndedMs(entry) <= deadline) return std::nullopt;
  if (cancelled) return std::nullopt;  // the cancel ended it first: CANCEL-003 judges that
  const auto& stopped = view.trace.subject_stopped_at;
  if (!ClientEnded(view, entry) && stopped && Ms(*stopped) < deadline) {
    return NotApplicable(
        fmt::format("the runner stopped the subject at {:.1f} ms, before "
                    "its declared {} timeout was due ({:.1f} ms); give "
                    "`faultline run --timeout` more time",
                    Ms(*stopped), rule.what, deadline));
  }
  const double length = silence.to ? Ms(*silence.to - silence.from) : -1;
  return Fail(fmt::format(
      "attempt {} went silent at {:.1f} ms ({}{}{}); declared {} "
      "timeout {:.0f} ms ({} tolerance); {}",
      entry.attempt, from, silence.to ? fmt::format("for {:.0f} ms", length) : "forever",
      silence.heartbeat ? ", heartbeats only" : "",
      idle_from > from ? fmt::format("; the client showed content until {:.1f} ms", idle_from)
                       : std::string(),
      rule.what, *rule.limit, LateRoom(tolerance), HowSilenceEnded(view, entry, from)));
}

// Waiting for good is what a policy without that timeout does: legal, and harmful (ADV-003,
// ADV-008), not a broken contract. n/a when the attempt was still waiting at the end.
std::optional<Verdict> WaitedForGood(const View& view, const provider::JournalEntry& entry,
                                     const provider::Silence& silence, const SilenceRule& rule,
                                     double from) {
  if (silence.to || ClientEnded(view, entry)) return std::nullopt;
  return NotApplicable(
      fmt::format("attempt {} went silent at {:.1f} ms for good and the client declares "
                  "no {} timeout: it was still waiting at {:.1f} ms, as its policy "
                  "allows (ADV-003, ADV-008)",
                  entry.attempt, from, rule.what,
                  Ms(view.trace.subject_stopped_at.value_or(view.trace.ended))));
}

// The verdict on one attempt's silences of the rule's kind; nullopt while none fails or is
// unjudgeable. `judged` is set when one was judged.
std::optional<Verdict> AttemptSilencesCutShort(const View& view,
                                               const provider::JournalEntry& entry,
                                               const SilenceRule& rule, bool* judged) {
  for (const provider::Silence& silence : entry.truth.silences) {
    if (silence.before_headers != rule.before_headers) continue;
    if (auto unstated = SilenceUnstated(view, silence, rule)) return unstated;
    *judged = true;
    if (silence.heartbeat && !rule.before_headers && view.policy().timeouts.heartbeats_reset_idle) {
      continue;
    }
    const double from = ArrivedMs(entry) + Ms(silence.from);
    if (!rule.limit) {
      if (auto waited = WaitedForGood(view, entry, silence, rule, from)) return waited;
      continue;
    }
    const double length = silence.to ? Ms(*silence.to - silence.from) : -1;
    if (silence.to && length <= *rule.limit + view.tolerance.late_ms) continue;
    return SilenceOutlasted(view, entry, silence, rule, from);
  }
  return std::nullopt;
}

// TIME-001 and TIME-002: every silence longer than the declared timeout (`key`) must be cut
// short by the client within that timeout.
Verdict SilencesCutShort(const View& view, bool before_headers, std::optional<double> limit,
                         std::string_view what, std::string_view key) {
  const SilenceRule rule{before_headers, limit, what, key};
  bool judged = false;
  for (const provider::JournalEntry* entry : view.attempts) {
    if (auto verdict = AttemptSilencesCutShort(view, *entry, rule, &judged)) return *verdict;
  }
  if (!judged)
    return NotApplicable(fmt::format("no silence before {} in the responses",
                                     before_headers ? "the headers" : "content"));
  return Pass();
}

double StartMs(const CallView& call) {
  for (const ClientRecord* record : call.records) {
    if (record->event.kind == EventKind::kStart) return Ms(record->at);
  }
  return 0;
}

}  // namespace

Verdict TimeStallDetected(const View& view) {
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  return SilencesCutShort(view, false, view.declared.idle_ms(), "idle", "timeouts.idle_ms");
}

Verdict TimeHeadersDeadline(const View& view) {
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  return SilencesCutShort(view, true, view.declared.response_headers_ms(), "response-headers",
                          "timeouts.response_headers_ms");
}

Verdict TimeTotalDeadline(const View& view) {
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  if (auto unstated = UnlessDeclared(view, {"timeouts.total_ms"})) return *unstated;
  if (!view.declared.total_ms()) return NotApplicable("the subject declares no total deadline");
  const double limit = *view.declared.total_ms() + view.tolerance.late_ms;
  std::optional<std::string> unjudged;
  bool judged = false;
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const CallView& call = view.calls[i];
    const double start = StartMs(call);
    const double end = call.terminal ? Ms(call.terminal->at) : Ms(view.trace.ended);
    if (end - start <= limit) {
      // A call the run stopped before its deadline passed may still have overrun it.
      if (!call.terminal && !unjudged) {
        unjudged = fmt::format(
            "call {} was stopped at {:.1f} ms, {:.1f} ms after it started: "
            "before its declared total deadline passed",
            i, end, end - start);
      }
      judged = judged || call.terminal != nullptr;
      continue;
    }
    return Fail(
        fmt::format("call {} started at {:.1f} ms and {} at {:.1f} ms: {:.1f} ms, "
                    "over the declared total deadline {:.0f} ms ({} tolerance)",
                    i, start, call.terminal ? "ended" : "was still running", end, end - start,
                    *view.declared.total_ms(), LateRoom(view.tolerance)));
  }
  if (!judged && unjudged) return NotApplicable(*unjudged);
  return Pass();
}

Verdict CancelEndsPromptly(const View& view) {
  if (!view.trace.cancel_at) return NotApplicable("no cancel was sent");
  const double cancel = Ms(*view.trace.cancel_at);
  bool judged = false;
  for (std::size_t i = 0; i < view.calls.size(); ++i) {
    const ClientRecord* terminal = view.calls[i].terminal;
    if (terminal != nullptr && Ms(terminal->at) < cancel) continue;  // over before the cancel
    judged = true;
    if (terminal == nullptr) {
      return Fail(fmt::format("cancel sent at {:.1f} ms; call {} never ended", cancel, i));
    }
    const double late = Ms(terminal->at) - cancel;
    const std::string code = FailureOf(terminal->event).code;
    if (terminal->event.kind != EventKind::kFailed || code != "ABORTED") {
      return Fail(
          fmt::format("cancel sent at {:.1f} ms; call {} then ended with {} {} at "
                      "{:.1f} ms instead of response/failed ABORTED",
                      cancel, i, terminal->event.kind, code, Ms(terminal->at)));
    }
    if (late > view.tolerance.late_ms) {
      return Fail(
          fmt::format("cancel sent at {:.1f} ms; call {} ended ABORTED only {:.1f} "
                      "ms later (tolerance {})",
                      cancel, i, late, LateRoom(view.tolerance)));
    }
  }
  if (!judged) return NotApplicable("every call had ended before the cancel");
  return Pass();
}

Verdict CancelNoRequestAfter(const View& view) {
  if (!view.trace.cancel_at) return NotApplicable("no cancel was sent");
  const double cancel = Ms(*view.trace.cancel_at);
  for (const provider::JournalEntry* entry : view.attempts) {
    if (ArrivedMs(*entry) > cancel + 2 * view.tolerance.early_ms) {
      return Fail(
          fmt::format("cancel sent at {:.1f} ms; attempt {} reached the provider at "
                      "{:.1f} ms",
                      cancel, entry->attempt, ArrivedMs(*entry)));
    }
  }
  return Pass();
}

Verdict CancelClosesStream(const View& view) {
  if (!view.trace.cancel_at) return NotApplicable("no cancel was sent");
  const double cancel = Ms(*view.trace.cancel_at);
  bool judged = false;
  for (const provider::JournalEntry* entry : view.attempts) {
    const bool open_at_cancel =
        ArrivedMs(*entry) <= cancel &&
        (entry->end == provider::EndKind::kInProgress || EndedMs(*entry) > cancel);
    if (!open_at_cancel) continue;
    judged = true;
    const double deadline = cancel + view.tolerance.late_ms;
    if (entry->end != provider::EndKind::kInProgress && EndedMs(*entry) <= deadline) continue;
    return Fail(
        fmt::format("cancel sent at {:.1f} ms while attempt {} was being answered; "
                    "the exchange {} {}",
                    cancel, entry->attempt, provider::ToString(entry->end),
                    entry->end == provider::EndKind::kInProgress
                        ? std::string("was still open at the end of the run")
                        : fmt::format("only at {:.1f} ms", EndedMs(*entry))));
  }
  if (!judged) return NotApplicable("no response was in progress at the cancel");
  return Pass();
}

namespace {

// The failures a call reported (interrupted events, then the terminal failure), each with the
// journal entry of its attempt when the trace says which one it was. Refused connections never
// reach the journal: where the provider may refuse, a failure to connect is taken for a refusal
// (entry null) and the others for the journal's attempts in order, but only when the subject's
// own account adds up (each response/start is a journaled attempt or a failure to connect).
struct ReportedAttempt {
  const ClientRecord* record;
  const provider::JournalEntry* entry;  // null: a refused connection
};
std::optional<std::vector<ReportedAttempt>> AlignFailures(const View& view) {
  std::vector<const ClientRecord*> failures;
  std::size_t starts = 0, connects = 0;
  for (const ClientRecord* record : view.calls[0].records) {
    const EventKind kind = record->event.kind;
    starts += kind == EventKind::kStart;
    if (kind != EventKind::kInterrupted && kind != EventKind::kFailed) continue;
    if (FailureOf(record->event).code == "ABORTED") continue;
    failures.push_back(record);
    connects += FailureOf(record->event).phase == "connect";
  }
  const bool refusals = view.refusals();
  if (refusals && (view.black_box || starts != view.attempts.size() + connects)) {
    return std::nullopt;  // the account does not add up: no attempt can be matched
  }
  std::vector<ReportedAttempt> out;
  std::size_t next = 0;  // the journal attempt of the next failure that reached the provider
  for (const ClientRecord* record : failures) {
    const bool terminal = record->event.kind == EventKind::kFailed;
    if (refusals && FailureOf(record->event).phase == "connect") {
      out.push_back({record, nullptr});
      continue;
    }
    // A black-box subject reports only its ending: the last attempt's.
    if (view.black_box && !terminal) continue;
    const std::size_t index = terminal && !refusals ? view.attempts.size() - 1 : next++;
    if (index < view.attempts.size()) out.push_back({record, view.attempts[index]});
  }
  return out;
}

}  // namespace

Verdict ClassMatchesFault(const View& view) {
  if (!view.single_call()) return NotApplicable("several concurrent calls share the provider");
  if (auto unreported = UnlessFailureReported(view)) return *unreported;
  const std::optional<std::vector<ReportedAttempt>> aligned = AlignFailures(view);
  if (!aligned) {
    return NotApplicable(
        "the provider refused connections and the subject's attempts do not add up to the "
        "journal's, so no failure can be matched to its fault");
  }
  int judged = 0;
  for (const auto& [record, entry] : *aligned) {
    const std::string& reported = FailureOf(record->event).failure_class;
    bool ambiguous = false;
    const std::string expected =
        entry == nullptr ? std::string("transport") : ExpectedClass(view, *entry, &ambiguous);
    if (expected.empty()) continue;
    ++judged;
    if (reported == expected || (ambiguous && reported == "timeout")) continue;
    const std::string fault = entry == nullptr
                                  ? std::string("a refused connection")
                                  : fmt::format("attempt {}, whose injected fault is {} ({})",
                                                entry->attempt, expected, entry->plan_summary);
    return Fail(fmt::format("{} at {:.1f} ms reports class \"{}\" ({}) for {}", record->event.kind,
                            Ms(record->at), reported, FailureOf(record->event).code,
                            entry == nullptr ? fault + ", a transport failure" : fault));
  }
  if (judged == 0) return NotApplicable("no reported failure maps to an injected fault");
  return Pass();
}

Verdict ResourcesClosed(const View& view) {
  for (const provider::JournalEntry& entry : view.trace.journal) {
    if (entry.end != provider::EndKind::kInProgress) continue;
    return Fail(
        fmt::format("attempt {} (arrived {:.1f} ms, {}; {} B sent) was still open at "
                    "the end of the run ({:.1f} ms)",
                    entry.attempt, ArrivedMs(entry), entry.plan_summary, entry.bytes_sent,
                    Ms(view.trace.ended)));
  }
  return Pass();
}

Verdict ConnectionsReusedOnlyWhole(const View& view) {
  const auto& journal = view.trace.journal;
  for (const provider::JournalEntry& entry : journal) {
    if (!entry.further_request_at) continue;
    const auto next = std::ranges::find_if(journal, [&](const provider::JournalEntry& later) {
      return later.index > entry.index && later.connection == entry.connection;
    });
    return Fail(fmt::format(
        "attempt {} (arrived {:.1f} ms, {}) was still being answered at {:.1f} ms when bytes of "
        "a further request arrived on its connection{}: the client sent a request on a "
        "connection whose response it had not read to its end (one that gives up on a response "
        "closes its connection and sends the next request on a new one)",
        entry.attempt, ArrivedMs(entry), entry.plan_summary, Ms(*entry.further_request_at),
        next == journal.end()
            ? std::string()
            : fmt::format(" (attempt {}, served there once that response ended, at {:.1f} ms)",
                          next->attempt, ArrivedMs(*next))));
  }
  if (journal.size() < 2) return NotApplicable("fewer than two requests reached the provider");
  // Only a response the client may give up on before its end tempts a client to reuse its
  // connection: one with a silence in it, or one the client left.
  const bool tempting = std::ranges::any_of(journal, [](const provider::JournalEntry& entry) {
    return !entry.truth.silences.empty() || entry.end == provider::EndKind::kClientClosed ||
           entry.end == provider::EndKind::kStalledClientGaveUp;
  });
  if (!tempting) return NotApplicable("no response paused, nor did the client leave one");
  return Pass();
}

}  // namespace faultline::harness::judge_internal
