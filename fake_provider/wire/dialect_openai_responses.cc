// The OpenAI Responses writer (POST /v1/responses).
//
// A stream is: response.created, response.in_progress, then one output item per kind of output in
// order reasoning (summary part, reasoning_summary_text deltas), message (content part,
// output_text deltas), function_call (function_call_arguments deltas), each opened by
// response.output_item.added and closed by response.output_item.done; and the terminator
// response.completed carrying the whole response with its usage. A scenario finish_reason other
// than a normal stop ("max_output_tokens", "content_filter") ends with response.incomplete and
// that reason instead. Every event is named and its data carries "type" and a "sequence_number"
// that counts up from 0; Sequencer applies gap faults and keeps numbers free for injected errors.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/wire/dialect.h"
#include "fake_provider/wire/dialect_internal.h"
#include "scenarios/scenario.h"

namespace faultline::provider::dialect_internal {
namespace {

using scenario::ErrorKind;
using scenario::EventFault;

constexpr std::string_view kResponsesDefaultModel = "gpt-4o-mini";
constexpr OpenAiErrorWords kResponsesErrorWords{kResponsesDefaultModel, kResponsesContextMessage,
                                                "input"};

// Sequence numbers of a stream with its content faults applied.
class Sequencer {
 public:
  explicit Sequencer(const scenario::Content& content) : faults_(content.faults) {}

  // The number of events[index]: one more for every gap and reserved error at or before it.
  int ForEvent(std::size_t index) const {
    int shift = 0;
    for (const EventFault& fault : faults_) {
      if (Shifts(fault) && Position(fault) <= index) ++shift;
    }
    return static_cast<int>(index) + shift;
  }

  // The number kept free for the provider error of faults[fault_index], injected after
  // `after_event` events: gaps at that position apply to it, as does every earlier error.
  int ForError(std::size_t fault_index) const {
    const std::size_t position = Position(faults_[fault_index]);
    int shift = 0;
    for (std::size_t i = 0; i < faults_.size(); ++i) {
      const EventFault& fault = faults_[i];
      const bool gap_here =
          fault.kind == EventFault::Kind::kSequenceGap && Position(fault) <= position;
      const bool error_before =
          fault.kind == EventFault::Kind::kProviderError &&
          (Position(fault) < position || (Position(fault) == position && i < fault_index));
      if (gap_here || error_before) ++shift;
    }
    return static_cast<int>(position) + shift;
  }

