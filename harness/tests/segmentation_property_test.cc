// Property: the reference client's verdict on a response is a function of its bytes, never of
// how TCP cut them into segments (issue 14).
//
// For every response the built-in catalogue scripts (each entry of `responses:` and each chaos
// choice, in every scenario), the fake provider renders the plan's bytes; one ref::Call attempt
// (max_attempts 1, no timer ever fires) is fed those bytes whole, byte by byte and at seeded
// random cuts, and must reach the same verdict each time: the committed text and tool calls, or
// the failure's class and code, or still waiting. Hostile variants of each response (garbage
// after the last chunk, a garbage head, a trailer over 64 KiB) must be just as stable.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/plan/plan_compiler.h"
#include "harness/worlds/request_body.h"
#include "reference_impl/call.h"
#include "scenarios/loader.h"
#include "scenarios/scripted_responses.h"

namespace faultline::harness {
namespace {

using std::chrono::milliseconds;
using Time = ref::PolicyClock::time_point;

const Time kNow = Time(std::chrono::hours(1));
const provider::WallTime kWall{std::chrono::seconds(1'767'225'600)};  // 2026-01-01

// How a plan ends the connection after its bytes.
enum class Ending { kOpen, kClose, kReset };

struct Wire {
  std::string bytes;
  Ending ending = Ending::kOpen;
  bool forever = false;  // a stall or heartbeat without end: nothing after it is ever sent
};

// At most this many heartbeats of an open-ended heartbeat step are put on the wire.
constexpr int kMaxHeartbeats = 5;

// The plan's bytes in time order (heartbeats unrolled) and how the connection ends.
Wire WireOf(const provider::ResponsePlan& plan) {
  std::vector<std::pair<provider::Duration, std::string_view>> writes;
  Wire wire;
  for (const provider::PlanStep& step : plan.steps) {
    switch (step.kind) {
      case provider::PlanStep::Kind::kSend:
        writes.emplace_back(step.at, step.bytes);
        break;
      case provider::PlanStep::Kind::kHeartbeat: {
        const auto every = std::max(step.every, provider::Duration(1));
        const auto count = step.length ? std::min<std::int64_t>(*step.length / every, 50)
                                       : std::int64_t{kMaxHeartbeats};
        for (std::int64_t k = 1; k <= count; ++k)
          writes.emplace_back(step.at + k * every, step.bytes);
        break;
      }
      case provider::PlanStep::Kind::kClose:
        wire.ending = Ending::kClose;
        break;
      case provider::PlanStep::Kind::kReset:
        wire.ending = Ending::kReset;
        break;
      case provider::PlanStep::Kind::kStall:
        break;
    }
    const bool endless = (step.kind == provider::PlanStep::Kind::kStall ||
                          step.kind == provider::PlanStep::Kind::kHeartbeat) &&
                         !step.length;
    if (endless) {
      wire.forever = true;
      break;
    }
  }
  std::ranges::stable_sort(writes, {}, &decltype(writes)::value_type::first);
  for (const auto& [at, bytes] : writes) wire.bytes += bytes;
  // A plan that is not kept alive is closed after its last step, unless that step never ends.
  if (wire.ending == Ending::kOpen && !plan.keep_alive && !wire.forever) {
    wire.ending = Ending::kClose;
  }
  return wire;
}

// What one attempt concluded.
struct Verdict {
  std::string kind = "waiting";  // "committed", "failed" or "waiting"
  std::string text;              // committed text and tool calls, or failure class and code
  friend bool operator==(const Verdict&, const Verdict&) = default;
};

std::ostream& operator<<(std::ostream& out, const Verdict& verdict) {
  return out << verdict.kind << " [" << verdict.text.substr(0, 200) << "]";
}

ref::RetryPolicy OneAttempt() {
  ref::RetryPolicy policy;
  policy.max_attempts = 1;
  return policy;
}

ref::CallRequest RequestFor(const scenario::Scenario& scenario) {
  ref::CallRequest request;
  request.dialect = *ref::ParseDialect(scenario::ToString(scenario.dialect));
  request.base_url.host = "127.0.0.1";
  request.api_key = "sk-faultline-test";
  request.body = RequestBody(scenario.dialect, scenario.request).dump();
  request.stream = scenario.request.stream;
  return request;
}

Verdict Drive(const ref::CallRequest& request, const std::vector<std::string_view>& pieces,
              Ending ending) {
  ref::Call call(request, OneAttempt(), {});
  call.Start(kNow, std::chrono::system_clock::time_point(std::chrono::seconds(1'767'225'600)));
  call.Connected(kNow);
  for (std::string_view piece : pieces) call.BytesReceived(piece, kNow);
  if (ending == Ending::kClose) call.ConnectionClosed(kNow);
  if (ending == Ending::kReset) call.ConnectionFailed(ref::TransportKind::kReset, "reset", kNow);
  Verdict verdict;
  for (const ref::LifecycleEvent& event : call.TakeEvents()) {
    if (event.type == ref::EventType::kCommitted) {
      verdict.kind = "committed";
      verdict.text = event.committed->text;
      for (const ref::ToolCall& tool : event.committed->tool_calls) {
        verdict.text += "|" + tool.name + "(" + tool.arguments + ")";
      }
    } else if (event.type == ref::EventType::kFailed) {
      verdict.kind = "failed";
      verdict.text = std::string(ToString(event.failure->failure_class)) + "/" +
                     std::string(ToString(event.failure->code));
    }
  }
  return verdict;
}

// The ways the bytes are cut: whole, in pieces of `step` bytes (1: byte by byte), and at seeded
// random cuts.
std::vector<std::vector<std::string_view>> Segmentations(std::string_view bytes, std::size_t step,
                                                         std::mt19937& rng) {
  std::vector<std::vector<std::string_view>> out{{bytes}};
  std::vector<std::string_view> small;
  for (std::size_t at = 0; at < bytes.size(); at += step) small.push_back(bytes.substr(at, step));
  out.push_back(std::move(small));
  for (int round = 0; round < 4; ++round) {
    std::vector<std::size_t> cuts{0, bytes.size()};
    const int count = std::uniform_int_distribution<int>(1, 24)(rng);
    for (int i = 0; i < count; ++i) {
      cuts.push_back(std::uniform_int_distribution<std::size_t>(0, bytes.size())(rng));
    }
    std::ranges::sort(cuts);
    std::vector<std::string_view> pieces;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      pieces.push_back(bytes.substr(cuts[i], cuts[i + 1] - cuts[i]));
    }
    out.push_back(std::move(pieces));
  }
  return out;
}

// Requires every segmentation to reach the whole-feed verdict, and returns it. `step` as for
// Segmentations().
Verdict ExpectStable(const ref::CallRequest& request, const Wire& wire, std::size_t step,
                     std::mt19937& rng, const std::string& what) {
  const auto segmentations = Segmentations(wire.bytes, step, rng);
  const Verdict whole = Drive(request, segmentations.front(), wire.ending);
  for (std::size_t i = 1; i < segmentations.size(); ++i) {
    EXPECT_EQ(Drive(request, segmentations[i], wire.ending), whole)
        << what << ": " << segmentations[i].size() << " pieces";
  }
  return whole;
}

// Hostile variants of a well-formed response.
std::vector<std::pair<std::string, Wire>> HostileVariants(const Wire& wire) {
  std::vector<std::pair<std::string, Wire>> out;
  constexpr std::string_view kLastChunk = "0\r\n\r\n";
  if (wire.bytes.ends_with(kLastChunk)) {
    const std::string body = wire.bytes.substr(0, wire.bytes.size() - kLastChunk.size());
    out.push_back({"bad chunk header after the data", {body + "zz;bad\r\n", wire.ending}});
    out.push_back(
        {"trailer over 64 KiB",
         {body + "0\r\nx-huge: " + std::string(70'000, 't') + "\r\n\r\n", Ending::kOpen}});
  }
  const std::size_t line_end = wire.bytes.find("\r\n");
  if (wire.bytes.starts_with("HTTP/1.1 ") && line_end != std::string::npos) {
    out.push_back(
        {"garbage status code", {"HTTP/1.1 2x0 OK" + wire.bytes.substr(line_end), wire.ending}});
    out.push_back(
        {"garbage header line",
         {wire.bytes.substr(0, line_end + 2) + "Not A Header\r\n" + wire.bytes.substr(line_end + 2),
          wire.ending}});
  }
  return out;
}

TEST(SegmentationPropertyTest, EveryCatalogueResponseGetsOneVerdictWhateverTheSplit) {
  auto catalogue = scenario::LoadBuiltinCatalog();
  ASSERT_TRUE(catalogue.has_value());
  ASSERT_FALSE(catalogue->empty());
  std::mt19937 rng(20'240'614);
  int responses = 0;
  int committed = 0;
  for (const scenario::Scenario& scenario : *catalogue) {
    const provider::CompiledScenario compiled(scenario);
    const ref::CallRequest request = RequestFor(scenario);
    const auto specs = scenario::ScriptedResponses(scenario);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const provider::ResponsePlan plan =
          compiled.Plan(*specs[i], {.attempt = static_cast<int>(i) + 1,
                                    .stream = scenario.request.stream,
                                    .seed = 7,
                                    .now = kWall,
                                    .input_tokens = 12});
      const Wire wire = WireOf(plan);
      const std::string what = scenario.name + " response " + std::to_string(i + 1);
      const std::size_t step = wire.bytes.size() > 64 * 1024 ? 7 : 1;  // byte by byte unless big
      const Verdict verdict = ExpectStable(request, wire, step, rng, what);
      ++responses;
      if (verdict.kind == "committed") ++committed;
      // A response the provider calls a committable answer is committed, with its text.
      if (plan.truth.answer && plan.truth.tool_arguments.empty() && !wire.forever) {
        EXPECT_EQ(verdict.kind, "committed") << what;
        EXPECT_TRUE(verdict.text.starts_with(*plan.truth.answer)) << what << ": " << verdict;
      }
      for (const auto& [variant, hostile] : HostileVariants(wire)) {
        // Cheaper cuts for the variants (one is over 64 KiB); the originals went byte by byte.
        ExpectStable(request, hostile, /*step=*/97, rng, what + " with " + variant);
      }
    }
  }
  EXPECT_GT(responses, 100);
  EXPECT_GT(committed, 30);
}

// The case the issue names: a complete `data: [DONE]` followed by a bad chunk header commits
// whether it arrives in one write or two.
TEST(SegmentationPropertyTest, TerminatorThenGarbageCommitsInOneWriteOrTwo) {
  scenario::Scenario scenario;
  scenario.name = "inline/done-then-garbage";
  const ref::CallRequest request = RequestFor(scenario);
  const std::string sse =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}"
      "\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
      "data: [DONE]\n\n";
  char size[16];
  std::snprintf(size, sizeof size, "%zx\r\n", sse.size());
  const std::string bytes =
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n" +
      std::string(size) + sse + "\r\nzz\r\n";
  const std::size_t garbage = bytes.rfind("zz");
  const Verdict one = Drive(request, {bytes}, Ending::kOpen);
  const Verdict two =
      Drive(request,
            {std::string_view(bytes).substr(0, garbage), std::string_view(bytes).substr(garbage)},
            Ending::kOpen);
  EXPECT_EQ(one, (Verdict{"committed", "Hi"}));
  EXPECT_EQ(two, one);
}

}  // namespace
}  // namespace faultline::harness
