// Reading a response's streamed content: text, tool call, framing, per-event faults, the end.
#include <algorithm>
#include <limits>
#include <vector>

#include "fmt/format.h"
#include "scenarios/loader_internal.h"
#include "scenarios/loader_keys.h"

namespace faultline::scenario::internal {
namespace {

std::optional<ToolCallSpec> ReadToolCall(Reader& reader, const Field& field) {
  if (field.node.IsScalar() && Classify(field.node) == ScalarType::kBool) {
    std::optional<bool> enabled = reader.ReadBool(field);
    if (enabled && *enabled) return ToolCallSpec{};
    return std::nullopt;
  }
  std::optional<Map> map = reader.ReadMap(field, keys::kToolCall);
  if (!map) return std::nullopt;
  ToolCallSpec tool_call;
  reader.Get(*map, "name", &tool_call.name);
  if (reader.ok() && tool_call.name.empty()) {
    reader.Fail(*map->Get("name"), "expected a tool name, got an empty string");
  }
  reader.Get(*map, "arguments", &tool_call.arguments);
  reader.Get(*map, "chunk_size", &tool_call.chunk_size, 1, kMaxInt);
  if (!reader.ok()) return std::nullopt;
  return tool_call;
}

void ReadDrip(Reader& reader, const Field& field, Content* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kDrip);
  if (!map) return;
  if (std::optional<Field> bytes = reader.Require(*map, "bytes")) {
    if (std::optional<std::int64_t> count = reader.ReadInt(*bytes, 1, kMaxInt)) {
      out->drip_bytes = static_cast<int>(*count);
    }
  }
  if (std::optional<Field> every = reader.Require(*map, "every")) {
    if (std::optional<Duration> period = reader.ReadDuration(*every, Sign::kNonNegative)) {
      out->drip_every = *period;
    }
  }
}

// How a dialect that does not stream Server-Sent Events streams instead, for error messages.
std::string_view NonSseStream(Dialect dialect) {
  return StreamFramingOf(dialect) == StreamFraming::kNdjson
             ? "streams one JSON object per line"
             : "streams length-prefixed binary messages (application/vnd.amazon.eventstream)";
}

void ReadFraming(Reader& reader, const Field& field, Dialect dialect, Framing* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFraming);
  if (!map) return;
  if (StreamFramingOf(dialect) != StreamFraming::kSse) {
    // NDJSON has one line per object and nothing else, an event stream length-prefixed binary
    // messages: no event lines, comments or BOM.
    for (std::string_view key : {"line_ending", "bom", "comments", "multiline_data"}) {
      RejectKey(reader, *map, key,
                fmt::format("'{}' shapes Server-Sent Events; {} {} (split_writes still applies)",
                            key, ToString(dialect), NonSseStream(dialect)));
    }
  }
  reader.GetEnum(*map, "line_ending", keys::kLineEndingNames, Framing::LineEnding::kLf,
                 &out->line_ending);
  reader.Get(*map, "bom", &out->bom);
  reader.Get(*map, "comments", &out->comments);
  reader.Get(*map, "multiline_data", &out->multiline_data);
  reader.Get(*map, "split_writes", &out->split_writes);
  reader.Get(*map, "split_utf8", &out->split_utf8);
  reader.Get(*map, "split_delay", &out->split_delay);
  if (!out->split_writes) {
    constexpr std::string_view kReason = "'{}' refines split writes; it needs 'split_writes: true'";
    RejectKey(reader, *map, "split_delay", fmt::format(kReason, "split_delay"));
    if (out->split_utf8) RejectKey(reader, *map, "split_utf8", fmt::format(kReason, "split_utf8"));
  }
}

