// Internal to the plan compiler (plan_compiler.cc, plan_render.cc, plan_timeline.cc,
// plan_headers.cc) and the session core: the pre-rendered form of a response entry and the
// functions that turn it into plan steps. Not part of the provider's public API.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/plan/plan.h"
#include "fake_provider/wire/byte_template.h"
#include "fake_provider/wire/dialect.h"
#include "scenarios/scenario.h"

namespace faultline::provider::plan_internal {

inline constexpr std::string_view kFinalChunk = "0\r\n\r\n";

// One unit of body bytes: an SSE event, an injected fault event, or a whole non-stream body.
struct BodyItem {
  ByteTemplate bytes;
  std::size_t split = 0;  // template offset where split_writes cuts it; 0 = never split
};

// Something scheduled between items (EventFault after the loader, minus what the writer does).
struct FaultAction {
  enum class Kind { kDelay, kStall, kInject };
  Kind kind = Kind::kDelay;
  scenario::Wait wait;
  std::string heartbeat;  // one heartbeat's body bytes (unchunked); empty = a silent stall
  Duration heartbeat_every{0};
  BodyItem item;  // kInject
};

// A response body as items with faults between them, plus how it is timed and how it ends.
struct BodyProgram {
  std::vector<BodyItem> items;
  std::size_t terminator = 0;                    // index of the terminator item (or size)
  std::optional<std::size_t> first_output;       // StreamEvents::first_output; streams only
  std::vector<std::vector<FaultAction>> faults;  // [p]: after p items; size items + 1
  bool chunked = true;                           // chunked transfer coding, else content-length
  Duration gap{0};                               // between consecutive items
  bool split_writes = false;
  Duration split_delay{0};
  int drip_bytes = 0;
  Duration drip_every{0};
  scenario::Termination end;
  std::string end_heartbeat;  // for Termination::kStall; empty = silent
  Duration end_heartbeat_every{0};
  std::string summary;        // "stream 25 events end=reset@3+10B"
  std::size_t size_hint = 0;  // about the body's wire size, to reserve the first write
};

// A response entry, rendered once.
struct CompiledEntry {
  const scenario::ResponseSpec* spec = nullptr;
  int output_tokens = 0;                       // usage output, for the total-tokens slot
  SlotValues placeholders;                     // what the holes were rendered with
  std::optional<BodyProgram> stream;           // 2xx SSE (absent for errors and body overrides)
  BodyProgram body;                            // the content-length body: JSON, error or override
  std::string body_content_type;               // before the scenario's override
  std::vector<scenario::Header> body_headers;  // the writer's own, e.g. x-amzn-ErrorType
  std::string stream_content_type;             // for a stream request answered with `body`
  std::string status_summary;                  // "429 rate_limit retry-after=imf(+2s)"
};

// Sentinel ids and numbers the entries are rendered with, derived from the writer's id shape.
struct Placeholders {
  ResponseIds ids;                  // sentinel ids (same lengths as real ones) for the writer
  SlotValues slots;                 // sentinels to look for; total tokens filled per entry
  std::size_t response_prefix = 0;  // bytes of the id kept literal ("chatcmpl-", "msg_")
  std::size_t item_prefix = 0;
  std::size_t request_prefix = 0;
};
Placeholders MakePlaceholders(const DialectWriter& writer, std::string_view model);
// The per-request values of every slot.
SlotValues SlotValuesFor(const Placeholders& placeholders, const ResponseIds& ids, int input_tokens,
                         int output_tokens);

// Output tokens a successful answer with `content` reports (and costs a token rate limit).
int OutputTokens(const scenario::Content& content);

CompiledEntry CompileEntry(const scenario::ResponseSpec& spec, const DialectWriter& writer,
                           const Placeholders& placeholders);

// Appends the steps of `program`'s body starting at `start` (the instant the headers went out,
// already added to `timeline`'s owner). Returns whether the connection stays usable.
// `marks`, when given, receives when the program's first item and first output item go out
// (nullopt: never).
struct BodyMarks {
  std::optional<Duration> first_event;
  std::optional<Duration> first_output;
};
// Where one per-request value lies in a plan's steps: the bytes of steps[step] from `offset` on
// hold the whole value of `slot`.
struct ValueSpot {
  std::size_t step = 0;
  std::size_t offset = 0;
  Slot slot = Slot::kResponseId;
};
// Where EmitBody put the values, so that its steps can be reused with other values of the same
// lengths by overwriting them. `complete` is false when some value went out where it is not
// recorded (a drip run, a split write, an item cut short, a sealed message whose checksum
// covers it): such steps must be rendered for each request.
struct BodyRecording {
  std::vector<ValueSpot> spots;
  bool complete = true;
};
class Timeline;
bool EmitBody(const BodyProgram& program, const SlotValues& values, Duration start,
              Timeline& timeline, BodyMarks* marks = nullptr, BodyRecording* recording = nullptr);
// The steps of an answer with `program` of `spec`: a stall before the headers when the spec has
// one, `head` (status line and headers), then the body with `values`. `head_step` is the step
// the head opens; with `record`, `recording` says where the body's values went.
struct RenderedSteps {
  std::vector<PlanStep> steps;
  std::size_t head_step = 0;
  BodyMarks marks;
  BodyRecording recording;
};
RenderedSteps RenderSteps(const scenario::ResponseSpec& spec, const BodyProgram& program,
                          std::string head, const SlotValues& values, bool record = false);

// Answers' steps with their bodies rendered once per program and lengths of the values, then
// reused with each request's values written over the old ones (BodyRecording): a streamed
// body is most of a plan's bytes, and they change from one request to the next only in the
// ids, `created` and token counts. Bounded (kMaxBodies, kMaxBytes); a body that cannot be
// reused or does not fit is rendered for every request. Thread-safe.
class BodyCache {
 public:
  using Lengths = std::array<std::size_t, kSlotCount>;  // of the values, by Slot

