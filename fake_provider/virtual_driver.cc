// VirtualExchange: a response plan executed against a virtual clock.
//
// Steps start at arrived + step.at. A finite stall needs no action of its own (the next step has
// its own time), so the exchange skips it; a stall "forever" leaves nothing to do until the
// client closes. Heartbeats write at at + k*every for every k >= 1 with k*every <= length (the
// real server's rule too); a beat due with the next step goes out first.
#include "fake_provider/virtual_driver.h"

#include <utility>

namespace faultline::provider {
namespace {

using Kind = PlanStep::Kind;

bool IsWait(const PlanStep& step) {
  return step.kind == Kind::kStall || step.kind == Kind::kHeartbeat;
}

// A wait that never writes and ends on its own: nothing happens at its start.
bool IsSilentFiniteWait(const PlanStep& step) {
  if (!IsWait(step) || !step.length) return false;
  return step.kind == Kind::kStall || step.every.count() <= 0 || step.every > *step.length;
}

bool BeatWithinWindow(const PlanStep& step, Duration offset_in_step) {
  return !step.length || offset_in_step <= *step.length;
}

}  // namespace

VirtualExchange::VirtualExchange(ResponsePlan plan, Duration arrived, Journal* journal,
                                 std::uint64_t entry_index)
    : plan_(std::move(plan)), arrived_(arrived), journal_(journal), entry_index_(entry_index) {}

std::optional<Duration> VirtualExchange::NextActionAt() const {
  if (finished_) return std::nullopt;
  std::optional<Duration> beat;
  if (in_heartbeat_) {
    const PlanStep& step = plan_.steps[next_step_ - 1];
    if (BeatWithinWindow(step, next_heartbeat_ - (arrived_ + step.at))) beat = next_heartbeat_;
  }
  std::size_t index = next_step_;
  while (index < plan_.steps.size() && IsSilentFiniteWait(plan_.steps[index])) ++index;

  std::optional<Duration> step_at;
  if (index < plan_.steps.size()) {
    const PlanStep& step = plan_.steps[index];
    if (step.kind == Kind::kHeartbeat && step.every.count() > 0) {
      step_at = arrived_ + step.at + step.every;  // its first beat
    } else if (!IsWait(step)) {
      step_at = arrived_ + step.at;
    }  // else a silent wait forever: only the client can end it
  } else if (!plan_.steps.empty()) {
    // Every step has started: the plan completes when the last one ends.
    const PlanStep& last = plan_.steps.back();
    if (!IsWait(last)) {
      step_at = arrived_ + last.at;
    } else if (last.length) {
      step_at = arrived_ + last.at + *last.length;
    }
  } else {
    step_at = arrived_;
  }
  if (beat && (!step_at || *beat <= *step_at)) return beat;
  return step_at;
}

std::vector<PipeEvent> VirtualExchange::AdvanceTo(Duration now) {
  std::vector<PipeEvent> out;
  for (std::optional<Duration> at = NextActionAt(); at && *at <= now; at = NextActionAt()) {
    if (in_heartbeat_ && *at == next_heartbeat_) {
      const PlanStep& step = plan_.steps[next_step_ - 1];
      if (BeatWithinWindow(step, next_heartbeat_ - (arrived_ + step.at))) {
        Write(out, step.bytes, *at);
        next_heartbeat_ += step.every;
        continue;
      }
    }
    in_heartbeat_ = false;
    while (next_step_ < plan_.steps.size() && IsSilentFiniteWait(plan_.steps[next_step_])) {
      ++next_step_;
    }
    if (next_step_ == plan_.steps.size()) {
      Complete(out, *at);
      continue;
    }
    Start(out, plan_.steps[next_step_++], *at);
  }
  return out;
}

void VirtualExchange::Start(std::vector<PipeEvent>& out, const PlanStep& step, Duration at) {
  switch (step.kind) {
    case Kind::kSend:
      Write(out, step.bytes, at);
      break;
    case Kind::kHeartbeat:  // `at` is its first beat
      in_heartbeat_ = true;
      Write(out, step.bytes, at);
      next_heartbeat_ = at + step.every;
      break;
    case Kind::kClose:
    case Kind::kReset: {
      const bool reset = step.kind == Kind::kReset;
      out.push_back({reset ? PipeEvent::Kind::kReset : PipeEvent::Kind::kClose, at, {}});
      End(reset ? EndKind::kResetByServer : EndKind::kClosedByServer, at);
      connection_open_ = false;
      break;
    }
    case Kind::kStall:  // never started: a finite one is skipped, a forever one waits
      break;
  }
}

void VirtualExchange::Write(std::vector<PipeEvent>& out, const std::string& bytes, Duration at) {
  out.push_back({PipeEvent::Kind::kBytes, at, bytes});
  if (journal_ != nullptr) {
    journal_->RecordWrite(entry_index_, WriteRecord{at, at, bytes.size()});
  }
}

void VirtualExchange::Complete(std::vector<PipeEvent>& out, Duration at) {
  if (!plan_.keep_alive) {
    out.push_back({PipeEvent::Kind::kClose, at, {}});
    connection_open_ = false;
  }
  End(EndKind::kCompleted, at);
}

void VirtualExchange::End(EndKind kind, Duration at) {
  finished_ = true;
  if (journal_ != nullptr) journal_->End(entry_index_, kind, at);
}

bool VirtualExchange::StallingAt(Duration now) const {
  for (const PlanStep& step : plan_.steps) {
    if (!IsWait(step)) continue;
    const Duration from = arrived_ + step.at;
    if (now >= from && (!step.length || now < from + *step.length)) return true;
  }
  return false;
}

void VirtualExchange::ClientClosed(Duration now) {
  if (finished_) {
    connection_open_ = false;
    return;
  }
  End(StallingAt(now) ? EndKind::kStalledClientGaveUp : EndKind::kClientClosed, now);
  connection_open_ = false;
}

bool VirtualExchange::finished() const { return finished_; }

bool VirtualExchange::keep_alive() const {
  return finished_ && connection_open_ && plan_.keep_alive;
}

std::vector<PipeEvent> RunVirtually(const ResponsePlan& plan,
                                    std::optional<Duration> client_closes_at, Duration horizon) {
  VirtualExchange exchange(plan, Duration{0}, nullptr, 0);
  std::vector<PipeEvent> out;
  const auto append = [&out](std::vector<PipeEvent> events) {
    for (PipeEvent& event : events) out.push_back(std::move(event));
  };
  while (!exchange.finished()) {
    const std::optional<Duration> next = exchange.NextActionAt();
    if (client_closes_at && (!next || *next > *client_closes_at)) {
      append(exchange.AdvanceTo(*client_closes_at));
      exchange.ClientClosed(*client_closes_at);
      break;
    }
    if (!next || *next > horizon) break;
    append(exchange.AdvanceTo(*next));
  }
  return out;
}

}  // namespace faultline::provider