std::optional<Heartbeat> ReadHeartbeat(Reader& reader, const Field& field, Dialect dialect) {
  std::optional<Map> map = reader.ReadMap(field, keys::kHeartbeat);
  if (!map) return std::nullopt;
  Heartbeat heartbeat;
  if (std::optional<Field> every = reader.Require(*map, "every")) {
    std::optional<Duration> period = reader.ReadDuration(*every, Sign::kNonNegative);
    if (period && period->count() == 0) {
      reader.Fail(*every, "expected a heartbeat period longer than 0");
    }
    if (period) heartbeat.every = *period;
  }
  if (StreamFramingOf(dialect) != StreamFraming::kSse) {
    reader.Fail(map->self(), fmt::format("{} {} and has no keep-alive of its own: a stall there "
                                         "is silence",
                                         ToString(dialect), NonSseStream(dialect)));
    return std::nullopt;
  }
  reader.GetEnum(*map, "style", keys::kHeartbeatStyleNames, Heartbeat::Style::kComment,
                 &heartbeat.style);
  if (reader.ok() && heartbeat.style == Heartbeat::Style::kPing &&
      dialect != Dialect::kAnthropicMessages) {
    reader.Fail(*map->Get("style"),
                fmt::format("'ping' events exist only in anthropic-messages; {} keeps streams "
                            "alive with 'comment'",
                            ToString(dialect)));
  }
  if (!reader.ok()) return std::nullopt;
  return heartbeat;
}

// The checks that depend on what is injected and on the dialect.
void CheckInjection(Reader& reader, const Map& map, Dialect dialect, const EventFault& fault) {
  const Field inject = *map.Get("inject");
  const bool responses = dialect == Dialect::kOpenAiResponses;
  if (fault.kind == EventFault::Kind::kSequenceGap && !responses) {
    reader.Fail(inject, fmt::format("sequence numbers exist only in openai-responses, not in {}",
                                    ToString(dialect)));
  } else if (fault.kind == EventFault::Kind::kProviderError && dialect == Dialect::kOpenAiChat) {
    reader.Fail(inject,
                "openai-chat has no in-stream error event of its own; use "
                "'inject: error_envelope'");
  } else if (fault.kind == EventFault::Kind::kErrorEnvelope &&
             StreamFramingOf(dialect) == StreamFraming::kEventStream) {
    // An event-stream message needs an event or exception type: an untyped {"error":...}
    // payload is not something Bedrock or a gateway in front of it can send.
    reader.Fail(inject, fmt::format("{} has no error envelope: its in-stream errors are "
                                    "exception messages; use 'inject: provider_error'",
                                    ToString(dialect)));
  }
  if (fault.kind != EventFault::Kind::kProviderError &&
      fault.kind != EventFault::Kind::kErrorEnvelope) {
    RejectKey(reader, map, "error", "'error' applies only to provider_error and error_envelope");
  }
  if (fault.kind != EventFault::Kind::kProviderError) {
    RejectKey(reader, map, "shape", "'shape' applies only to provider_error");
  } else if (!responses) {
    RejectKey(reader, map, "shape",
              "'shape' chooses among openai-responses error events; this scenario is " +
                  std::string(ToString(dialect)));
  }
}

void ReadFaultAction(Reader& reader, const Map& map, std::string_view action, Dialect dialect,
                     EventFault* out) {
  const Field value = *map.Get(action);
  if (action == "stall") {
    out->kind = EventFault::Kind::kStall;
    if (std::optional<Wait> wait = reader.ReadWait(value)) out->wait = *wait;
  } else if (action == "delay") {
    out->kind = EventFault::Kind::kDelay;
    if (std::optional<Duration> delay = reader.ReadDuration(value, Sign::kNonNegative)) {
      out->wait = Wait{*delay, false};
    }
  } else if (action == "raw") {
    out->kind = EventFault::Kind::kRaw;
    if (std::optional<std::string> raw = reader.ReadString(value)) out->raw = *raw;
  } else {
    reader.GetEnum(map, "inject", keys::kInjectNames, EventFault::Kind::kInvalidJson, &out->kind);
    if (reader.ok()) CheckInjection(reader, map, dialect, *out);
  }
  if (action != "stall") {
    RejectKey(reader, map, "heartbeat", "'heartbeat' applies only to a stall");
  }
}

// The one key among stall, delay, inject and raw that says what the fault does.
std::optional<std::string_view> FaultAction(Reader& reader, const Map& map) {
  std::optional<std::string_view> action;
  for (std::string_view key : {"stall", "delay", "inject", "raw"}) {
    if (!reader.ok() || !map.Has(key)) continue;
    if (action) {
      reader.Fail(*map.GetKey(key), fmt::format("'{}' and '{}' cannot be combined in one fault; "
                                                "write two faults",
                                                *action, key));
    }
    action = key;
  }
  if (reader.ok() && !action) {
    reader.Fail(map.self(), "a fault needs one of the keys stall, delay, inject or raw");
  }
  if (!reader.ok()) return std::nullopt;
  return action;
}

