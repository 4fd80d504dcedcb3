// A cassette played back as a plan: the recorded head and body writes at their recorded offsets
// (times time_scale, after headers_delay), with the entry's faults overlaid at event N.
//
// Events are found in the recorded bytes by the reference client's decoders (event_splitter.h),
// as the proxy finds them in live bytes, so "after event 3" counts what a client counts. Without
// an overlay the body goes out as it was recorded, write for write, in the recorded framing
// (chunked: one chunk per recorded write; content-length; or until the connection closes). An
// overlay re-frames the body chunked, since a cut or an injection changes its length.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fake_provider/plan/plan_internal.h"
#include "fake_provider/wire/event_splitter.h"

namespace faultline::provider::plan_internal {
namespace {

using scenario::Cassette;
using FaultKind = scenario::EventFault::Kind;
using EndKind = scenario::Termination::Kind;

bool SameName(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

std::string_view MediaType(std::string_view type) {
  type = type.substr(0, type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  return type;
}

enum class Framing { kChunked, kLength, kUntilClose };

class Player {
 public:
  Player(const scenario::ResponseSpec& spec, const DialectWriter& writer, scenario::Dialect dialect)
      : spec_(spec),
        cassette_(spec.cassette->cassette),
        timeline_(0, Duration{0}),
        faults_(spec.content.faults),
        end_(spec.content.end) {
    std::ranges::stable_sort(faults_, {}, &scenario::EventFault::after_event);
    const bool success = cassette_.status >= 200 && cassette_.status <= 299;
    overlay_ = success && (!faults_.empty() || end_.kind != EndKind::kDone || end_.after_event);
    framing_ = Framing::kUntilClose;
    for (const scenario::CassetteHeader& header : cassette_.headers) {
      if (SameName(header.name, "content-type")) outcome_.content_type = header.value;
      if (SameName(header.name, "content-length")) framing_ = Framing::kLength;
      if (SameName(header.name, "transfer-encoding") &&
          header.value.find("chunked") != std::string::npos) {
        framing_ = Framing::kChunked;
      }
    }
    if (overlay_) framing_ = Framing::kChunked;
    outcome_.status = cassette_.status;
    const ref::Dialect ref_dialect = RefDialect(dialect);
    if (MediaType(outcome_.content_type) == ref::StreamMediaType(ref_dialect)) {
      splitter_.emplace(ref_dialect);
      outcome_.stream = true;
    }
    (void)writer;
  }

  ResponsePlan Play(int attempt) {
    Head();
    for (const scenario::CassetteWrite& write : cassette_.writes) {
      if (phase_ == Phase::kEnded) break;
      if (!splitter_) {
        OnPiece(write.bytes, EventSplitter::Piece{write.bytes.size(), false}, When(write.at));
        continue;
      }
      std::size_t offset = 0;
      for (const EventSplitter::Piece& piece : splitter_->Split(write.bytes)) {
        // Each piece's own time: a delay overlaid inside a write moves what follows it.
        OnPiece(std::string_view(write.bytes).substr(offset, piece.size), piece, When(write.at));
        offset += piece.size;
      }
    }
    if (phase_ != Phase::kEnded) Finish(When(cassette_.end_at));
    Flush();
    ResponsePlan plan;
    plan.attempt = attempt;
    plan.status = cassette_.status;
    plan.keep_alive = keep_alive_;
    plan.steps = timeline_.Take();
    plan.summary = Summary();
    return plan;
  }

  CassetteOutcome& outcome() { return outcome_; }

 private:
  enum class Phase { kForward, kBytes, kEnded };

  Duration When(Duration recorded) const {
    const double scaled = static_cast<double>(recorded.count()) * spec_.cassette->time_scale;
    return spec_.headers_delay + Duration(std::llround(scaled)) + shift_;
  }

  void Head() {
    const std::string_view reason =
        cassette_.reason.empty() ? ReasonPhrase(cassette_.status) : cassette_.reason;
    std::string head = fmt::format("HTTP/1.1 {} {}\r\n", cassette_.status, reason);
    for (const scenario::CassetteHeader& header : cassette_.headers) {
      const bool framing =
          SameName(header.name, "content-length") || SameName(header.name, "transfer-encoding");
      if (overlay_ && framing) continue;
      head += fmt::format("{}: {}\r\n", header.name, header.value);
    }
    if (overlay_) head += "transfer-encoding: chunked\r\n";
    head += "\r\n";
    Send(When(cassette_.head_at), head);
    ApplyFaults(0, When(cassette_.head_at));
    if (phase_ == Phase::kForward && end_.after_event == 0) ReachCut(When(cassette_.head_at));
  }

  // Body bytes due at `at`: those due at one instant go out as one write (one chunk), so a
  // recorded write stays one write, whichever events it holds.
  void Body(Duration at, std::string_view bytes) {
    if (bytes.empty()) return;
    if (!run_.empty() && run_at_ != at) Flush();
    run_at_ = at;
    run_.append(bytes);
    if (outcome_.body.size() < kHintBodyBytes * 64) outcome_.body.append(bytes);
  }

  void Flush() {
    if (run_.empty()) return;
    timeline_.Send(run_at_, framing_ == Framing::kChunked ? Chunk(run_) : run_);
    run_.clear();
  }
  void Send(Duration at, std::string_view bytes) {
    Flush();
    timeline_.Send(at, bytes);
  }
  void Add(PlanStep step) {
    Flush();
    timeline_.Add(std::move(step));
  }

  void OnPiece(std::string_view bytes, const EventSplitter::Piece& piece, Duration at) {
    if (phase_ == Phase::kEnded) return;
    if (phase_ == Phase::kBytes) return Budget(bytes, at);
    if (!splitter_) return Body(at, bytes);
    pending_.append(bytes);
    if (!piece.event_end) return;
    const bool before_terminal =
        piece.terminal && !end_.after_event && overlay_ && !(end_.kind == EndKind::kDone);
    if (before_terminal) {  // a cut "after all content events" comes before the terminal one
      const std::string terminal = std::exchange(pending_, {});
      ReachCut(at);
      if (phase_ == Phase::kBytes) Budget(terminal, at);
      return;
    }
    Body(at, pending_);
    pending_.clear();
    ++events_;
    Observe(piece, at);
    ApplyFaults(events_, at);
    if (phase_ == Phase::kForward && end_.after_event &&
        static_cast<std::uint64_t>(*end_.after_event) == events_) {
      ReachCut(at);
    }
  }

  // What a client has seen once this event went out.
  void Observe(const EventSplitter::Piece& piece, Duration at) {
    if (!outcome_.events_sent) outcome_.first_event = at;
    outcome_.events_sent = true;
    if (piece.output && !outcome_.output_sent) outcome_.first_output = at;
    outcome_.output_sent = outcome_.output_sent || piece.output;
    outcome_.terminal_sent = outcome_.terminal_sent || piece.terminal;
    outcome_.error_event = outcome_.error_event || piece.error;
    outcome_.malformed = splitter_->malformed();
    outcome_.text = splitter_->text();
    outcome_.tool_arguments = splitter_->tool_arguments();
    outcome_.tool_call = splitter_->tool_call();
  }

  void ApplyFaults(std::uint64_t events, Duration at) {
    while (next_fault_ < faults_.size() && phase_ == Phase::kForward &&
           static_cast<std::uint64_t>(faults_[next_fault_].after_event) <= events) {
      const scenario::EventFault& fault = faults_[next_fault_++];
      notes_.push_back(fmt::format("{}@{}", scenario::ToString(fault.kind), fault.after_event));
      if (fault.kind == FaultKind::kRaw) {
        Body(at, fault.raw);
        outcome_.raw_injected = true;
        continue;
      }
      if (fault.wait.forever) {
        PlanStep stall = StepAt(PlanStep::Kind::kStall, at);
        Add(std::move(stall));
        outcome_.stalled_forever = true;
        End(false);
        return;
      }
      if (fault.kind == FaultKind::kStall) {
        PlanStep stall = StepAt(PlanStep::Kind::kStall, at);
        stall.length = fault.wait.duration;
        Add(std::move(stall));
      }
      shift_ += fault.wait.duration;  // everything recorded after it comes that much later
    }
  }

  void ReachCut(Duration at) {
    if (end_.at_byte && *end_.at_byte > 0) {
      phase_ = Phase::kBytes;
      budget_ = static_cast<std::size_t>(*end_.at_byte);
      return;
    }
    Terminate(at);
  }

  void Budget(std::string_view bytes, Duration at) {
    const std::size_t n = std::min(budget_, bytes.size());
    Body(at, bytes.substr(0, n));
    budget_ -= n;
    if (budget_ == 0) Terminate(at);
  }

  void Terminate(Duration at) {
    notes_.push_back(fmt::format("end={}@{}{}", scenario::ToString(end_.kind),
                                 end_.after_event ? std::to_string(*end_.after_event) : "terminal",
                                 end_.at_byte ? fmt::format("+{}B", *end_.at_byte) : ""));
    outcome_.whole = false;
    switch (end_.kind) {
      case EndKind::kDone:  // refused by the loader after event N; "before the terminal" only
      case EndKind::kNoTerminator:
        Send(at, kFinalChunk);
        return End(true);
      case EndKind::kNoFinalChunk:
      case EndKind::kClose:
        outcome_.clean_end = false;
        Add(StepAt(PlanStep::Kind::kClose, at));
        return End(false);
      case EndKind::kReset:
        outcome_.clean_end = false;
        Add(StepAt(PlanStep::Kind::kReset, at));
        return End(false);
      case EndKind::kStall: {
        outcome_.clean_end = false;
        PlanStep stall = StepAt(PlanStep::Kind::kStall, at);
        if (!end_.wait.forever) stall.length = end_.wait.duration;
        Add(std::move(stall));
        if (end_.wait.forever) {
          outcome_.stalled_forever = true;
        } else {
          Add(StepAt(PlanStep::Kind::kClose, at + end_.wait.duration));
        }
        return End(false);
      }
    }
  }

  // The recording's own end, when no cut came first.
  void Finish(Duration at) {
    if (!pending_.empty()) Body(at, std::exchange(pending_, {}));  // a last event never ended
    if (next_fault_ < faults_.size() || (overlay_ && end_.after_event)) {
      notes_.push_back("(overlay not reached)");
    }
    switch (cassette_.end) {
      case Cassette::End::kCompleted:
        if (framing_ == Framing::kChunked) Send(at, kFinalChunk);
        if (framing_ == Framing::kUntilClose) Add(StepAt(PlanStep::Kind::kClose, at));
        return End(framing_ != Framing::kUntilClose);
      case Cassette::End::kClosed:
        outcome_.clean_end = false;
        Add(StepAt(PlanStep::Kind::kClose, at));
        return End(false);
      case Cassette::End::kReset:
        outcome_.clean_end = false;
        Add(StepAt(PlanStep::Kind::kReset, at));
        return End(false);
    }
  }

  void End(bool keep_alive) {
    keep_alive_ = keep_alive;
    phase_ = Phase::kEnded;
  }

  std::string Summary() const {
    std::string summary = fmt::format("{} cassette {}", cassette_.status, spec_.cassette->file);
    if (spec_.cassette->time_scale != 1.0) {
      summary += fmt::format(" x{}", spec_.cassette->time_scale);
    }
    if (splitter_) summary += fmt::format(" {} events", events_);
    for (const std::string& note : notes_) summary += " " + note;
    return summary;
  }

  const scenario::ResponseSpec& spec_;
  const Cassette& cassette_;
  Timeline timeline_;
  std::vector<scenario::EventFault> faults_;
  scenario::Termination end_;
  bool overlay_ = false;
  Framing framing_ = Framing::kChunked;
  std::optional<EventSplitter> splitter_;
  CassetteOutcome outcome_;
  Phase phase_ = Phase::kForward;
  Duration shift_{0};
  std::string pending_;
  std::uint64_t events_ = 0;
  std::size_t next_fault_ = 0;
  std::size_t budget_ = 0;
  std::string run_;  // body bytes due at run_at_, not yet written
  Duration run_at_{0};
  bool keep_alive_ = true;
  std::vector<std::string> notes_;
};

}  // namespace

ResponsePlan CassettePlan(const scenario::ResponseSpec& spec, const DialectWriter& writer,
                          scenario::Dialect dialect, int attempt, bool stream_requested) {
  Player player(spec, writer, dialect);
  ResponsePlan plan = player.Play(attempt);
  player.outcome().stream_requested = stream_requested;
  plan.truth = CassetteTruth(player.outcome(), writer.stream_content_type(), dialect);
  plan.truth.silences = SilencesOf(plan.steps);
  plan.truth.hint_fields = HintFieldsOf(plan.status, plan.steps);
  return plan;
}

}  // namespace faultline::provider::plan_internal
