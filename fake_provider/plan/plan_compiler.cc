// CompiledScenario: every response entry rendered once; Plan() fills in ids and dates.
#include "fake_provider/plan/plan_compiler.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "fake_provider/plan/plan_internal.h"

namespace faultline::provider {

using plan_internal::BodyProgram;
using plan_internal::CompiledEntry;
using plan_internal::HeadInput;
using plan_internal::Placeholders;

struct CompiledScenario::Rendered {
  std::string model;
  Placeholders placeholders;
  std::vector<CompiledEntry> entries;  // responses, then chaos choices, then `otherwise`
  // The stateful rate limit's 429 body (the writer's default wording), with holes for ids.
  ByteTemplate rate_limit_body;
  std::string rate_limit_content_type;
  std::vector<scenario::Header> rate_limit_headers;
  // The one part that changes after construction: entries' bodies as requests render them.
  plan_internal::BodyCache bodies;

  const CompiledEntry* Find(const scenario::ResponseSpec& spec) const {
    for (const CompiledEntry& entry : entries) {
      if (entry.spec == &spec) return &entry;
    }
    return nullptr;
  }
};

namespace {

ResponsePlan ConnectionFaultPlan(const CompiledEntry& entry, int attempt) {
  const scenario::ResponseSpec& spec = *entry.spec;
  ResponsePlan plan;
  plan.attempt = attempt;
  plan.keep_alive = false;
  plan.summary = entry.status_summary;
  const bool reset = spec.connection == scenario::ConnectionFault::kResetBeforeHeaders;
  plan.steps.push_back(plan_internal::StepAt(
      reset ? PlanStep::Kind::kReset : PlanStep::Kind::kClose, spec.headers_delay));
  plan.truth = plan_internal::EntryTruth(spec, entry.body, false, "");
  plan.truth.silences = plan_internal::SilencesOf(plan.steps);
  return plan;
}

ResponsePlan StalledForeverPlan(const CompiledEntry& entry, int attempt) {
  ResponsePlan plan;
  plan.attempt = attempt;
  plan.keep_alive = false;
  plan.summary = entry.status_summary;
  plan.steps.push_back(plan_internal::StepAt(PlanStep::Kind::kStall, entry.spec->headers_delay));
  plan.truth = plan_internal::EntryTruth(*entry.spec, entry.body, false, "");
  plan.truth.silences = plan_internal::SilencesOf(plan.steps);
  return plan;
}

std::string_view ContentType(const CompiledEntry& entry, bool sse_body, bool stream_requested) {
  if (entry.spec->content_type) return *entry.spec->content_type;
  if (sse_body) return entry.stream_content_type;
  return stream_requested ? entry.stream_content_type : entry.body_content_type;
}

}  // namespace

CompiledScenario::CompiledScenario(scenario::Scenario scenario)
    : CompiledScenario(std::move(scenario), nullptr) {}

CompiledScenario::CompiledScenario(scenario::Scenario scenario, const DialectWriter* writer)
    : scenario_(std::move(scenario)),
      writer_(writer != nullptr ? writer : &WriterFor(scenario_.dialect)),
      rendered_(std::make_unique<Rendered>()) {
  Rendered& rendered = *rendered_;
  rendered.model = scenario_.request.model.empty() ? std::string(writer_->default_model())
                                                   : scenario_.request.model;
  rendered.placeholders = plan_internal::MakePlaceholders(*writer_, rendered.model);
  const auto add = [&](const scenario::ResponseSpec& spec) {
    if (spec.cassette) return;  // played back as recorded (plan_cassette.cc), nothing to render
    rendered.entries.push_back(plan_internal::CompileEntry(spec, *writer_, rendered.placeholders));
  };
  for (const scenario::ResponseSpec& spec : scenario_.responses) add(spec);
  if (scenario_.chaos) {
    for (const scenario::Chaos::Choice& choice : scenario_.chaos->faults) add(choice.response);
    add(scenario_.chaos->otherwise);
  }
  if (scenario_.health) add(scenario_.health->failure_response);
  scenario::ErrorSpec rate_limit_error;
  rate_limit_error.kind = scenario::ErrorKind::kRateLimit;
  const Body rate_limit = writer_->ErrorWithIds(rate_limit_error, 429, rendered.placeholders.ids);
  rendered.rate_limit_body = ByteTemplate::WithHoles(rate_limit.bytes, rendered.placeholders.slots);
  rendered.rate_limit_content_type = rate_limit.content_type;
  rendered.rate_limit_headers = rate_limit.headers;
}

CompiledScenario::~CompiledScenario() = default;

ResponsePlan CompiledScenario::Plan(const scenario::ResponseSpec& response,
                                    const PlanRequest& request) const {
  if (response.cassette) {
    return plan_internal::CassettePlan(response, *writer_, scenario_.dialect, request.attempt,
                                       request.stream);
  }
  const CompiledEntry* entry = rendered_->Find(response);
  std::optional<CompiledEntry> adhoc;  // an entry that is not part of this scenario
  if (entry == nullptr) {
    adhoc = plan_internal::CompileEntry(response, *writer_, rendered_->placeholders);
    entry = &*adhoc;
  }
  const scenario::ResponseSpec& spec = *entry->spec;
  if (spec.connection != scenario::ConnectionFault::kNone) {
    return ConnectionFaultPlan(*entry, request.attempt);
  }
  if (spec.headers_stall && spec.headers_stall->forever) {
    return StalledForeverPlan(*entry, request.attempt);
  }
  const bool use_stream = request.stream && entry->stream.has_value();
  const BodyProgram& program = use_stream ? *entry->stream : entry->body;
  const ResponseIds ids =
      writer_->MakeIds(request.seed, request.attempt, request.now, rendered_->model);
  const SlotValues values = plan_internal::SlotValuesFor(
      rendered_->placeholders, ids, request.input_tokens, entry->output_tokens);

  ResponsePlan plan;
  plan.attempt = request.attempt;
  plan.status = spec.status;
  plan.keep_alive = plan_internal::KeepsAlive(program);
  plan.summary.reserve(entry->status_summary.size() + 1 + program.summary.size());
  plan.summary.append(entry->status_summary);
  if (!program.summary.empty()) plan.summary.append(" ").append(program.summary);

  HeadInput head;
  head.spec = &spec;
  head.request_id_header = writer_->request_id_header();
  head.request_id = ids.request_id;
  head.now = request.now;
  head.chunked = program.chunked;
  head.writer = writer_;
  head.content_type = ContentType(*entry, use_stream, request.stream);
  if (!program.chunked) head.content_length = program.items.front().bytes.RenderedSize(values);
  if (!use_stream) head.extra = entry->body_headers;
  plan_internal::BodyMarks marks;
  if (adhoc) {  // rendered for this request alone: nothing to reuse
    plan_internal::RenderedSteps rendered =
        plan_internal::RenderSteps(spec, program, plan_internal::Head(spec.status, head), values);
    plan.steps = std::move(rendered.steps);
    marks = rendered.marks;
  } else {
    plan.steps = rendered_->bodies.Steps(spec, program, plan_internal::Head(spec.status, head),
                                         values, marks);
  }
  plan.truth = plan_internal::EntryTruth(spec, program, use_stream, head.content_type,
                                         request.stream, writer_->stream_content_type());
  if (plan.truth.streamed) {
    plan.truth.output_from = marks.first_output;
    plan.truth.events_from = marks.first_event;
  }
  plan.truth.silences = plan_internal::SilencesOf(plan.steps);
  plan.truth.hint_fields = plan_internal::HintFieldsOf(spec.status, plan.steps);
  return plan;
}

ResponsePlan CompiledScenario::ErrorPlan(int status, scenario::ErrorKind kind, std::string message,
                                         std::optional<Duration> retry_after,
                                         const PlanRequest& request) const {
  const ResponseIds ids =
      writer_->MakeIds(request.seed, request.attempt, request.now, rendered_->model);
  Body body;
  if (status == 429 && kind == scenario::ErrorKind::kRateLimit && message.empty()) {
    const SlotValues values =
        plan_internal::SlotValuesFor(rendered_->placeholders, ids, request.input_tokens, 0);
    body = {rendered_->rate_limit_content_type, rendered_->rate_limit_body.Render(values),
            rendered_->rate_limit_headers};
  } else {
    scenario::ErrorSpec error;
    error.kind = kind;
    if (!message.empty()) error.message = std::move(message);
    body = writer_->ErrorWithIds(error, status, ids);
  }
  HeadInput head;
  head.content_type = body.content_type;
  head.request_id_header = writer_->request_id_header();
  head.request_id = ids.request_id;
  head.now = request.now;
  head.retry_after_seconds = retry_after;
  head.content_length = body.bytes.size();
  head.writer = writer_;
  head.extra = std::move(body.headers);
  if (status == 405) head.extra.push_back({"allow", "POST"});

  ResponsePlan plan;
  plan.attempt = request.attempt;
  plan.status = status;
  plan.keep_alive = true;
  plan.summary = fmt::format("{} {}", status, scenario::ToString(kind));
  if (retry_after) {
    plan.summary += fmt::format(" retry-after={}", (retry_after->count() + 999'999) / 1'000'000);
  }
  plan.summary += " (unscripted)";
  PlanStep send = plan_internal::StepAt(PlanStep::Kind::kSend, Duration{0});
  send.bytes = plan_internal::Head(status, head) + body.bytes;
  plan.steps.push_back(std::move(send));
  plan.truth = plan_internal::ErrorTruth(kind);
  plan.truth.hint_fields = plan_internal::HintFieldsOf(status, plan.steps);
  return plan;
}

}  // namespace faultline::provider