std::optional<EventFault> ReadFault(Reader& reader, const Field& field, Dialect dialect) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFault);
  if (!map) return std::nullopt;
  EventFault fault;
  if (std::optional<Field> after = reader.Require(*map, "after_event")) {
    if (std::optional<std::int64_t> count = reader.ReadInt(*after, 0, kMaxInt)) {
      fault.after_event = static_cast<int>(*count);
    }
  }
  std::optional<std::string_view> action = FaultAction(reader, *map);
  if (!action) return std::nullopt;
  ReadFaultAction(reader, *map, *action, dialect, &fault);
  if (std::optional<Field> heartbeat = reader.Present(*map, "heartbeat")) {
    if (std::optional<Heartbeat> value = ReadHeartbeat(reader, *heartbeat, dialect)) {
      fault.heartbeat = *value;
    }
  }
  if (std::optional<Field> error = reader.Present(*map, "error")) {
    if (std::optional<ErrorSpec> value = ReadError(reader, *error, dialect)) fault.error = *value;
    // Ollama's error line is a bare string: it names no kind, so only a server failure (what a
    // client must take it for) can be written truthfully.
    if (reader.ok() && dialect == Dialect::kOllama &&
        fault.kind == EventFault::Kind::kProviderError && fault.error.kind != ErrorKind::kServer) {
      reader.Fail(*error, fmt::format("ollama's in-stream error is a bare string that names no "
                                      "kind; it can only be 'error: server', not '{}'",
                                      ToString(fault.error.kind)));
    }
  }
  reader.GetEnum(*map, "shape", keys::kShapeNames, EventFault::Shape::kResponseFailed,
                 &fault.shape);
  if (!reader.ok()) return std::nullopt;
  return fault;
}

std::vector<EventFault> ReadFaults(Reader& reader, const Field& field, Dialect dialect) {
  std::vector<EventFault> faults;
  std::optional<std::vector<Field>> items = reader.ReadList(field);
  if (!items) return faults;
  for (const Field& item : *items) {
    std::optional<EventFault> fault = ReadFault(reader, item, dialect);
    if (!fault) break;
    faults.push_back(std::move(*fault));
  }
  return faults;
}

void CheckEndKeys(Reader& reader, const Map& map, Termination::Kind kind) {
  // A cut inside an event ends the connection there (close, reset), or ends the body cleanly
  // there (no_terminator: the bytes before the cut go out as a whole chunk, then the final one).
  const bool cuts = kind == Termination::Kind::kClose || kind == Termination::Kind::kReset ||
                    kind == Termination::Kind::kNoTerminator;
  if (!cuts) {
    RejectKey(reader, map, "at_byte",
              "'at_byte' cuts inside an event; it needs kind: close, reset or no_terminator");
  }
  if (kind != Termination::Kind::kStall) {
    RejectKey(reader, map, "wait", "'wait' applies only to kind: stall");
    RejectKey(reader, map, "heartbeat", "'heartbeat' applies only to kind: stall");
  }
}

// `kind: done` with `after_event` skips to the terminator after the cut: the shape of "an error
// envelope, then [DONE]". Without a spoiling fault at or before the cut the stream would only be a
// shorter answer, which `text` says better, and the truth would promise text never sent.
void CheckSkipToTerminator(Reader& reader, const Map& map, const Termination& end,
                           const std::vector<EventFault>& faults) {
  if (end.kind != Termination::Kind::kDone || !end.after_event) return;
  const int cut = *end.after_event;
  const bool spoiled = std::ranges::any_of(faults, [&](const EventFault& fault) {
    return fault.after_event <= cut && SpoilsStream(fault);
  });
  const bool beyond =
      std::ranges::any_of(faults, [&](const EventFault& fault) { return fault.after_event > cut; });
  if (spoiled && !beyond) return;
  std::optional<Field> after = reader.Present(map, "after_event");
  if (!after) return;
  if (beyond) {
    reader.Fail(*after, fmt::format("kind: done with after_event: {0} skips to the terminator "
                                    "after event {0}, so a fault after event {0} is never sent",
                                    cut));
  } else {
    reader.Fail(*after, fmt::format("kind: done with after_event: {0} skips to the terminator "
                                    "after event {0}; it needs a fault that spoils the stream at "
                                    "or before it (inject, raw, or a stall forever), else write "
                                    "a shorter text",
                                    cut));
  }
}

