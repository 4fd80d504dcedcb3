// PlanTruth: what a correct client must make of a response, derived from the scenario entry.
//
// This is the runner's oracle, so it is written from the scenario's point of view (which fault
// was injected) and never shares code with the reference client's classifier: a bug common to
// both would otherwise pass unnoticed. A cassette has no scenario entry to say what it holds: its
// text is read with the reference client's decoders (not its classifier), and the class follows
// from where the playback ended, as for a scripted entry. Retry hints are the exception, on
// purpose: the truth records the fields that carry them as sent (HintFieldsOf), and the runner
// values them with the reference client's parsers, whose rules are the policy format's own
// (docs/policy.md).
#include <algorithm>

#include "fake_provider/plan/plan_internal.h"
#include "fake_provider/wire/event_splitter.h"
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
    if (scenario::SpoilsStream(fault) &&
        (first == nullptr || fault.after_event < first->after_event))
      first = &fault;
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
// one (docs/failure-taxonomy.md): overloaded at any status (Bedrock says it as "too many
// connections"), a context window on 400/413/422, a
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
  const bool refinable = says({"overload", "too many connections"}) ||
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

// `stream_media` may carry parameters ("; charset=utf-8"): its media type is what must appear.
bool HasContentType(std::string_view type, bool stream, std::string_view stream_media) {
  const std::string_view media = stream_media.substr(0, stream_media.find(';'));
  return type.find(stream ? media : "json") != std::string_view::npos;
}

// More than any response head the provider writes.
constexpr std::size_t kLongestHead = 64 * 1024;