  // RenderSteps' steps and marks. `program` belongs to one of the scenario's compiled entries,
  // which outlive the cache (its address is part of the key).
  std::vector<PlanStep> Steps(const scenario::ResponseSpec& spec, const BodyProgram& program,
                              std::string head, const SlotValues& values, BodyMarks& marks);

 private:
  struct Body;
  // Per compiled scenario (one per session): a few variants of a few entries' bodies. A body
  // past kMaxBytes is rendered per request: copying it costs about as much, and a session's
  // memory stays near what its compiled entries already hold.
  static constexpr std::size_t kMaxBodies = 8;
  static constexpr std::size_t kMaxBytes = 1 << 20;

  std::shared_ptr<const Body> FindLocked(const BodyProgram& program, const Lengths& lengths) const;
  // `body`'s steps with `head` before its body bytes and `values` written over the old ones.
  static std::vector<PlanStep> Filled(const Body& body, std::string_view head,
                                      const SlotValues& values);
  // Keeps `rendered` (rendered with record and no head) for reuse when it can be reused and fits;
  // else its program is not rendered for reuse again.
  void Keep(const BodyProgram& program, const Lengths& lengths, const RenderedSteps& rendered);

  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const Body>> bodies_;  // guarded by mu_
  std::vector<const BodyProgram*> not_reusable_;     // guarded by mu_: not kept (Keep)
  std::size_t bytes_ = 0;                            // guarded by mu_: of bodies_' steps
};

// How many whole items go out before the termination's cut point.
std::size_t CutPosition(const BodyProgram& program);
// Whether a response with this body leaves the connection usable (decided before sending, for
// the `connection` header).
bool KeepsAlive(const BodyProgram& program);

// The ground truth of a response (plan_truth.cc). `stream`: the body is an event stream;
// `content_type` is what the plan sends; `stream_requested`: the client asked for a stream (an
// answer of another content type is then malformed, whatever its body).
// `stream_media`: the dialect's stream media type (DialectWriter::stream_content_type).
PlanTruth EntryTruth(const scenario::ResponseSpec& spec, const BodyProgram& program, bool stream,
                     std::string_view content_type, bool stream_requested = false,
                     std::string_view stream_media = "text/event-stream");
PlanTruth ErrorTruth(scenario::ErrorKind kind);
// Every field a client may read a retry hint from in what `steps` send (plan.h's HintField):
// none for a 2xx answer, which no client reads a hint from.
std::vector<HintField> HintFieldsOf(int status, const std::vector<PlanStep>& steps);
std::vector<Silence> SilencesOf(const std::vector<PlanStep>& steps);

// What a cassette's playback sent (plan_cassette.cc), read with the reference client's decoders
// (event_splitter.h), for its ground truth (CassetteTruth, plan_truth.cc).
struct CassetteOutcome {
  int status = 200;
  std::string content_type;       // as the head says
  bool stream_requested = false;  // the client asked for a stream
  bool stream = false;            // the body was read as the dialect's event stream
  std::string body;               // the body bytes sent (a non-stream body is decoded whole)
  bool whole = true;              // every recorded body byte went out
  bool terminal_sent = false;     // the dialect's terminal event went out
  bool clean_end = true;          // the body ended as its framing says (final chunk, length)
  bool malformed = false;         // an event the reference decoder refuses went out
  bool error_event = false;       // the provider's in-stream error went out
  bool raw_injected = false;      // an overlaid raw fault: anything at all
  bool stalled_forever = false;   // the body stops, the connection stays open
  std::string text;
  std::string tool_arguments;
  bool tool_call = false;
  bool events_sent = false;
  bool output_sent = false;
  std::optional<Duration> first_event;
  std::optional<Duration> first_output;
};
PlanTruth CassetteTruth(const CassetteOutcome& outcome, std::string_view stream_media,
                        scenario::Dialect dialect);

// The plan that plays a cassette entry back (spec.cassette set), with its overlaid faults.
ResponsePlan CassettePlan(const scenario::ResponseSpec& spec, const DialectWriter& writer,
                          scenario::Dialect dialect, int attempt, bool stream_requested);

// Collects plan steps: coalesces sends at the same instant, drips body bytes when asked.
class Timeline {
 public:
  Timeline(int drip_bytes, Duration drip_every);
  // Bytes written at `at` as they are (status line and headers).
  void Send(Duration at, std::string_view bytes);
  // Body bytes due at `at`; with drip on they join the pending drip run instead.
  void Body(Duration at, std::string_view bytes);
  // The buffer of the send at `at` (created or coalesced), for appending body bytes in place.
  // Only when not dripping.
  std::string& SendBuffer(Duration at);
  // Steps so far: SendBuffer's is the last of them.
  std::size_t step_count() const { return steps_.size(); }
  bool dripping() const { return drip_bytes_ > 0; }
  // Writes out any pending drip run; returns when its last piece goes out (or `at`).
  Duration Settle(Duration at);
  // A control step (stall, heartbeat, close, reset); settles first.
  void Add(PlanStep step);
  std::vector<PlanStep> Take();

