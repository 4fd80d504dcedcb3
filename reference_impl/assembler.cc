#include "reference_impl/assembler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <utility>

#include "reference_impl/stream_error_class.h"

namespace faultline::ref {
namespace {

std::string_view TerminatorOf(Dialect dialect) {
  switch (dialect) {
    case Dialect::kOpenAiChat:
      return "data: [DONE]";
    case Dialect::kAnthropicMessages:
      return "message_stop";
    case Dialect::kOpenAiResponses:
      return "response.completed";
    case Dialect::kGemini:
      return "a chunk with finishReason";
    case Dialect::kOllama:
      return "a line with \"done\": true";
    case Dialect::kBedrockConverse:
      return "messageStop";
  }
  return "the terminator";
}

// The finish reasons that say the provider withheld the answer: OpenAI's and Anthropic's,
// Gemini's (a finishReason, or a prompt's blockReason) and Bedrock's stopReason.
bool IsContentFilterFinish(std::string_view reason) {
  static constexpr std::string_view kWithheld[] = {
      "content_filter",     "refusal", "SAFETY",       "RECITATION",           "BLOCKLIST",
      "PROHIBITED_CONTENT", "SPII",    "IMAGE_SAFETY", "guardrail_intervened", "content_filtered"};
  return std::ranges::find(kWithheld, reason) != std::end(kWithheld);
}

std::string DescribeProviderError(const ProviderErrorDelta& error) {
  std::string label = error.type;
  if (!error.code.empty()) label += label.empty() ? error.code : "/" + error.code;
  if (label.empty()) label = "unclassified";
  return fmt::format("in-stream provider error ({}): {}", label, error.message);
}

}  // namespace

void AttemptAssembler::SetResponseInfo(int status, std::optional<std::string> request_id) {
  status_ = status;
  request_id_ = std::move(request_id);
}

const std::optional<AttemptOutcome>& AttemptAssembler::Add(std::span<const Delta> deltas) {
  for (const Delta& delta : deltas) {
    if (outcome_) break;
    Apply(delta);
  }
  return outcome_;
}

const std::optional<AttemptOutcome>& AttemptAssembler::Add(const Delta& delta) {
  return Add(std::span<const Delta>(&delta, 1));
}

void AttemptAssembler::Apply(const Delta& delta) {
  if (const auto* text = std::get_if<TextDelta>(&delta)) {
    text_ += text->text;
  } else if (const auto* reasoning = std::get_if<ReasoningDelta>(&delta)) {
    reasoning_ += reasoning->text;
  } else if (const auto* refusal = std::get_if<RefusalDelta>(&delta)) {
    refusal_ += refusal->text;
  } else if (const auto* call = std::get_if<ToolCallDelta>(&delta)) {
    ApplyToolCall(*call);
  } else if (const auto* finish = std::get_if<FinishDelta>(&delta)) {
    finish_reason_ = finish->reason;
    finish_seen_ = true;
  } else if (const auto* usage = std::get_if<UsageDelta>(&delta)) {
    if (usage->input_tokens) usage_.input_tokens = usage->input_tokens;
    if (usage->output_tokens) usage_.output_tokens = usage->output_tokens;
  } else if (const auto* terminal = std::get_if<TerminalDelta>(&delta)) {
    Finalize(terminal->marker);
  } else if (const auto* error = std::get_if<ProviderErrorDelta>(&delta)) {
    const ProviderErrorClass kind =
        ClassifyStreamError(dialect_, error->type, error->code, error->message)
            .value_or(ProviderErrorClass{});
    Failure failure = MakeFailure(kind.code, kind.failure_class, Phase::kStream, kind.retryable,
                                  DescribeProviderError(*error));
    failure.error_event = true;
    Decide(std::move(failure));
  }
}

void AttemptAssembler::ApplyToolCall(const ToolCallDelta& delta) {
  auto it = std::ranges::find(calls_, delta.index, &PendingCall::index);
  if (it == calls_.end()) {
    calls_.push_back(PendingCall{delta.index, {}});
    it = calls_.end() - 1;
  }
  ToolCall& call = it->call;
  if (call.id.empty()) call.id = delta.id;
  if (call.name.empty()) call.name = delta.name;
  call.arguments += delta.arguments;
}

void AttemptAssembler::Finalize(TerminalMarker marker) {
  if (IsContentFilterFinish(finish_reason_) || (!refusal_.empty() && !has_output())) {
    Decide(MakeFailure(FailureCode::kContentFilter, FailureClass::kSafety, Phase::kFinish, false,
                       fmt::format("the provider refused (finish reason `{}`){}", finish_reason_,
                                   refusal_.empty() ? "" : ": " + refusal_)));
    return;
  }
  if (!has_output()) {
    Decide(MakeFailure(FailureCode::kEmptyResponse, FailureClass::kEmpty, Phase::kFinish, true,
                       fmt::format("{} arrived with no text and no tool call", ToString(marker))));
    return;
  }
  Completed done{text_, reasoning_, {}, finish_reason_, usage_, marker};
  for (const PendingCall& pending : calls_) {
    ToolCall call = pending.call;
    if (call.arguments.empty()) call.arguments = "{}";
    if (call.name.empty() || !nlohmann::json::accept(call.arguments)) {
      Decide(MakeFailure(FailureCode::kMalformedResponse, FailureClass::kProtocol, Phase::kFinish,
                         true,
                         fmt::format("tool call {} (`{}`) has no name or incomplete JSON arguments",
                                     pending.index, call.name)));
      return;
    }
    done.tool_calls.push_back(std::move(call));
  }
  Decide(std::move(done));
}

const AttemptOutcome& AttemptAssembler::FailProtocol(std::string message) {
  if (outcome_) return *outcome_;
  return Decide(MakeFailure(FailureCode::kMalformedResponse, FailureClass::kProtocol,
                            Phase::kStream, true, std::move(message)));
}

const AttemptOutcome& AttemptAssembler::Interrupt(Failure failure) {
  if (outcome_) return *outcome_;
  if (failure.partial_output == PartialOutput::kNone && has_output()) {
    failure.partial_output = PartialOutput::kUncommitted;
  }
  if (!failure.status) failure.status = status_;
  if (!failure.request_id) failure.request_id = request_id_;
  failure.streamed =
      streamed_ && (failure.phase == Phase::kStream || failure.phase == Phase::kFinish);
  failure.stream_events = events_;
  return Decide(std::move(failure));
}

const AttemptOutcome& AttemptAssembler::EndOfBody() {
  if (outcome_) return *outcome_;
  return Decide(
      MakeFailure(FailureCode::kStreamTruncated, FailureClass::kTruncated,
                  finish_seen_ ? Phase::kFinish : Phase::kStream, true,
                  fmt::format("the response ended cleanly without {} ({} text bytes uncommitted)",
                              TerminatorOf(dialect_), text_.size())));
}

const AttemptOutcome& AttemptAssembler::Decide(AttemptOutcome outcome) {
  outcome_ = std::move(outcome);
  return *outcome_;
}

Failure AttemptAssembler::MakeFailure(FailureCode code, FailureClass failure_class, Phase phase,
                                      bool retryable, std::string message) const {
  Failure failure;
  failure.code = code;
  failure.failure_class = failure_class;
  failure.phase = phase;
  failure.retryable = retryable;
  failure.partial_output = has_output() ? PartialOutput::kUncommitted : PartialOutput::kNone;
  failure.streamed = streamed_;
  failure.stream_events = events_;
  failure.status = status_;
  failure.request_id = request_id_;
  failure.message = std::move(message);
  return failure;
}

WastedWork AttemptAssembler::wasted() const {
  if (completed()) return {};
  std::uint64_t output_bytes = text_.size() + reasoning_.size() + refusal_.size();
  for (const PendingCall& pending : calls_) output_bytes += pending.call.arguments.size();
  const std::uint64_t tokens = usage_.output_tokens && *usage_.output_tokens > 0
                                   ? static_cast<std::uint64_t>(*usage_.output_tokens)
                                   : (output_bytes + 3) / 4;
  return WastedWork{bytes_, tokens};
}

std::optional<Failure> CheckContentType(bool stream, std::optional<std::string_view> content_type,
                                        Dialect dialect) {
  if (!content_type) return std::nullopt;
  std::string media(content_type->substr(0, content_type->find(';')));
  std::erase_if(media, [](unsigned char c) { return std::isspace(c) != 0; });
  std::ranges::transform(media, media.begin(), [](unsigned char c) { return std::tolower(c); });
  const std::string_view stream_media = StreamMediaType(dialect);
  const bool ok =
      stream ? media == stream_media : media == "application/json" || media.ends_with("+json");
  if (ok) return std::nullopt;
  Failure failure;
  failure.code = FailureCode::kMalformedResponse;
  failure.failure_class = FailureClass::kProtocol;
  failure.phase = Phase::kResponseHeaders;
  failure.retryable = true;
  failure.message = fmt::format("expected {} but the response is `{}`",
                                stream ? stream_media : "application/json", *content_type);
  return failure;
}

}  // namespace faultline::ref
