// Compiling a response entry: the dialect writer renders bodies and events once, with sentinel
// ids and numbers; the framer frames them in wire order; the sentinels become template holes.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/plan/plan_internal.h"
#include "fake_provider/wire/sse_framing.h"

namespace faultline::provider::plan_internal {
namespace {

using scenario::EventFault;

// Sentinels: unlikely in content, JSON-safe, never next to digits by accident.
constexpr std::int64_t kCreatedSentinel = 1987654321;
constexpr int kInputTokensSentinel = 918273645;
constexpr std::size_t kMinSentinelLength = 8;

// The literal prefix of an id ("chatcmpl-", "msg_", "req_"): letters up to the first '_' or
// '-'; none when something else comes first (Ollama's created_at, "2024-…", varies whole).
std::size_t IdPrefixLength(std::string_view id) {
  const std::size_t separator = id.find_first_of("_-");
  if (separator == std::string_view::npos) return 0;
  const bool letters = std::ranges::all_of(id.substr(0, separator), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
  return letters ? separator + 1 : 0;
}

// Replaces the part of `id` after its prefix by a sentinel of the same length (at least
// kMinSentinelLength); returns the sentinel.
std::string SentinelId(std::string& id, char letter, std::size_t& prefix) {
  if (id.empty()) return {};
  prefix = IdPrefixLength(id);
  const std::size_t length = std::max(id.size() - prefix, kMinSentinelLength);
  std::string sentinel = "~FL";
  sentinel += letter;
  sentinel.resize(length, '~');
  id = id.substr(0, prefix) + sentinel;
  return sentinel;
}

bool IsSuccess(int status) { return status >= 200 && status < 300; }

BodyItem MakeItem(const SseFramer& framer, std::string framed, const scenario::Framing& framing,
                  const SlotValues& slots) {
  BodyItem item;
  if (framing.split_writes) item.split = framer.SplitPointOf(framed);
  item.bytes = framer.Template(std::move(framed), slots);
  return item;
}

std::string HeartbeatFor(const scenario::Heartbeat& heartbeat, const DialectWriter& writer,
                         const scenario::Framing& framing) {
  if (heartbeat.every.count() <= 0) return {};
  const SseEvent event =
      heartbeat.style == scenario::Heartbeat::Style::kPing ? writer.Ping() : SseEvent{};
  return HeartbeatText(event, framing.line_ending);
}

// The event a malformed injection imitates: the next JSON event, else the previous one.
const SseEvent* Neighbour(const StreamEvents& stream, std::size_t position) {
  const auto is_object = [](const SseEvent& event) { return event.data.starts_with('{'); };
  for (std::size_t i = position; i < stream.events.size(); ++i) {
    if (is_object(stream.events[i])) return &stream.events[i];
  }
  for (std::size_t i = std::min(position, stream.events.size()); i-- > 0;) {
    if (is_object(stream.events[i])) return &stream.events[i];
  }
  return nullptr;
}

SseEvent InjectedEvent(const EventFault& fault, std::size_t fault_index, std::size_t position,
                       const StreamEvents& stream, const scenario::Content& content,
                       const DialectWriter& writer, const ResponseIds& ids) {
  switch (fault.kind) {
    case EventFault::Kind::kInvalidJson:
    case EventFault::Kind::kWrongShape:
    case EventFault::Kind::kTwoObjects:
      return MalformedEvent(fault.kind, Neighbour(stream, position), writer);
    default:  // kErrorEnvelope, kProviderError
      return writer.StreamErrorFor(content, fault_index, ids);
  }
}

struct StreamContext {
  const scenario::Content& content;
  const StreamEvents& stream;
  const DialectWriter& writer;
  const ResponseIds& ids;
  const SlotValues& slots;
  SseFramer& framer;
};

std::optional<FaultAction> CompileFault(const StreamContext& context, std::size_t fault_index,
                                        std::size_t position) {
  const EventFault& fault = context.content.faults[fault_index];
  FaultAction action;
  action.wait = fault.wait;
  switch (fault.kind) {
    case EventFault::Kind::kSequenceGap:
      return std::nullopt;  // the writer numbers the events around the gap
    case EventFault::Kind::kDelay:
      action.kind = FaultAction::Kind::kDelay;
      return action;
    case EventFault::Kind::kStall:
      action.kind = FaultAction::Kind::kStall;
      action.heartbeat = HeartbeatFor(fault.heartbeat, context.writer, context.content.framing);
      action.heartbeat_every = fault.heartbeat.every;
      return action;
    case EventFault::Kind::kRaw:
      action.kind = FaultAction::Kind::kInject;
      action.item.bytes = ByteTemplate(context.framer.Raw(fault.raw));
      return action;
    default:
      break;
  }
  action.kind = FaultAction::Kind::kInject;
  const SseEvent event = InjectedEvent(fault, fault_index, position, context.stream,
                                       context.content, context.writer, context.ids);
  action.item.bytes = context.framer.Template(context.framer.Event(event), context.slots);
  return action;
}

void ApplyPacing(const scenario::Content& content, BodyProgram& program) {
  program.drip_bytes = content.drip_bytes;
  program.drip_every = content.drip_every;
  program.gap = content.drip_bytes > 0 ? Duration{0} : content.chunk_delay;
  program.end = content.end;
}

std::string EndSummary(const BodyProgram& program) {
  using EndKind = scenario::Termination::Kind;
  const scenario::Termination& end = program.end;
  const std::size_t cut = CutPosition(program);
  const std::string bytes =
      end.at_byte && cut < program.items.size() ? fmt::format("+{}B", *end.at_byte) : "";
  switch (end.kind) {
    case EndKind::kDone:
      return "end=done";
    case EndKind::kNoTerminator:
      return "end=no-terminator";
    case EndKind::kNoFinalChunk:
      return fmt::format("end=no-final-chunk@{}{}", cut, bytes);
    case EndKind::kClose:
      return fmt::format("end=close@{}{}", cut, bytes);
    case EndKind::kReset:
      return fmt::format("end=reset@{}{}", cut, bytes);
    case EndKind::kStall:
      break;
  }
  return fmt::format("end=stall@{}{}({}{})", cut, bytes, FormatWait(end.wait),
                     program.end_heartbeat.empty() ? "" : " heartbeat");
}

std::string StreamSummary(const BodyProgram& program, const scenario::Content& content) {
  std::string out = fmt::format("stream {} events", program.items.size());
  if (content.chunk_delay.count() > 0) out += " every " + FormatDuration(content.chunk_delay);
  for (const EventFault& fault : content.faults) {
    out += fmt::format(" {}@{}", scenario::ToString(fault.kind), fault.after_event);
    if (fault.kind == EventFault::Kind::kDelay || fault.kind == EventFault::Kind::kStall) {
      out += "(" + FormatWait(fault.wait) + ")";
    }
  }
  const scenario::Framing& framing = content.framing;
  if (framing.split_writes) out += framing.split_utf8 ? " split-utf8" : " split";
  if (content.drip_bytes > 0) {
    out += fmt::format(" drip={}B/{}", content.drip_bytes, FormatDuration(content.drip_every));
  }
  return out + " " + EndSummary(program);
}

BodyProgram CompileStream(const scenario::Content& content, const DialectWriter& writer,
                          const ResponseIds& ids, const Usage& usage, const SlotValues& slots) {
  const StreamEvents stream = writer.Stream(content, ids, usage);
  const std::size_t count = stream.events.size();
  BodyProgram program;
  program.terminator = std::min(stream.terminator, count);
  program.first_output = stream.first_output;
  program.faults.resize(count + 1);
  program.split_writes = content.framing.split_writes;
  program.split_delay = content.framing.split_delay;
  ApplyPacing(content, program);
  program.end_heartbeat = HeartbeatFor(content.end.heartbeat, writer, content.framing);
  program.end_heartbeat_every = content.end.heartbeat.every;

  std::vector<std::vector<std::size_t>> faults_at(count + 1);
  for (std::size_t i = 0; i < content.faults.size(); ++i) {
    const int after = std::clamp(content.faults[i].after_event, 0, static_cast<int>(count));
    faults_at[static_cast<std::size_t>(after)].push_back(i);
  }
  // Frame in wire order so the BOM and the mixed line-ending cycle follow the bytes.
  SseFramer framer(content.framing, scenario::StreamFramingOf(writer.dialect()));
  const StreamContext context{content, stream, writer, ids, slots, framer};
  for (std::size_t position = 0; position <= count; ++position) {
    for (std::size_t fault_index : faults_at[position]) {
      if (auto action = CompileFault(context, fault_index, position)) {
        program.faults[position].push_back(std::move(*action));
      }
    }
    if (position < count) {
      program.items.push_back(
          MakeItem(framer, framer.Event(stream.events[position]), content.framing, slots));
    }
  }
  program.summary = StreamSummary(program, content);
  for (const BodyItem& item : program.items) program.size_hint += item.bytes.text().size() + 12;
  return program;
}

// A content-length body: one item; only delays and stalls right after the headers apply.
// `label` starts the summary ("json"; empty for error bodies, which the status line describes).
BodyProgram CompileSingleBody(ByteTemplate body, const scenario::Content& content,
                              std::string_view label) {
  BodyProgram program;
  program.chunked = false;
  program.terminator = 1;
  program.faults.resize(2);
  ApplyPacing(content, program);
  for (const EventFault& fault : content.faults) {
    if (fault.after_event != 0) continue;
    if (fault.kind != EventFault::Kind::kDelay && fault.kind != EventFault::Kind::kStall) continue;
    FaultAction action;
    action.kind = fault.kind == EventFault::Kind::kDelay ? FaultAction::Kind::kDelay
                                                         : FaultAction::Kind::kStall;
    action.wait = fault.wait;
    program.faults[0].push_back(std::move(action));
    program.summary +=
        fmt::format(" {}@0({})", scenario::ToString(fault.kind), FormatWait(fault.wait));
  }
  program.size_hint = body.text().size();
  program.items.push_back({std::move(body), 0});
  if (content.drip_bytes > 0) {
    program.summary +=
        fmt::format(" drip={}B/{}", content.drip_bytes, FormatDuration(content.drip_every));
  }
  if (program.end.kind != scenario::Termination::Kind::kDone) {
    program.summary += " " + EndSummary(program);
  }
  program.summary.insert(0, label);
  if (program.summary.starts_with(' ')) program.summary.erase(0, 1);
  return program;
}

}  // namespace

Placeholders MakePlaceholders(const DialectWriter& writer, std::string_view model) {
  Placeholders out;
  // A fixed, plausible instant: only the shape (lengths, prefixes) of these ids matters.
  const WallTime shape_time{std::chrono::seconds(1'700'000'000)};
  out.ids = writer.MakeIds(0x5eed, 1, shape_time, model);
  out.slots[static_cast<std::size_t>(Slot::kResponseId)] =
      SentinelId(out.ids.response_id, 'R', out.response_prefix);
  out.slots[static_cast<std::size_t>(Slot::kItemId)] =
      SentinelId(out.ids.item_id, 'I', out.item_prefix);
  out.slots[static_cast<std::size_t>(Slot::kRequestId)] =
      SentinelId(out.ids.request_id, 'Q', out.request_prefix);
  out.ids.created = kCreatedSentinel;
  out.slots[static_cast<std::size_t>(Slot::kCreated)] = std::to_string(kCreatedSentinel);
  out.slots[static_cast<std::size_t>(Slot::kInputTokens)] = std::to_string(kInputTokensSentinel);
  return out;
}

SlotValues SlotValuesFor(const Placeholders& placeholders, const ResponseIds& ids, int input_tokens,
                         int output_tokens) {
  const auto suffix = [](const std::string& id, std::size_t prefix) {
    return id.substr(std::min(prefix, id.size()));
  };
  SlotValues values;
  values[static_cast<std::size_t>(Slot::kResponseId)] =
      suffix(ids.response_id, placeholders.response_prefix);
  values[static_cast<std::size_t>(Slot::kItemId)] = suffix(ids.item_id, placeholders.item_prefix);
  values[static_cast<std::size_t>(Slot::kRequestId)] =
      suffix(ids.request_id, placeholders.request_prefix);
  values[static_cast<std::size_t>(Slot::kCreated)] = std::to_string(ids.created);
  values[static_cast<std::size_t>(Slot::kInputTokens)] = std::to_string(input_tokens);
  values[static_cast<std::size_t>(Slot::kTotalTokens)] =
      std::to_string(input_tokens + output_tokens);
  return values;
}

int OutputTokens(const scenario::Content& content) {
  if (content.output_tokens) return *content.output_tokens;
  int tokens = EstimateTokens(content.text) + EstimateTokens(content.reasoning);
  if (content.tool_call) tokens += EstimateTokens(content.tool_call->arguments);
  return tokens;
}

CompiledEntry CompileEntry(const scenario::ResponseSpec& spec, const DialectWriter& writer,
                           const Placeholders& placeholders) {
  CompiledEntry entry;
  entry.spec = &spec;
  entry.output_tokens = OutputTokens(spec.content);
  entry.placeholders = placeholders.slots;
  entry.placeholders[static_cast<std::size_t>(Slot::kTotalTokens)] =
      std::to_string(kInputTokensSentinel + entry.output_tokens);
  entry.status_summary = StatusSummary(spec);
  const Usage usage{spec.content.input_tokens.value_or(kInputTokensSentinel), entry.output_tokens};
  const ResponseIds& ids = placeholders.ids;
  const bool success = IsSuccess(spec.status);

  Body body;
  std::string_view label = spec.body ? "" : "json";
  if (success) {
    body = writer.Json(spec.content, ids, usage);
    if (!spec.body) {
      entry.stream = CompileStream(spec.content, writer, ids, usage, entry.placeholders);
    }
  } else {
    scenario::ErrorSpec error;
    error.kind = scenario::DefaultErrorKind(spec.status);
    body = writer.ErrorWithIds(spec.error.value_or(error), spec.status, ids);
    label = "";
  }
  entry.body_content_type = body.content_type;
  if (!spec.body) entry.body_headers = std::move(body.headers);
  entry.stream_content_type =
      success ? std::string(writer.stream_content_type()) : body.content_type;
  ByteTemplate body_bytes =
      spec.body ? ByteTemplate(*spec.body)
                : ByteTemplate::WithHoles(std::move(body.bytes), entry.placeholders);
  entry.body = CompileSingleBody(std::move(body_bytes), spec.content, label);
  return entry;
}

}  // namespace faultline::provider::plan_internal