 private:
  int drip_bytes_;
  Duration drip_every_;
  std::string pending_;
  Duration pending_start_{0};
  std::vector<PlanStep> steps_;
};

// A step of `kind` at `at`, other fields defaulted.
inline PlanStep StepAt(PlanStep::Kind kind, Duration at) {
  PlanStep step;
  step.kind = kind;
  step.at = at;
  return step;
}

// Appends "HTTP/1.1 429 Too Many Requests\r\n".
void AppendStatusLine(std::string& out, int status);
std::string_view ReasonPhrase(int status);
// "2s", "1500ms", "250us", "-2s"
std::string FormatDuration(Duration duration);
std::string FormatWait(const scenario::Wait& wait);
// "{:x}\r\n" + data + "\r\n"
std::string Chunk(std::string_view data);
// The longest chunk size line: 16 hex digits and CRLF.
inline constexpr std::size_t kChunkSizeLineMax = 2 * sizeof(std::size_t) + 2;
// Appends a chunk's size line, "{:x}\r\n". Written once per event of every streamed answer, so
// it is spelt out here: through fmt it was a fifth of the server's own work per stream.
void AppendChunkSize(std::string& out, std::size_t size);
// Appends `bytes` rendered with `values` as one chunk: size line, bytes, CRLF.
void AppendChunk(std::string& out, const ByteTemplate& bytes, const SlotValues& values);
// The header block for one response, from "date" through the final CRLF.
struct HeadInput {
  const scenario::ResponseSpec* spec = nullptr;  // null for ErrorPlan
  std::string_view content_type;
  std::string_view request_id_header;
  std::string_view request_id;
  WallTime now;                                 // before the Date skew
  std::optional<Duration> retry_after_seconds;  // ErrorPlan's honest delay
  bool chunked = false;
  std::size_t content_length = 0;
  const DialectWriter* writer = nullptr;
  std::vector<scenario::Header> extra;  // after the spec's headers (e.g. allow)
};
std::string Head(int status, const HeadInput& input);
// The status-line part of a summary: "429 rate_limit retry-after=imf(+2s)".
std::string StatusSummary(const scenario::ResponseSpec& spec);

}  // namespace faultline::provider::plan_internal
