// From a pre-rendered body program to timed plan steps: event timing, faults between events,
// split writes, drips, chunk framing and the termination at the cut point.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "fake_provider/plan/plan_internal.h"

namespace faultline::provider::plan_internal {
namespace {

using Kind = PlanStep::Kind;
using EndKind = scenario::Termination::Kind;

// Walks one program for one request and feeds the timeline.
class BodyEmitter {
 public:
  BodyEmitter(const BodyProgram& program, const SlotValues& values, Timeline& timeline,
              BodyRecording* recording)
      : program_(program), values_(values), timeline_(timeline), recording_(recording) {}

  bool Run(Duration start);
  const BodyMarks& marks() const { return marks_; }

 private:
  std::optional<Duration> ApplyFaults(std::size_t position, Duration at);
  Duration EmitItem(const BodyItem& item, Duration at);
  bool Terminate(std::size_t cut, Duration at);
  void Stall(Duration at, const scenario::Wait& wait, std::string_view heartbeat, Duration every);
  void BodyTemplate(Duration at, const ByteTemplate& bytes);
  // Body bytes as they go on the wire: one chunk each in chunked mode, else as they are.
  std::string Framed(std::string_view data) const;
  std::string Partial(const BodyItem& item, std::size_t bytes) const;
  // `bytes` rendered where the recording cannot follow its values.
  std::string Unrecorded(const ByteTemplate& bytes) const;
  // `bytes` was rendered into step `step`, ending at `end`: where its values went.
  void Record(std::size_t step, std::size_t end, const ByteTemplate& bytes);

