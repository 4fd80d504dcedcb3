// bedrock-converse: ConverseStream messages (event_stream_decoder.h hands each over as an event
// named by its :event-type) and Converse bodies.
//
//   messageStart       {"role":"assistant"}
//   contentBlockStart  {"contentBlockIndex":1,"start":{"toolUse":{"toolUseId","name"}}}
//   contentBlockDelta  {"contentBlockIndex":0,"delta":{"text":"Hel"}} | {"reasoningContent":
//                      {"text"}} | {"toolUse":{"input":"{\"ci"}}}
//   contentBlockStop   {"contentBlockIndex":0}
//   messageStop        {"stopReason":"end_turn"}
//   metadata           {"usage":{"inputTokens","outputTokens","totalTokens"},"metrics":{…}}
//
// messageStop ends the answer (TerminalMarker::kMessageStopEvent): a stream that ends before it
// was cut; metadata after it only reports usage. A tool call's index is its content block's
// index; its id and name come with contentBlockStart, its arguments as JSON text pieces. Payloads
// carry a padding field "p", ignored like any unknown field; unknown events are ignored, as the
// AWS SDKs do for members added to the stream's union later.
//
// Errors inside the stream are exception messages ("exception:throttlingException", payload
// {"message":…}) or, rarely, error messages ("error:<code>", the message as data): their type
// (or code) is the error's type, in the stream's lower camel case.
#include "reference_impl/dialect_decoder_internal.h"
#include "reference_impl/event_stream_decoder.h"

namespace faultline::ref::internal {
namespace {

int BlockIndex(const Json& payload) {
  const std::int64_t index = RequireInt(payload, "contentBlockIndex");
  if (index < 0 || index > kMaxBedrockBlockIndex)
    throw ShapeError{"`contentBlockIndex` is out of range"};
  return static_cast<int>(index);
}

void AppendDelta(const Json& payload, std::vector<Delta>& out) {
  const int index = BlockIndex(payload);
  const Json& delta = RequireObject(payload, "delta");
  if (const Json* text = Member(delta, "text")) {
    if (!text->is_string()) throw ShapeError{"`delta.text` must be a string"};
    if (!text->get_ref<const std::string&>().empty())
      out.push_back(TextDelta{text->get<std::string>()});
  } else if (const Json* reasoning = Member(delta, "reasoningContent")) {
    if (!reasoning->is_object()) throw ShapeError{"`reasoningContent` must be an object"};
    if (auto text = OptString(*reasoning, "text"); !text.empty()) {
      out.push_back(ReasoningDelta{std::string(text)});
    }
  } else if (const Json* tool = Member(delta, "toolUse")) {
    if (!tool->is_object()) throw ShapeError{"`delta.toolUse` must be an object"};
    ToolCallDelta call;
    call.index = index;
    call.arguments = RequireString(*tool, "input");
    out.push_back(std::move(call));
  }
}

void AppendBedrockUsage(const Json& payload, std::vector<Delta>& out) {
  const Json* usage = Member(payload, "usage");
  if (usage == nullptr) return;
  if (!usage->is_object()) throw ShapeError{"`usage` must be an object"};
  out.push_back(UsageDelta{OptInt(*usage, "inputTokens"), OptInt(*usage, "outputTokens")});
}

void AppendBlock(const Json& block, int index, std::vector<Delta>& out) {
  if (!block.is_object()) throw ShapeError{"every content block must be an object"};
  if (auto text = OptString(block, "text"); !text.empty()) {
    out.push_back(TextDelta{std::string(text)});
  } else if (const Json* reasoning = Member(block, "reasoningContent")) {
    if (!reasoning->is_object()) throw ShapeError{"`reasoningContent` must be an object"};
    if (const Json* text = Member(*reasoning, "reasoningText")) {
      if (!text->is_object()) throw ShapeError{"`reasoningText` must be an object"};
      if (auto words = OptString(*text, "text"); !words.empty()) {
        out.push_back(ReasoningDelta{std::string(words)});
      }
    }
  } else if (const Json* tool = Member(block, "toolUse")) {
    if (!tool->is_object()) throw ShapeError{"`toolUse` must be an object"};
    ToolCallDelta call;
    call.index = index;
    call.id = RequireString(*tool, "toolUseId");
    call.name = RequireString(*tool, "name");
    call.arguments = WholeCallArguments(Member(*tool, "input"));
    out.push_back(std::move(call));
  }
}

}  // namespace

EventWeight DecodeBedrockEvent(const SseEventView& event, std::vector<Delta>& out) {
  const std::string_view type = event.type;
  if (type.starts_with(kEventStreamExceptionPrefix)) {
    const Json payload = ParseObject(event.data, "the exception");
    out.push_back(ProviderErrorDelta{std::string(type.substr(kEventStreamExceptionPrefix.size())),
                                     "", std::string(OptString(payload, "message"))});
    return EventWeight::kMeaningful;
  }
  if (type.starts_with(kEventStreamErrorPrefix)) {
    out.push_back(ProviderErrorDelta{"", std::string(type.substr(kEventStreamErrorPrefix.size())),
                                     std::string(event.data)});
    return EventWeight::kMeaningful;
  }
  const Json payload = ParseObject(event.data, "the event");
  if (type == "contentBlockDelta") {
    AppendDelta(payload, out);
  } else if (type == "contentBlockStart") {
    const int index = BlockIndex(payload);
    const Json& start = RequireObject(payload, "start");
    if (const Json* tool = Member(start, "toolUse")) {
      if (!tool->is_object()) throw ShapeError{"`start.toolUse` must be an object"};
      ToolCallDelta call;
      call.index = index;
      call.id = RequireString(*tool, "toolUseId");
      call.name = RequireString(*tool, "name");
      out.push_back(std::move(call));
    }
  } else if (type == "contentBlockStop") {
    BlockIndex(payload);
  } else if (type == "messageStart") {
    RequireString(payload, "role");
  } else if (type == "messageStop") {
    out.push_back(FinishDelta{std::string(RequireString(payload, "stopReason"))});
    out.push_back(TerminalDelta{TerminalMarker::kMessageStopEvent});
  } else if (type == "metadata") {
    AppendBedrockUsage(payload, out);
  }
  return EventWeight::kMeaningful;
}

void DecodeBedrockBody(const Json& body, std::vector<Delta>& out) {
  const Json* output = Member(body, "output");
  if (output == nullptr) {
    // An error-shaped body on a 2xx ({"message":…}), as a gateway may send.
    if (auto message = OptString(body, "message"); !message.empty()) {
      out.push_back(
          ProviderErrorDelta{std::string(OptString(body, "__type")), "", std::string(message)});
      return;
    }
    throw ShapeError{"a Converse response needs `output`"};
  }
  if (!output->is_object()) throw ShapeError{"`output` must be an object"};
  const Json& message = RequireObject(*output, "message");
  const Json& content = RequireArray(message, "content");
  int index = 0;
  for (const Json& block : content) AppendBlock(block, index++, out);
  AppendBedrockUsage(body, out);
  out.push_back(FinishDelta{std::string(RequireString(body, "stopReason"))});
  out.push_back(TerminalDelta{TerminalMarker::kBody});
}

}  // namespace faultline::ref::internal
