// Whatever an adapter writes, the runner judges it and never crashes: the input is a subject's
// stdout (one protocol line per '\n'), replayed against the provider journal of a catalogue
// scenario's virtual run (the scenario picked by the input's hash). Every line goes through
// ParseLine as the real world reads it; the accepted events, with that journal, go through the
// declared-policy reader, the judge, the metrics, the trace's JSON and its fingerprint. Any
// exception or sanitizer report is a finding: a subject's line must never become a runner crash
// (it is at most a subject error).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "harness/judge/declared_policy.h"
#include "harness/judge/judge.h"
#include "harness/judge/metrics.h"
#include "harness/trace/protocol.h"
#include "harness/trace/trace.h"
#include "harness/worlds/virtual_world.h"
#include "scenarios/loader.h"

namespace faultline::harness::fuzz {
namespace {

struct Fixture {
  scenario::Scenario scenario;
  Trace reference;  // the reference client's virtual run: its journal is the provider's side
};

// The catalogue's scenarios with their reference runs, built once per process.
const std::vector<Fixture>& Fixtures() {
  static const std::vector<Fixture> fixtures = [] {
    std::vector<Fixture> out;
    auto catalogue = scenario::LoadBuiltinCatalog();
    if (!catalogue) std::abort();
    for (scenario::Scenario& scenario : *catalogue) {
      auto trace = RunVirtual(scenario, VirtualRunOptions{});
      if (!trace) continue;
      out.push_back(Fixture{std::move(scenario), std::move(*trace)});
    }
    if (out.empty()) std::abort();
    return out;
  }();
  return fixtures;
}

void JudgeLines(std::string_view input) {
  const std::vector<Fixture>& fixtures = Fixtures();
  const Fixture& fixture = fixtures[ref::fuzz::Hash(input) % fixtures.size()];
  Trace trace;
  trace.calls = fixture.reference.calls;
  trace.journal = fixture.reference.journal;
  trace.cancel_at = fixture.reference.cancel_at;
  trace.ended = fixture.reference.ended;
  Duration at{0};
  for (std::size_t start = 0; start <= input.size();) {
    const std::size_t end = std::min(input.find('\n', start), input.size());
    auto event = protocol::ParseLine(input.substr(start, end - start));
    at += std::chrono::milliseconds(7);
    if (event) {
      trace.client.push_back(ClientRecord{at, 0, std::move(*event)});
    } else {
      trace.protocol_errors.push_back(event.error().message);
    }
    start = end + 1;
  }
  trace.ended = std::max(trace.ended, at);
  (void)ReadDeclaredPolicy(trace);
  for (const Tolerance& tolerance : {VirtualTolerance(), RealTolerance()}) {
    (void)Judge(fixture.scenario, trace, tolerance);
  }
  (void)ComputeMetrics(trace);
  (void)TraceToJson(trace).dump();
  (void)Fingerprint(trace);
}

}  // namespace
}  // namespace faultline::harness::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    faultline::harness::fuzz::JudgeLines(faultline::ref::fuzz::AsText(data, size));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "adapter lines: the runner threw: %s\n", error.what());
    std::abort();
  }
  return 0;
}