 private:
  static bool Shifts(const EventFault& fault) {
    return fault.kind == EventFault::Kind::kSequenceGap ||
           fault.kind == EventFault::Kind::kProviderError;
  }
  static std::size_t Position(const EventFault& fault) {
    return static_cast<std::size_t>(std::max(0, fault.after_event));
  }
  const std::vector<EventFault>& faults_;
};

std::string Suffix(const ResponseIds& ids) { return ids.item_id.substr(4); }  // after "msg_"
std::string ReasoningId(const ResponseIds& ids) { return "rs_" + Suffix(ids); }
std::string FunctionCallId(const ResponseIds& ids) { return "fc_" + Suffix(ids); }
std::string CallId(const ResponseIds& ids) { return "call_" + Suffix(ids); }

// The terminal status and, when incomplete, the reason, from the scenario's finish_reason.
struct Finish {
  std::string status = "completed";
  std::string reason;
};

Finish FinishOf(const scenario::Content& content) {
  static constexpr std::string_view kNormal[] = {"stop", "completed", "tool_calls", "end_turn",
                                                 "tool_use"};
  if (!content.finish_reason ||
      std::ranges::find(kNormal, *content.finish_reason) != std::end(kNormal)) {
    return {};
  }
  return {"incomplete", *content.finish_reason};
}

Json ResponsesUsage(const Usage& usage, const scenario::Content& content) {
  const int reasoning = std::min(EstimateTokens(content.reasoning), usage.output_tokens);
  return Json::object({{"input_tokens", usage.input_tokens},
                       {"input_tokens_details", {{"cached_tokens", 0}}},
                       {"output_tokens", usage.output_tokens},
                       {"output_tokens_details", {{"reasoning_tokens", reasoning}}},
                       {"total_tokens", usage.input_tokens + usage.output_tokens}});
}

// The response object of response.* events and of the JSON body.
Json ResponseObject(const ResponseIds& ids, std::string_view status, Json output, Json usage) {
  return Json::object({{"id", ids.response_id},
                       {"object", "response"},
                       {"created_at", ids.created},
                       {"status", status},
                       {"error", nullptr},
                       {"incomplete_details", nullptr},
                       {"instructions", nullptr},
                       {"max_output_tokens", nullptr},
                       {"model", ids.model},
                       {"output", std::move(output)},
                       {"parallel_tool_calls", true},
                       {"previous_response_id", nullptr},
                       {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
                       {"store", true},
                       {"temperature", 1.0},
                       {"text", {{"format", {{"type", "text"}}}}},
                       {"tool_choice", "auto"},
                       {"tools", Json::array()},
                       {"top_p", 1.0},
                       {"truncation", "disabled"},
                       {"usage", std::move(usage)},
                       {"user", nullptr},
                       {"metadata", Json::object()}});
}

Json SummaryPart(std::string_view text) {
  return Json::object({{"type", "summary_text"}, {"text", text}});
}

Json TextPart(std::string_view text) {
  return Json::object({{"type", "output_text"},
                       {"annotations", Json::array()},
                       {"logprobs", Json::array()},
                       {"text", text}});
}

Json ReasoningItem(const ResponseIds& ids, Json summary) {
  return Json::object(
      {{"id", ReasoningId(ids)}, {"type", "reasoning"}, {"summary", std::move(summary)}});
}

Json MessageItem(const ResponseIds& ids, std::string_view status, Json content) {
  return Json::object({{"id", ids.item_id},
                       {"type", "message"},
                       {"status", status},
                       {"content", std::move(content)},
                       {"role", "assistant"}});
}

Json FunctionCallItem(const ResponseIds& ids, const scenario::ToolCallSpec& call,
                      std::string_view status, std::string_view arguments) {
  return Json::object({{"id", FunctionCallId(ids)},
                       {"type", "function_call"},
                       {"status", status},
                       {"arguments", arguments},
                       {"call_id", CallId(ids)},
                       {"name", call.name}});
}

// The finished output items, as response.completed and the JSON body list them.
Json FinalOutput(const scenario::Content& content, const ResponseIds& ids) {
  Json output = Json::array();
  if (!content.reasoning.empty()) {
    output.push_back(ReasoningItem(ids, Json::array({SummaryPart(content.reasoning)})));
  }
  if (!content.text.empty()) {
    output.push_back(MessageItem(ids, "completed", Json::array({TextPart(content.text)})));
  }
  if (content.tool_call) {
    output.push_back(
        FunctionCallItem(ids, *content.tool_call, "completed", content.tool_call->arguments));
  }
  return output;
}

Json FinalResponse(const scenario::Content& content, const ResponseIds& ids, const Usage& usage) {
  const Finish finish = FinishOf(content);
  Json response =
      ResponseObject(ids, finish.status, FinalOutput(content, ids), ResponsesUsage(usage, content));
  if (!finish.reason.empty()) response["incomplete_details"] = {{"reason", finish.reason}};
  return response;
}

// Builds the event list, numbering each event as it is added.
class StreamBuilder {
 public:
  StreamBuilder(const scenario::Content& content, const ResponseIds& ids)
      : content_(content), ids_(ids), sequencer_(content) {}

  StreamEvents Build(const Usage& usage) {
    Json starting = ResponseObject(ids_, "in_progress", Json::array(), nullptr);
    Emit("response.created", {{"response", starting}});
    Emit("response.in_progress", {{"response", starting}});
    int output_index = 0;
    if (!content_.reasoning.empty()) AddReasoning(output_index++);
    if (!content_.text.empty()) AddMessage(output_index++);
    if (content_.tool_call) AddFunctionCall(output_index++);
    const bool incomplete = FinishOf(content_).status == "incomplete";
    // Skipped before the terminator is numbered, so that its number follows the last event sent.
    out_.terminator = out_.events.size();
    SkipToTerminator(content_.end, out_);
    Emit(incomplete ? "response.incomplete" : "response.completed",
         {{"response", FinalResponse(content_, ids_, usage)}});
    return std::move(out_);
  }

 private:
  // The next event is the first one that shows output, unless one already did.
  void MarkOutput() {
    if (!out_.first_output) out_.first_output = out_.events.size();
  }

  void Emit(std::string_view type, const Json& fields) {
    Json data = Json::object({{"type", type}});
    for (const auto& [key, value] : fields.items()) data[key] = value;
    data["sequence_number"] = sequencer_.ForEvent(out_.events.size());
    out_.events.push_back({std::string(type), Dump(data)});
  }

  void AddReasoning(int output_index) {
    const std::string item_id = ReasoningId(ids_);
    const Json where = {{"item_id", item_id}, {"output_index", output_index}, {"summary_index", 0}};
    Emit("response.output_item.added",
         {{"output_index", output_index}, {"item", ReasoningItem(ids_, Json::array())}});
    Emit("response.reasoning_summary_part.added", With(where, "part", SummaryPart("")));
    for (const std::string& piece : SplitCodePoints(content_.reasoning, content_.chunk_size)) {
      Emit("response.reasoning_summary_text.delta", With(where, "delta", piece));
    }
    Emit("response.reasoning_summary_text.done", With(where, "text", content_.reasoning));
    Emit("response.reasoning_summary_part.done",
         With(where, "part", SummaryPart(content_.reasoning)));
    Emit("response.output_item.done",
         {{"output_index", output_index},
          {"item", ReasoningItem(ids_, Json::array({SummaryPart(content_.reasoning)}))}});
  }

  void AddMessage(int output_index) {
    const Json where = {
        {"item_id", ids_.item_id}, {"output_index", output_index}, {"content_index", 0}};
    Emit("response.output_item.added", {{"output_index", output_index},
                                        {"item", MessageItem(ids_, "in_progress", Json::array())}});
    Emit("response.content_part.added", With(where, "part", TextPart("")));
    MarkOutput();
    for (const std::string& piece : SplitCodePoints(content_.text, content_.chunk_size)) {
      Json fields = With(where, "delta", piece);
      fields["logprobs"] = Json::array();
      Emit("response.output_text.delta", fields);
    }
    Json done = With(where, "text", content_.text);
    done["logprobs"] = Json::array();
    Emit("response.output_text.done", done);
    Emit("response.content_part.done", With(where, "part", TextPart(content_.text)));
    Emit("response.output_item.done",
         {{"output_index", output_index},
          {"item", MessageItem(ids_, "completed", Json::array({TextPart(content_.text)}))}});
  }

  void AddFunctionCall(int output_index) {
    const scenario::ToolCallSpec& call = *content_.tool_call;
    const Json where = {{"item_id", FunctionCallId(ids_)}, {"output_index", output_index}};
    MarkOutput();
    Emit("response.output_item.added", {{"output_index", output_index},
                                        {"item", FunctionCallItem(ids_, call, "in_progress", "")}});
    for (const std::string& piece : SplitBytes(call.arguments, call.chunk_size)) {
      Emit("response.function_call_arguments.delta", With(where, "delta", piece));
    }
    Json done = With(where, "name", call.name);
    done["arguments"] = call.arguments;
    Emit("response.function_call_arguments.done", done);
    Emit("response.output_item.done",
         {{"output_index", output_index},
          {"item", FunctionCallItem(ids_, call, "completed", call.arguments)}});
  }

  static Json With(Json fields, std::string_view key, Json value) {
    fields[std::string(key)] = std::move(value);
    return fields;
  }

  const scenario::Content& content_;
  const ResponseIds& ids_;
  Sequencer sequencer_;
  StreamEvents out_;
};

// The `code` of a failed response's error (the API's ResponseError codes where one fits).
std::string_view FailedCode(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kRateLimit:
      return "rate_limit_exceeded";
    case ErrorKind::kQuota:
      return "insufficient_quota";
    case ErrorKind::kContextWindow:
      return "context_length_exceeded";
    case ErrorKind::kInvalidRequest:
    case ErrorKind::kUnprocessable:
      return "invalid_prompt";
    default:
      return "server_error";
  }
}

SseEvent ErrorEvent(const scenario::ErrorSpec& error, EventFault::Shape shape,
                    const ResponseIds& ids, int sequence_number) {
  const Json object = OpenAiErrorObject(error, kResponsesErrorWords);
  // Error events always carry a string code; errors without one use their type.
  const Json& code = object["code"].is_string() ? object["code"] : object["type"];
  Json data;
  if (shape == EventFault::Shape::kFlat) {
    data = Json::object({{"type", "error"},
                         {"code", code},
                         {"message", object["message"]},
                         {"param", object["param"]}});
  } else if (shape == EventFault::Shape::kNested) {
    Json nested = Json::object({{"type", object["type"]},
                                {"code", code},
                                {"message", object["message"]},
                                {"param", object["param"]}});
    data = Json::object({{"type", "error"}, {"error", std::move(nested)}});
  } else {
    Json response = ResponseObject(ids, "failed", Json::array(), nullptr);
    response["error"] = {{"code", FailedCode(error.kind)}, {"message", object["message"]}};
    data = Json::object({{"type", "response.failed"}, {"response", std::move(response)}});
  }
  data["sequence_number"] = sequence_number;
  return {data["type"].get<std::string>(), Dump(data)};
}

class ResponsesWriter final : public DialectWriter {
 public:
  scenario::Dialect dialect() const override { return scenario::Dialect::kOpenAiResponses; }
  std::string_view endpoint_path() const override { return "/v1/responses"; }
  std::string_view default_model() const override { return kResponsesDefaultModel; }
  std::string_view request_id_header() const override { return "x-request-id"; }