  const BodyProgram& program_;
  const SlotValues& values_;
  Timeline& timeline_;
  BodyRecording* recording_;  // null: nothing recorded
  BodyMarks marks_;
};

bool BodyEmitter::Run(Duration start) {
  const std::size_t cut = CutPosition(program_);
  Duration at = start;
  for (std::size_t position = 0;; ++position) {
    const std::optional<Duration> after_faults = ApplyFaults(position, at);
    if (!after_faults) return false;  // stalled forever
    at = *after_faults;
    if (position == cut) break;
    if (position > 0) at += program_.gap;
    if (position == 0) marks_.first_event = at;
    if (position == program_.first_output) marks_.first_output = at;
    at = EmitItem(program_.items[position], at);
  }
  // The cut happens when the next item would have been due.
  const bool next_exists = cut < program_.items.size();
  return Terminate(cut, next_exists && cut > 0 ? at + program_.gap : at);
}

std::optional<Duration> BodyEmitter::ApplyFaults(std::size_t position, Duration at) {
  for (const FaultAction& fault : program_.faults[position]) {
    switch (fault.kind) {
      case FaultAction::Kind::kInject:
        BodyTemplate(at, fault.item.bytes);
        break;
      case FaultAction::Kind::kDelay:
      case FaultAction::Kind::kStall:
        at = timeline_.Settle(at);
        if (fault.kind == FaultAction::Kind::kStall || fault.wait.forever) {
          Stall(at, fault.wait, fault.heartbeat, fault.heartbeat_every);
        }
        if (fault.wait.forever) return std::nullopt;
        at += fault.wait.duration;
        break;
    }
  }
  return at;
}

Duration BodyEmitter::EmitItem(const BodyItem& item, Duration at) {
  const bool split = program_.split_writes && item.split > 0 && program_.drip_bytes <= 0;
  if (!split) {
    BodyTemplate(at, item.bytes);
    return at;
  }
  const std::string rendered = Unrecorded(item.bytes);
  const std::size_t cut = item.bytes.MapOffset(item.split, values_);
  if (cut == 0 || cut >= rendered.size()) {
    timeline_.Body(at, Framed(rendered));
    return at;
  }
  timeline_.Body(at, Framed(std::string_view(rendered).substr(0, cut)));
  at += program_.split_delay;
  timeline_.Body(at, Framed(std::string_view(rendered).substr(cut)));
  return at;
}

bool BodyEmitter::Terminate(std::size_t cut, Duration at) {
  const scenario::Termination& end = program_.end;
  if (end.kind == EndKind::kDone || end.kind == EndKind::kNoTerminator) {
    if (end.at_byte && cut < program_.items.size()) {  // a clean end inside an event
      const std::string rendered = Unrecorded(program_.items[cut].bytes);
      const auto kept =
          std::min(static_cast<std::size_t>(std::max(0, *end.at_byte)), rendered.size());
      timeline_.Body(at, Framed(std::string_view(rendered).substr(0, kept)));
    }
    if (program_.chunked) timeline_.Body(at, kFinalChunk);
    return true;
  }
  if (end.at_byte && cut < program_.items.size()) {
    const auto bytes = static_cast<std::size_t>(std::max(0, *end.at_byte));
    timeline_.Body(at, Partial(program_.items[cut], bytes));
  }
  at = timeline_.Settle(at);
  switch (end.kind) {
    case EndKind::kReset:
      timeline_.Add(StepAt(Kind::kReset, at));
      break;
    case EndKind::kStall:
      Stall(at, end.wait, program_.end_heartbeat, program_.end_heartbeat_every);
      if (!end.wait.forever) timeline_.Add(StepAt(Kind::kClose, at + end.wait.duration));
      break;
    default:  // kNoFinalChunk, kClose
      timeline_.Add(StepAt(Kind::kClose, at));
      break;
  }
  return false;
}

void BodyEmitter::Stall(Duration at, const scenario::Wait& wait, std::string_view heartbeat,
                        Duration every) {
  if (!wait.forever && wait.duration.count() <= 0) return;  // nothing to wait for
  PlanStep step = StepAt(Kind::kStall, at);
  if (!wait.forever) step.length = wait.duration;
  if (!heartbeat.empty() && every.count() > 0) {
    step.kind = Kind::kHeartbeat;
    step.bytes = Framed(heartbeat);
    step.every = every;
  }
  timeline_.Add(std::move(step));
}

std::string BodyEmitter::Framed(std::string_view data) const {
  return program_.chunked ? Chunk(data) : std::string(data);
}

// Renders a template straight into the send buffer (no temporary) unless dripping.
void BodyEmitter::BodyTemplate(Duration at, const ByteTemplate& bytes) {
  if (timeline_.dripping()) {
    timeline_.Body(at, Framed(Unrecorded(bytes)));
    return;
  }
  std::string& out = timeline_.SendBuffer(at);
  if (program_.chunked) {
    AppendChunk(out, bytes, values_);
    Record(timeline_.step_count() - 1, out.size() - 2, bytes);  // before the chunk's CRLF
  } else {
    bytes.AppendTo(out, values_);
    Record(timeline_.step_count() - 1, out.size(), bytes);
  }
}

std::string BodyEmitter::Unrecorded(const ByteTemplate& bytes) const {
  if (recording_ != nullptr && bytes.has_holes()) recording_->complete = false;
  return bytes.Render(values_);
}

void BodyEmitter::Record(std::size_t step, std::size_t end, const ByteTemplate& bytes) {
  if (recording_ == nullptr || !bytes.has_holes()) return;
  if (bytes.sealed()) {  // its checksums cover the values: other values need another sealing
    recording_->complete = false;
    return;
  }
  const std::size_t start = end - bytes.RenderedSize(values_);
  bytes.ForEachHole(values_, [&](std::size_t offset, Slot slot) {
    recording_->spots.push_back({step, start + offset, slot});
  });
}

// The first `bytes` bytes of an item; in chunked mode under a chunk header that announces the
// whole item, so the cut falls inside the chunk.
std::string BodyEmitter::Partial(const BodyItem& item, std::size_t bytes) const {
  const std::string rendered = Unrecorded(item.bytes);
  const std::size_t kept = std::min(bytes, rendered.size());
  std::string out;
  if (program_.chunked) AppendChunkSize(out, rendered.size());
  out.append(rendered, 0, kept);
  return out;
}

}  // namespace

Timeline::Timeline(int drip_bytes, Duration drip_every)
    : drip_bytes_(std::max(0, drip_bytes)), drip_every_(drip_every) {}

void Timeline::Send(Duration at, std::string_view bytes) {
  if (!bytes.empty()) SendBuffer(at).append(bytes);
}

std::string& Timeline::SendBuffer(Duration at) {
  if (!steps_.empty()) at = std::max(at, steps_.back().at);
  if (steps_.empty() || steps_.back().kind != Kind::kSend || steps_.back().at != at) {
    steps_.push_back(StepAt(Kind::kSend, at));
  }
  return steps_.back().bytes;
}

void Timeline::Body(Duration at, std::string_view bytes) {
  if (drip_bytes_ == 0) {
    Send(at, bytes);
    return;
  }
  if (pending_.empty()) pending_start_ = at;
  pending_.append(bytes);
}

Duration Timeline::Settle(Duration at) {
  if (pending_.empty()) return at;
  const auto piece = static_cast<std::size_t>(drip_bytes_);
  Duration t = pending_start_;
  for (std::size_t offset = 0; offset < pending_.size(); offset += piece) {
    if (offset > 0) t += drip_every_;
    Send(t, std::string_view(pending_).substr(offset, piece));
  }
  pending_.clear();
  return std::max(at, t);
}

void Timeline::Add(PlanStep step) {
  step.at = Settle(step.at);
  if (!steps_.empty()) step.at = std::max(step.at, steps_.back().at);
  steps_.push_back(std::move(step));
}

std::vector<PlanStep> Timeline::Take() {
  Settle(Duration{0});
  return std::move(steps_);
}

std::size_t CutPosition(const BodyProgram& program) {
  const std::size_t items = program.items.size();
  const std::size_t terminator = std::min(program.terminator, items);
  const std::optional<int>& after = program.end.after_event;
  const auto requested = [&](std::size_t fallback) {
    return after ? std::min<std::size_t>(static_cast<std::size_t>(std::max(0, *after)), items)
                 : fallback;
  };
  switch (program.end.kind) {
    case EndKind::kDone:
      return items;
    case EndKind::kNoTerminator:
      return std::min(requested(terminator), terminator);
    case EndKind::kNoFinalChunk:
      return requested(items);
    case EndKind::kClose:
    case EndKind::kReset:
    case EndKind::kStall:
      break;
  }
  return requested(terminator);
}

bool KeepsAlive(const BodyProgram& program) {
  if (program.end.kind != EndKind::kDone && program.end.kind != EndKind::kNoTerminator) {
    return false;
  }
  const std::size_t cut = CutPosition(program);
  for (std::size_t position = 0; position <= cut && position < program.faults.size(); ++position) {
    for (const FaultAction& fault : program.faults[position]) {
      if (fault.kind != FaultAction::Kind::kInject && fault.wait.forever) return false;
    }
  }
  return true;
}

bool EmitBody(const BodyProgram& program, const SlotValues& values, Duration start,
              Timeline& timeline, BodyMarks* marks, BodyRecording* recording) {
  BodyEmitter emitter(program, values, timeline, recording);
  const bool usable = emitter.Run(start);
  if (marks != nullptr) *marks = emitter.marks();
  return usable;
}

}  // namespace faultline::provider::plan_internal
