// PlanTruth: what a correct client must make of a response, derived from the scenario entry.
//
// This is the runner's oracle, so it is written from the scenario's point of view (which fault
// was injected) and never shares code with the reference client's classifier: a bug common to
// both would otherwise pass unnoticed.
#include <algorithm>
#include <charconv>
#include <cmath>

#include "fake_provider/plan_internal.h"
#include "nlohmann/json.hpp"

namespace faultline::provider::plan_internal {
namespace {

using scenario::ErrorKind;
using scenario::EventFault;
using EndKind = scenario::Termination::Kind;

struct ClassOf {
  std::string_view failure_class;
  bool retryable;
};

ClassOf ClassOfError(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidRequest:
    case ErrorKind::kNotFound:
    case ErrorKind::kTooLarge:
    case ErrorKind::kUnprocessable:
      return {"invalid-request", false};
    case ErrorKind::kConflict:
      return {"invalid-request", true};
    case ErrorKind::kContextWindow:
      return {"context-overflow", false};
    case ErrorKind::kAuth:
    case ErrorKind::kPermission:
      return {"auth", false};
    case ErrorKind::kRequestTimeout:
      return {"timeout", true};
    case ErrorKind::kRateLimit:
      return {"rate-limit", true};
    case ErrorKind::kQuota:
      return {"quota", false};
    case ErrorKind::kServer:
    case ErrorKind::kBadGateway:
    case ErrorKind::kUnavailable:
    case ErrorKind::kGatewayTimeout:
      return {"provider-unavailable", true};
    case ErrorKind::kOverloaded:
      return {"provider-overloaded", true};
  }
  return {"unknown", false};
}

void SetClass(PlanTruth& truth, ClassOf of) {
  truth.answer.reset();
  truth.failure_class = of.failure_class;
  truth.retryable = of.retryable;
}

// The first fault sent before the cut that spoils the stream, if any.
const EventFault* SpoilingFault(const scenario::Content& content, std::size_t cut) {
  const EventFault* first = nullptr;
  for (const EventFault& fault : content.faults) {
    if (static_cast<std::size_t>(std::max(fault.after_event, 0)) > cut) continue;
    const bool spoils = fault.kind != EventFault::Kind::kDelay &&
                        !(fault.kind == EventFault::Kind::kStall && !fault.wait.forever);
    if (spoils && (first == nullptr || fault.after_event < first->after_event)) first = &fault;
  }
  return first;
}

void ApplyFault(const EventFault& fault, PlanTruth& truth) {
  switch (fault.kind) {
    case EventFault::Kind::kStall:  // forever: only a timeout ends it
      return SetClass(truth, {"timeout", true});
    case EventFault::Kind::kErrorEnvelope:
    case EventFault::Kind::kProviderError:
      return SetClass(truth, ClassOfError(fault.error.kind));
    case EventFault::Kind::kRaw:  // anything at all: no promise
      return SetClass(truth, {"", false});
    default:  // invalid JSON, wrong shape, two objects, sequence gap: a garbled stream, which a
              // retry may well get right (a proxy or load-balancer glitch)
      return SetClass(truth, {"protocol", true});
  }
}

// How the body's end shapes the outcome of an otherwise good answer.
void ApplyEnd(const BodyProgram& program, bool stream, PlanTruth& truth) {
  const std::size_t cut = CutPosition(program);
  const bool terminator_sent = cut > program.terminator;
  switch (program.end.kind) {
    case EndKind::kDone:
      return;
    case EndKind::kNoTerminator:
      if (stream) SetClass(truth, {"truncated", true});
      return;
    case EndKind::kStall:  // forever: only a timeout ends it; else the server closes after it
      if (!terminator_sent)
        SetClass(truth, {program.end.wait.forever ? "timeout" : "transport", true});
      return;
    default:  // no final chunk, close, reset
      if (!terminator_sent) SetClass(truth, {"transport", true});
      return;
  }
}

// A verbatim error body may refine its status's class the way the taxonomy lets a body refine
// one (docs/failure-taxonomy.md): overloaded at any status, a context window on 400/413/422, a
// quota on 400/429. When its words could, the scenario promises nothing; else the status is the
// injected fault and decides the class.
ClassOf VerbatimErrorClass(int status, std::string_view body) {
  std::string lower(body);
  std::ranges::transform(lower, lower.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  const auto says = [&](std::initializer_list<std::string_view> words) {
    return std::ranges::any_of(
        words, [&](std::string_view w) { return lower.find(w) != std::string::npos; });
  };
  const bool refinable = says({"overload"}) ||
                         ((status == 400 || status == 413 || status == 422) &&
                          says({"context", "too long", "maximum", "tokens"})) ||
                         ((status == 400 || status == 429) &&
                          says({"quota", "credit", "balance", "billing", "spend"}));
  if (refinable) return {"", false};
  return ClassOfError(scenario::DefaultErrorKind(status));
}

// A verbatim body on a non-streaming 2xx: one that is not JSON at all (cut off, an HTML page
// served as JSON) is malformed, which a retry may well get right; valid JSON of any shape
// promises nothing.
ClassOf VerbatimAnswerClass(std::string_view body) {
  if (!nlohmann::json::accept(body)) return {"protocol", true};
  return {"", false};
}

bool HasContentType(std::string_view type, bool stream) {
  return type.find(stream ? "text/event-stream" : "json") != std::string_view::npos;
}

bool NameIs(std::string_view name, std::string_view wanted) {
  return std::ranges::equal(
      name, wanted, [](char a, char b) { return (a >= 'A' && a <= 'Z' ? a - 'A' + 'a' : a) == b; });
}

// Valid hints longer than this mean "stay away": they count as this long (over any cap).
constexpr Duration kLongestHint = std::chrono::hours(24);

// delay-seconds (1*DIGIT) as RFC 9110 defines it, of any size; anything else is no hint.
std::optional<Duration> DelaySeconds(std::string_view text) {
  if (text.empty() || !std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  long long seconds = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (error != std::errc{} || seconds > 86'400) return kLongestHint;  // only overflow is left
  return std::chrono::seconds(seconds);
}

std::optional<Duration> Milliseconds(std::string_view text) {
  double ms = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(ms) || ms < 0 ||
      ms > 1e12) {
    return std::nullopt;
  }
  return std::min(kLongestHint, Duration{static_cast<Duration::rep>(ms * 1000)});
}

// A non-negative decimal number of `unit`s, fractions allowed ("1.5"); saturating.
std::optional<Duration> Decimal(std::string_view text, double unit_us) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (text.empty() ||
      !std::ranges::all_of(text, [](char c) { return (c >= '0' && c <= '9') || c == '.'; })) {
    return std::nullopt;
  }
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (end != text.data() + text.size()) return std::nullopt;
  if (error == std::errc::result_out_of_range || value * unit_us > 8.64e10) return kLongestHint;
  if (error != std::errc{}) return std::nullopt;
  return Duration{static_cast<Duration::rep>(std::ceil(value * unit_us))};
}

// "1.5s", "6m0s", "250ms", "20 seconds": a message's duration after "try again in".
std::optional<Duration> MessageDuration(std::string_view text) {
  Duration total{0};
  bool any = false;
  for (;;) {
    std::size_t digits = 0;
    while (digits < text.size() &&
           ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) {
      ++digits;
    }
    if (digits == 0) break;
    const std::string_view number = text.substr(0, digits);
    text.remove_prefix(digits);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    double unit = 1e6;
    if (text.starts_with("ms")) {
      unit = 1e3;
      text.remove_prefix(2);
    } else if (text.starts_with("m") && !text.starts_with("min")) {
      unit = 60e6;
      text.remove_prefix(1);
    } else if (text.starts_with("s")) {
      text.remove_prefix(text.starts_with("seconds") ? 7 : 1);
    } else {
      return std::nullopt;
    }
    const auto part = Decimal(number, unit);
    if (!part) return std::nullopt;
    total = std::min(kLongestHint, total + *part);
    any = true;
  }
  if (!any) return std::nullopt;
  return total;
}

// The bytes of the response head and what follows in the same instant's writes.
std::string WireText(const std::vector<PlanStep>& steps) {
  std::string text;
  for (const PlanStep& step : steps) {
    if (step.kind == PlanStep::Kind::kSend) text += step.bytes;
    if (text.size() > 64 * 1024) break;
  }
  return text;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

void AddMessageHints(std::string_view wire, std::vector<HintValue>& hints) {
  const std::string lower = Lower(wire.substr(0, 64 * 1024));
  for (std::size_t at = lower.find("try again in "); at != std::string::npos;
       at = lower.find("try again in ", at + 1)) {
    if (auto value = MessageDuration(std::string_view(lower).substr(at + 13))) {
      hints.push_back({"body", *value});
    }
  }
}

void KeepLeast(std::optional<Duration>& least, std::optional<Duration> value) {
  if (value && (!least || *value < *least)) least = value;
}

}  // namespace

std::optional<Duration> RetryAfterFloor(const scenario::ResponseSpec& spec) {
  std::optional<Duration> least;
  if (spec.retry_after) {
    using Form = scenario::RetryAfter::Form;
    const scenario::RetryAfter& hint = *spec.retry_after;
    if (hint.form == Form::kSeconds) {
      KeepLeast(least, DelaySeconds(hint.text));
    } else if (hint.form != Form::kRaw) {
      // A date, relative to the response's own Date header. Dates have whole seconds, so a
      // client measuring from its own clock may be up to a second early and still be right.
      KeepLeast(least,
                std::clamp(hint.date_offset - std::chrono::seconds(1), Duration{0}, kLongestHint));
    }
  }
  if (spec.retry_after_ms) KeepLeast(least, Milliseconds(*spec.retry_after_ms));
  for (const scenario::Header& header : spec.headers) {
    if (NameIs(header.name, "retry-after")) KeepLeast(least, DelaySeconds(header.value));
    if (NameIs(header.name, "retry-after-ms")) KeepLeast(least, Milliseconds(header.value));
  }
  return least;
}

std::vector<HintValue> HintValuesOf(const scenario::ResponseSpec& spec,
                                    const std::vector<PlanStep>& steps) {
  std::vector<HintValue> hints;
  const auto add = [&](std::string source, std::optional<Duration> value) {
    if (value) hints.push_back({std::move(source), *value});
  };
  if (spec.retry_after) {
    using Form = scenario::RetryAfter::Form;
    const scenario::RetryAfter& hint = *spec.retry_after;
    if (hint.form == Form::kSeconds || hint.form == Form::kRaw) {
      add("retry-after", Decimal(hint.text, 1e6));
    } else {
      add("retry-after-date", std::clamp(hint.date_offset, Duration{0}, kLongestHint));
    }
  }
  if (spec.retry_after_ms) add("retry-after-ms", Decimal(*spec.retry_after_ms, 1e3));
  for (const scenario::Header& header : spec.headers) {
    if (NameIs(header.name, "retry-after")) add("retry-after", Decimal(header.value, 1e6));
    if (NameIs(header.name, "retry-after-ms")) add("retry-after-ms", Decimal(header.value, 1e3));
  }
  if (spec.rate_limit_headers && spec.status == 429) {
    add("ratelimit-reset", spec.rate_limit_headers->requests_reset);
    add("ratelimit-reset", spec.rate_limit_headers->tokens_reset);
  }
  const std::string wire = WireText(steps);
  const std::size_t head_end = wire.find("\r\n\r\n");
  AddMessageHints(head_end == std::string::npos ? std::string_view()
                                                : std::string_view(wire).substr(head_end + 4),
                  hints);
  return hints;
}

// Whether the response carries anything a client may take as a retry hint, valid or not (so its
// delay may exceed the local backoff).
bool Hinted(const scenario::ResponseSpec& spec) {
  if (spec.retry_after || spec.retry_after_ms || spec.rate_limit_headers) return true;
  if (spec.error && spec.error->message) return true;  // "Please try again in 1.5s."
  return std::ranges::any_of(spec.headers, [](const scenario::Header& header) {
    return NameIs(header.name, "retry-after") || NameIs(header.name, "retry-after-ms") ||
           (header.name.size() > 12 && NameIs(header.name.substr(0, 12), "x-ratelimit-"));
  });
}

PlanTruth EntryTruth(const scenario::ResponseSpec& spec, const BodyProgram& program, bool stream,
                     std::string_view content_type, bool stream_requested) {
  PlanTruth truth;
  truth.retry_after = RetryAfterFloor(spec);
  truth.hinted = Hinted(spec) || spec.body.has_value();
  if (spec.connection != scenario::ConnectionFault::kNone) {
    SetClass(truth, {"transport", true});
  } else if (spec.headers_stall && spec.headers_stall->forever) {
    SetClass(truth, {"timeout", true});
  } else if (spec.status < 200 || spec.status > 299) {
    SetClass(truth, spec.body ? VerbatimErrorClass(spec.status, *spec.body)
                              : ClassOfError(spec.error.value_or(scenario::ErrorSpec{}).kind));
  } else if (!HasContentType(content_type, stream || stream_requested)) {
    SetClass(truth, {"protocol", true});  // whatever the body: the wrong kind of answer
    truth.failure_in_head = true;
  } else if (spec.body) {
    // A verbatim stream promises nothing; a verbatim JSON answer only that it is JSON.
    SetClass(truth, HasContentType(content_type, true) ? ClassOf{"", false}
                                                       : VerbatimAnswerClass(*spec.body));
  } else {
    const scenario::Content& content = spec.content;
    truth.answer = content.text;
    if (content.tool_call) truth.tool_arguments = content.tool_call->arguments;
    if (content.text.empty() && !content.tool_call) SetClass(truth, {"empty", true});
    const std::size_t cut = CutPosition(program);
    const EventFault* fault = stream ? SpoilingFault(content, cut) : nullptr;
    if (fault != nullptr) ApplyFault(*fault, truth);
    if (truth.answer) ApplyEnd(program, stream, truth);
    if (stream) {
      truth.streamed = true;
      // The items sent before the failure: those before the fault, else before the cut.
      const std::size_t sent =
          fault != nullptr ? static_cast<std::size_t>(std::max(fault->after_event, 0)) : cut;
      truth.output_before_failure =
          !truth.failure_class.empty() && program.first_output && *program.first_output < sent;
    }
  }
  truth.retryable_ignoring_header = truth.retryable;
  if (spec.should_retry && !truth.failure_class.empty()) {
    truth.retryable = *spec.should_retry;
    truth.should_retry = spec.should_retry;
  }
  return truth;
}

PlanTruth ErrorTruth(ErrorKind kind, std::optional<Duration> retry_after) {
  PlanTruth truth;
  SetClass(truth, ClassOfError(kind));
  truth.retryable_ignoring_header = truth.retryable;
  truth.retry_after = retry_after;
  truth.hinted = retry_after.has_value();
  return truth;
}

std::vector<Silence> SilencesOf(const std::vector<PlanStep>& steps) {
  std::vector<Silence> silences;
  bool sent = false;
  Duration quiet_since{0};  // end of the last send or recorded silence
  for (const PlanStep& step : steps) {
    if (step.kind == PlanStep::Kind::kStall || step.kind == PlanStep::Kind::kHeartbeat) {
      Silence silence;
      silence.from = step.at;
      silence.before_headers = !sent;
      silence.heartbeat = step.kind == PlanStep::Kind::kHeartbeat;
      if (step.length) silence.to = step.at + *step.length;
      if (!step.length || *step.length >= kSilenceThreshold) silences.push_back(silence);
      if (!step.length) break;  // nothing follows a stall that lasts until the client goes
      quiet_since = *silence.to;
      continue;
    }
    if (step.kind != PlanStep::Kind::kSend) continue;
    if (step.at - quiet_since >= kSilenceThreshold) {
      Silence gap;
      gap.from = quiet_since;
      gap.to = step.at;
      gap.before_headers = !sent;
      silences.push_back(gap);
    }
    sent = true;
    quiet_since = step.at;
  }
  return silences;
}

}  // namespace faultline::provider::plan_internal
