// An answer's timed steps (RenderSteps), and the cache that renders a body once and reuses it
// with each request's values written in place (BodyCache).
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fake_provider/plan/plan_internal.h"

namespace faultline::provider::plan_internal {

RenderedSteps RenderSteps(const scenario::ResponseSpec& spec, const BodyProgram& program,
                          std::string head, const SlotValues& values, bool record) {
  RenderedSteps rendered;
  Timeline timeline(program.drip_bytes, program.drip_every);
  Duration at = spec.headers_delay;
  if (spec.headers_stall) {
    PlanStep stall = StepAt(PlanStep::Kind::kStall, at);
    stall.length = spec.headers_stall->duration;
    timeline.Add(std::move(stall));
    at += spec.headers_stall->duration;
  }
  std::string& first_write = timeline.SendBuffer(at);
  rendered.head_step = timeline.step_count() - 1;
  first_write = std::move(head);
  first_write.reserve(first_write.size() + program.size_hint);
  EmitBody(program, values, at, timeline, &rendered.marks, record ? &rendered.recording : nullptr);
  rendered.steps = timeline.Take();
  return rendered;
}

// A program's steps rendered for values of `lengths`, without the head.
struct BodyCache::Body {
  const BodyProgram* program = nullptr;
  Lengths lengths{};
  std::vector<PlanStep> steps;  // steps[head_step] holds what follows the head in its write
  std::size_t head_step = 0;
  std::vector<ValueSpot> spots;
  BodyMarks marks;
  std::size_t bytes = 0;  // of `steps`
};

namespace {

BodyCache::Lengths ValueLengths(const SlotValues& values) {
  BodyCache::Lengths lengths;
  for (std::size_t i = 0; i < kSlotCount; ++i) lengths[i] = values[i].size();
  return lengths;
}

// `cached` without its bytes.
PlanStep CachedStepShape(const PlanStep& cached) {
  PlanStep step;
  step.kind = cached.kind;
  step.at = cached.at;
  step.every = cached.every;
  step.length = cached.length;
  return step;
}

}  // namespace

std::vector<PlanStep> BodyCache::Steps(const scenario::ResponseSpec& spec,
                                       const BodyProgram& program, std::string head,
                                       const SlotValues& values, BodyMarks& marks) {
  const Lengths lengths = ValueLengths(values);
  std::shared_ptr<const Body> body;
  bool keep = false;  // render it for reuse
  {
    std::lock_guard lock(mu_);
    body = FindLocked(program, lengths);
    keep = !body && bodies_.size() < kMaxBodies && bytes_ < kMaxBytes &&
           std::ranges::find(not_reusable_, &program) == not_reusable_.end();
  }
  if (body) {
    marks = body->marks;
    return Filled(*body, head, values);
  }
  RenderedSteps rendered =
      RenderSteps(spec, program, keep ? std::string() : std::move(head), values, /*record=*/keep);
  marks = rendered.marks;
  if (keep) {
    Keep(program, lengths, rendered);
    rendered.steps[rendered.head_step].bytes.insert(0, head);
  }
  return std::move(rendered.steps);
}

std::vector<PlanStep> BodyCache::Filled(const Body& body, std::string_view head,
                                        const SlotValues& values) {
  std::vector<PlanStep> steps;
  steps.reserve(body.steps.size());
  for (std::size_t i = 0; i < body.steps.size(); ++i) {
    const PlanStep& cached = body.steps[i];
    if (i != body.head_step) {
      steps.push_back(cached);
      continue;
    }
    PlanStep& step = steps.emplace_back(CachedStepShape(cached));
    step.bytes.reserve(head.size() + cached.bytes.size());
    step.bytes.append(head).append(cached.bytes);
  }
  for (const ValueSpot& spot : body.spots) {
    const std::string& value = values[static_cast<std::size_t>(spot.slot)];
    const std::size_t offset = spot.offset + (spot.step == body.head_step ? head.size() : 0);
    std::copy(value.begin(), value.end(), steps[spot.step].bytes.begin() + offset);
  }
  return steps;
}

std::shared_ptr<const BodyCache::Body> BodyCache::FindLocked(const BodyProgram& program,
                                                             const Lengths& lengths) const {
  for (const std::shared_ptr<const Body>& body : bodies_) {
    if (body->program == &program && body->lengths == lengths) return body;
  }
  return nullptr;
}

void BodyCache::Keep(const BodyProgram& program, const Lengths& lengths,
                     const RenderedSteps& rendered) {
  std::size_t bytes = 0;
  for (const PlanStep& step : rendered.steps) bytes += step.bytes.size();
  std::lock_guard lock(mu_);
  // Another request may have rendered the same body meanwhile (rendering is done unlocked).
  if (FindLocked(program, lengths)) return;
  if (!rendered.recording.complete || bodies_.size() >= kMaxBodies || bytes_ + bytes > kMaxBytes) {
    // Never tried again: rendering for reuse costs a copy, and this one would not be kept.
    if (std::ranges::find(not_reusable_, &program) == not_reusable_.end()) {
      not_reusable_.push_back(&program);
    }
    return;
  }
  auto body = std::make_shared<Body>();
  body->program = &program;
  body->lengths = lengths;
  body->steps = rendered.steps;  // a copy: the rendering also answers the request at hand
  body->head_step = rendered.head_step;
  body->spots = rendered.recording.spots;
  body->marks = rendered.marks;
  body->bytes = bytes;
  bytes_ += bytes;
  bodies_.push_back(std::move(body));
}

}  // namespace faultline::provider::plan_internal