// The bytes the plan sends, as far as a hint may be found in them.
std::string WireText(const std::vector<PlanStep>& steps) {
  std::string text;
  for (const PlanStep& step : steps) {
    if (step.kind == PlanStep::Kind::kSend) text += step.bytes;
    if (text.size() > kLongestHead + kHintBodyBytes) break;
  }
  return text;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

bool HintHeader(std::string_view name) {
  return name == "retry-after" || name == "retry-after-ms" || name == "date" ||
         name.starts_with("x-ratelimit-") || name.starts_with("anthropic-ratelimit-");
}

std::string_view TrimSpace(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// A recorded JSON answer: the reference decoder's reading of the body as it went out.
void CassetteBodyTruth(const CassetteOutcome& outcome, scenario::Dialect dialect,
                       PlanTruth& truth) {
  if (!outcome.whole || !outcome.clean_end) {
    SetClass(truth, {outcome.clean_end ? "protocol" : "transport", true});
    return;
  }
  ref::DialectDecoder decoder(RefDialect(dialect));
  std::vector<ref::Delta> deltas;
  if (!decoder.DecodeBody(outcome.body, deltas)) {
    SetClass(truth, {"protocol", true});
    return;
  }
  std::string text;
  std::string arguments;
  bool call = false;
  bool error = false;
  for (const ref::Delta& delta : deltas) {
    if (const auto* piece = std::get_if<ref::TextDelta>(&delta)) text += piece->text;
    if (const auto* piece = std::get_if<ref::ToolCallDelta>(&delta)) {
      arguments += piece->arguments;
      call = true;
    }
    error = error || std::holds_alternative<ref::ProviderErrorDelta>(delta);
  }
  truth.answer = text;
  truth.tool_arguments = arguments;
  if (error) {
    SetClass(truth, {"", false});
  } else if (text.empty() && !call) {
    SetClass(truth, {"empty", true});
  }
}

}  // namespace

std::vector<HintField> HintFieldsOf(int status, const std::vector<PlanStep>& steps) {
  std::vector<HintField> fields;
  if (status < 300) return fields;  // a client reads hints from an error, never from an answer
  const std::string wire = WireText(steps);
  const std::size_t head_end = wire.find("\r\n\r\n");
  if (head_end == std::string::npos) return fields;
  const std::string_view head = std::string_view(wire).substr(0, head_end);
  // The status line first, then one field per line.
  for (std::size_t at = head.find("\r\n"); at != std::string_view::npos;) {
    const std::size_t from = at + 2;
    at = head.find("\r\n", from);
    const std::string_view line = head.substr(from, at == std::string_view::npos ? at : at - from);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name = Lower(TrimSpace(line.substr(0, colon)));
    if (HintHeader(name)) {
      fields.push_back({std::move(name), std::string(TrimSpace(line.substr(colon + 1)))});
    }
  }
  fields.push_back({"body", wire.substr(head_end + 4, kHintBodyBytes)});
  return fields;
}

PlanTruth EntryTruth(const scenario::ResponseSpec& spec, const BodyProgram& program, bool stream,
                     std::string_view content_type, bool stream_requested,
                     std::string_view stream_media) {
  PlanTruth truth;
  if (spec.connection != scenario::ConnectionFault::kNone) {
    SetClass(truth, {"transport", true});
  } else if (spec.headers_stall && spec.headers_stall->forever) {
    SetClass(truth, {"timeout", true});
  } else if (spec.status < 200 || spec.status > 299) {
    SetClass(truth, spec.body ? VerbatimErrorClass(spec.status, *spec.body)
                              : ClassOfError(spec.error.value_or(scenario::ErrorSpec{}).kind));
  } else if (!HasContentType(content_type, stream || stream_requested, stream_media)) {
    SetClass(truth, {"protocol", true});  // whatever the body: the wrong kind of answer
    truth.failure_in_head = true;
  } else if (spec.body) {
    // A verbatim stream promises nothing; a verbatim JSON answer only that it is JSON.
    SetClass(truth, HasContentType(content_type, true, stream_media)
                        ? ClassOf{"", false}
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
      truth.events_before_failure = !truth.failure_class.empty() && sent > 0;
      truth.error_event = fault != nullptr && (fault->kind == EventFault::Kind::kErrorEnvelope ||
                                               fault->kind == EventFault::Kind::kProviderError);
    }
  }
  truth.retryable_ignoring_header = truth.retryable;
  if (spec.should_retry && !truth.failure_class.empty()) {
    truth.retryable = *spec.should_retry;
    truth.should_retry = spec.should_retry;
  }
  return truth;
}

// A cassette's truth is what its bytes say, decoded as the reference client decodes them (the
// recording has no scenario entry to derive it from); the classes are the taxonomy's, as above.
PlanTruth CassetteTruth(const CassetteOutcome& outcome, std::string_view stream_media,
                        scenario::Dialect dialect) {
  PlanTruth truth;
  if (outcome.status < 200 || outcome.status > 299) {
    SetClass(truth, VerbatimErrorClass(outcome.status, outcome.body));
  } else if (!HasContentType(outcome.content_type, outcome.stream || outcome.stream_requested,
                             stream_media)) {
    SetClass(truth, {"protocol", true});
    truth.failure_in_head = true;
  } else if (!outcome.stream) {
    CassetteBodyTruth(outcome, dialect, truth);
  } else {
    truth.answer = outcome.text;
    truth.tool_arguments = outcome.tool_arguments;
    if (outcome.malformed) {
      SetClass(truth, {"protocol", true});
    } else if (outcome.error_event || outcome.raw_injected) {
      SetClass(truth, {"", false});  // the provider's own words, or anything: no promise
    } else if (outcome.stalled_forever) {
      SetClass(truth, {"timeout", true});
    } else if (!outcome.terminal_sent) {
      SetClass(truth, {outcome.clean_end ? "truncated" : "transport", true});
    } else if (outcome.text.empty() && !outcome.tool_call) {
      SetClass(truth, {"empty", true});
    }
    truth.streamed = true;
    const bool failed = !truth.answer.has_value();
    truth.output_before_failure = failed && outcome.output_sent;
    truth.events_before_failure = failed && outcome.events_sent;
    truth.error_event = outcome.error_event;
    truth.output_from = outcome.first_output;
    truth.events_from = outcome.first_event;
  }
  truth.retryable_ignoring_header = truth.retryable;
  return truth;
}

PlanTruth ErrorTruth(ErrorKind kind) {
  PlanTruth truth;
  SetClass(truth, ClassOfError(kind));
  truth.retryable_ignoring_header = truth.retryable;
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