  // Like the real ids, the response and its message item end with the same 16 hex digits.
  ResponseIds MakeIds(std::uint64_t seed, int attempt, WallTime now,
                      std::string_view model) const override {
    IdSource source(seed, attempt, now, "openai-responses");
    const std::string shared = source.Hex(16);
    ResponseIds ids;
    ids.response_id = "resp_" + source.Hex(32) + shared;
    ids.item_id = "msg_" + source.Hex(32) + shared;
    ids.request_id = "req_" + source.Hex(32);
    ids.created = CreatedSeconds(now);
    ids.model = std::string(model.empty() ? kResponsesDefaultModel : model);
    return ids;
  }

  StreamEvents Stream(const scenario::Content& content, const ResponseIds& ids,
                      const Usage& usage) const override {
    return StreamBuilder(content, ids).Build(usage);
  }

  Body Json(const scenario::Content& content, const ResponseIds& ids,
            const Usage& usage) const override {
    return {"application/json", Dump(FinalResponse(content, ids, usage))};
  }

  Body Error(const scenario::ErrorSpec& error, int /*status*/) const override {
    return OpenAiErrorBody(error, kResponsesErrorWords);
  }

  // Without the stream to fit into, the event is numbered 0.
  SseEvent StreamError(const scenario::ErrorSpec& error, EventFault::Shape shape,
                       const ResponseIds& ids) const override {
    return ErrorEvent(error, shape, ids, 0);
  }

  SseEvent StreamErrorFor(const scenario::Content& content, std::size_t fault_index,
                          const ResponseIds& ids) const override {
    const EventFault& fault = content.faults.at(fault_index);
    if (fault.kind != EventFault::Kind::kProviderError) {
      return DialectWriter::StreamErrorFor(content, fault_index, ids);
    }
    return ErrorEvent(fault.error, fault.shape, ids, Sequencer(content).ForError(fault_index));
  }

  SseEvent WrongShape() const override {
    return {"response.output_text.delta",
            R"({"type":"response.output_text.delta","delta":{"text":"oops"}})"};
  }

  SseEvent Ping() const override { return {"", ""}; }

  void AppendRateLimitHeaders(const scenario::RateLimitHeaders& limits, WallTime /*now*/,
                              std::vector<scenario::Header>& out) const override {
    AppendOpenAiRateLimitHeaders(limits, out);
  }
};

}  // namespace

const DialectWriter& OpenAiResponsesWriter() {
  static const ResponsesWriter writer;
  return writer;
}

}  // namespace faultline::provider::dialect_internal
