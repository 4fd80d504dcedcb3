// ProxyExchange: the faults of a 2xx body, event by event. Events are counted as a client counts
// them (event_splitter.h); each whole event goes out as one chunk as soon as it is complete, the
// faults of "after event N" right after the Nth, and the cut where the rule's `end` puts it.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "proxy/proxy_core.h"

namespace faultline::proxy {
namespace {

using FaultKind = scenario::EventFault::Kind;
using EndKind = scenario::Termination::Kind;

std::string Chunk(std::string_view data) {
  return fmt::format("{:x}\r\n{}\r\n", data.size(), data);
}

std::string CutName(const scenario::Termination& end) {
  std::string at = end.after_event ? std::to_string(*end.after_event) : "terminal";
  if (end.at_byte) at += fmt::format("+{}B", *end.at_byte);
  return fmt::format("end={}@{}", scenario::ToString(end.kind), at);
}

}  // namespace

void ProxyExchange::EmitBody(Duration at, std::string_view data) {
  if (data.empty()) return;
  Emit(at, reframe_ ? Chunk(data) : std::string(data));
}

void ProxyExchange::OnBody(std::string_view data, Duration at) {
  if (!splitter_) {  // not a stream: bytes without events
    OnPiece(data, provider::EventSplitter::Piece{data.size(), false, false}, at);
    return;
  }
  std::size_t offset = 0;
  for (const provider::EventSplitter::Piece& piece : splitter_->Split(data)) {
    OnPiece(data.substr(offset, piece.size), piece, at);
    offset += piece.size;
  }
}

void ProxyExchange::OnPiece(std::string_view bytes, const provider::EventSplitter::Piece& piece,
                            Duration at) {
  switch (phase_) {
    case Phase::kEnded:
      return;
    case Phase::kBytes:
      ForwardBudget(bytes, at);
      return;
    case Phase::kSkipping:  // `end: done` after event N: on to the terminal event
      pending_.append(bytes);
      if (!piece.event_end) return;
      if (piece.terminal) {
        phase_ = Phase::kForward;
        EmitBody(at, pending_);
      }
      pending_.clear();
      return;
    case Phase::kForward:
      break;
  }
  if (!splitter_) {  // a body without events goes out as it comes
    EmitBody(at, bytes);
    return;
  }
  pending_.append(bytes);
  if (!piece.event_end) return;
  const bool before_terminal =
      piece.terminal && !cut_done_ && !end_.after_event && end_.kind != EndKind::kDone;
  if (before_terminal) {  // a cut "after all content events" comes before the terminal one
    const std::string terminal = std::exchange(pending_, {});
    ReachCut(at);
    if (phase_ == Phase::kBytes) ForwardBudget(terminal, at);
    return;
  }
  EmitBody(at, pending_);
  pending_.clear();
  ++events_;
  if (cut_done_) return;
  ApplyFaults(events_, at);
  if (phase_ == Phase::kForward && end_.after_event &&
      static_cast<std::uint64_t>(*end_.after_event) == events_) {
    ReachCut(at);
  }
}

void ProxyExchange::ForwardBudget(std::string_view bytes, Duration at) {
  const std::size_t n = std::min(budget_, bytes.size());
  EmitBody(at, bytes.substr(0, n));
  budget_ -= n;
  if (budget_ == 0) Terminate(at);
}

void ProxyExchange::ApplyFaults(std::uint64_t events, Duration at) {
  while (next_fault_ < faults_.size() && phase_ == Phase::kForward &&
         static_cast<std::uint64_t>(faults_[next_fault_].after_event) <= events) {
    const scenario::EventFault& fault = faults_[next_fault_++];
    Note(fmt::format("{}@{}", scenario::ToString(fault.kind), fault.after_event));
    if (fault.kind == FaultKind::kDelay || fault.kind == FaultKind::kStall) {
      if (fault.wait.forever) {  // a stall forever: nothing more, until the client gives up
        Push(Action::Kind::kHold, at);
        EndUpstream(provider::EndKind::kClientClosed, at, "the proxy stalled the stream");
        return;
      }
      release_ = std::max(release_, at) + fault.wait.duration;
      continue;
    }
    Inject(fault, at);
  }
}

void ProxyExchange::Inject(const scenario::EventFault& fault, Duration at) {
  if (!splitter_ || !framer_) {
    notes_.back() += "(not a stream: not injected)";
    return;
  }
  if (fault.kind == FaultKind::kRaw) {
    EmitBody(at, framer_->Raw(fault.raw));
    return;
  }
  const provider::DialectWriter& writer = provider::WriterFor(*dialect_);
  const provider::SseEvent event =
      fault.kind == FaultKind::kErrorEnvelope || fault.kind == FaultKind::kProviderError
          ? ErrorEvent(fault)
          : provider::MalformedEvent(fault.kind, splitter_->last_json_event(), writer);
  EmitBody(at, framer_->Event(event));
}

// The dialect's in-stream error, as the fake provider writes it; in a Responses stream numbered
// right after the upstream's last event, so that only the error, and no gap, is what a client
// meets.
provider::SseEvent ProxyExchange::ErrorEvent(const scenario::EventFault& fault) const {
  const provider::DialectWriter& writer = provider::WriterFor(*dialect_);
  scenario::Content content;
  content.faults = {fault};
  const provider::ResponseIds ids =
      writer.MakeIds(setup_.seed, static_cast<int>(setup_.index), setup_.now, "");
  provider::SseEvent event = writer.StreamErrorFor(content, 0, ids);
  const std::optional<std::int64_t> last = splitter_->last_sequence_number();
  if (last && event.data.find("\"sequence_number\"") != std::string::npos) {
    nlohmann::ordered_json data = nlohmann::ordered_json::parse(event.data, nullptr, false);
    if (data.is_object()) {
      data["sequence_number"] = *last + 1;
      event.data = data.dump();
    }
  }
  return event;
}

void ProxyExchange::ReachCut(Duration at) {
  cut_done_ = true;
  if (end_.kind == EndKind::kDone) {  // on to the terminal event, leaving out what comes before
    Note(fmt::format("end=done@{}(skip to the terminal event)", events_));
    phase_ = Phase::kSkipping;
    return;
  }
  if (end_.at_byte && *end_.at_byte > 0) {
    phase_ = Phase::kBytes;
    budget_ = static_cast<std::size_t>(*end_.at_byte);
    return;
  }
  Terminate(at);
}

void ProxyExchange::Terminate(Duration at) {
  Note(CutName(end_));
  EndUpstream(provider::EndKind::kClientClosed, at, "the proxy cut the stream");
  switch (end_.kind) {
    case EndKind::kNoTerminator:  // a clean end of the body, without its terminal event
      Emit(at, "0\r\n\r\n");
      Push(request_.keep_alive ? Action::Kind::kFinish : Action::Kind::kClose, at);
      return;
    case EndKind::kReset:
      Push(Action::Kind::kReset, at);
      return;
    case EndKind::kStall:
      if (end_.wait.forever) {
        Push(Action::Kind::kHold, at);
        return;
      }
      release_ = std::max(release_, at) + end_.wait.duration;
      Push(Action::Kind::kClose, at);
      return;
    default:  // kClose, kNoFinalChunk: the connection ends where the body stops
      Push(Action::Kind::kClose, at);
      return;
  }
}

// The upstream's body ended before a fault's or the cut's place: say what never happened.
void ProxyExchange::NoteUnreached() {
  for (std::size_t i = next_fault_; i < faults_.size(); ++i) {
    Note(fmt::format("{}@{}(not reached: {} events)", scenario::ToString(faults_[i].kind),
                     faults_[i].after_event, events_));
  }
  next_fault_ = faults_.size();
  const bool cut = end_.kind != EndKind::kDone || end_.after_event.has_value();
  if (cut && !cut_done_) Note(CutName(end_) + fmt::format("(not reached: {} events)", events_));
  if (phase_ == Phase::kBytes) Note(CutName(end_) + "(the body ended before the byte)");
}

}  // namespace faultline::proxy