std::optional<Termination> ReadEnd(Reader& reader, const Field& field, Dialect dialect,
                                   const std::vector<EventFault>& faults) {
  Termination end;
  if (!field.node.IsMap()) {
    if (std::optional<std::size_t> index = reader.ReadName(field, keys::kEndKindNames)) {
      end.kind = static_cast<Termination::Kind>(*index);
      return end;
    }
    return std::nullopt;
  }
  std::optional<Map> map = reader.ReadMap(field, keys::kEnd);
  if (!map) return std::nullopt;
  if (std::optional<Field> kind = reader.Require(*map, "kind")) {
    if (std::optional<std::size_t> index = reader.ReadName(*kind, keys::kEndKindNames)) {
      end.kind = static_cast<Termination::Kind>(*index);
    }
  }
  if (!reader.ok()) return std::nullopt;
  CheckEndKeys(reader, *map, end.kind);
  reader.Get(*map, "after_event", &end.after_event, 0, kMaxInt);
  CheckSkipToTerminator(reader, *map, end, faults);
  reader.Get(*map, "at_byte", &end.at_byte, 0, kMaxInt);
  reader.Get(*map, "wait", &end.wait);
  if (std::optional<Field> heartbeat = reader.Present(*map, "heartbeat")) {
    if (std::optional<Heartbeat> value = ReadHeartbeat(reader, *heartbeat, dialect)) {
      end.heartbeat = *value;
    }
  }
  if (!reader.ok()) return std::nullopt;
  return end;
}

}  // namespace

void ReadContent(Reader& reader, const Field& field, Dialect dialect, Content* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kContent);
  if (!map) return;
  reader.Get(*map, "text", &out->text);
  reader.Get(*map, "chunk_size", &out->chunk_size, 1, kMaxInt);
  reader.Get(*map, "chunk_delay", &out->chunk_delay);
  reader.Get(*map, "reasoning", &out->reasoning);
  if (std::optional<Field> tool_call = reader.Present(*map, "tool_call")) {
    out->tool_call = ReadToolCall(reader, *tool_call);
  }
  reader.Get(*map, "finish_reason", &out->finish_reason);
  reader.Get(*map, "input_tokens", &out->input_tokens, 0, kMaxInt);
  reader.Get(*map, "output_tokens", &out->output_tokens, 0, kMaxInt);
  if (std::optional<Field> drip = reader.Present(*map, "drip")) ReadDrip(reader, *drip, out);
  if (std::optional<Field> framing = reader.Present(*map, "framing")) {
    ReadFraming(reader, *framing, dialect, &out->framing);
  }
  if (std::optional<Field> faults = reader.Present(*map, "faults")) {
    out->faults = ReadFaults(reader, *faults, dialect);
  }
  if (std::optional<Field> end = reader.Present(*map, "end")) {
    if (std::optional<Termination> value = ReadEnd(reader, *end, dialect, out->faults)) {
      out->end = *value;
    }
  }
}

}  // namespace faultline::scenario::internal

namespace faultline::scenario::internal {
namespace {

std::size_t CodePoints(std::string_view text) {
  return static_cast<std::size_t>(std::ranges::count_if(
      text, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::size_t Chunks(std::size_t units, int chunk_size) {
  const auto size = static_cast<std::size_t>(std::max(chunk_size, 1));
  return (units + size - 1) / size;
}

// What one event adds to the text it carries, at least: a drip cuts the whole event into writes.
constexpr std::size_t kEventFramingBytes = 64;

}  // namespace

std::size_t StreamEvents(const Content& content) {
  std::size_t events = Chunks(CodePoints(content.text), content.chunk_size) +
                       Chunks(CodePoints(content.reasoning), content.chunk_size) +
                       content.faults.size();
  if (content.tool_call) {
    events += Chunks(content.tool_call->arguments.size(), content.tool_call->chunk_size);
  }
  if (content.drip_bytes > 0) {
    const std::size_t bytes =
        content.text.size() + content.reasoning.size() + events * kEventFramingBytes;
    events += bytes / static_cast<std::size_t>(content.drip_bytes);
  }
  return events;
}

}  // namespace faultline::scenario::internal
