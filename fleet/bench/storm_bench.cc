// Simulator speed on the storm scenario (built here, so the benchmark needs no files): simulated
// attempts per CPU second on one core, and the resident memory of a million-client closed fleet.
// fleet/bench/compare_simpy.sh runs this and the SimPy model of the same storm (simpy_storm.py)
// in turn and prints the ratios.
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>

#include "fleet/bench/storm_spec.h"
#include "fleet/simulation.h"

namespace faultline::fleet {
namespace {

using namespace std::chrono_literals;

void BM_Storm(benchmark::State& state) {
  const scenario::FleetSpec spec = StormSpec();
  const NamedPolicy policy = *ResolvePolicy("openai-node");
  std::uint64_t attempts = 0, calls = 0, seed = 1;
  for (auto _ : state) {
    const PolicyMeasures m = Simulate(RunInput{&spec, nullptr, &policy, seed++, {}});
    attempts += m.attempts;
    calls += m.calls;
    benchmark::DoNotOptimize(m.succeeded);
  }
  state.counters["attempts_per_s"] =
      benchmark::Counter(static_cast<double>(attempts), benchmark::Counter::kIsRate);
  state.counters["attempts_per_run"] =
      static_cast<double>(attempts) / static_cast<double>(state.iterations());
  // Attempts per logical call, to check against the SimPy model's (compare_simpy.sh).
  state.counters["amplification"] = static_cast<double>(attempts) / static_cast<double>(calls);
}
// Rates are per CPU second of this thread (the machine may be shared; wall time is reported too).
BENCHMARK(BM_Storm)->Unit(benchmark::kMillisecond);

std::int64_t RssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

// A million closed-population clients, each calling, thinking 10 s and calling again, for 20 s
// of virtual time against an unlimited provider: the peak resident set of the whole process.
void BM_MillionClients(benchmark::State& state) {
  scenario::FleetSpec spec;
  spec.clients = 1'000'000;
  spec.horizon = 20s;
  spec.workload.kind = scenario::FleetWorkload::Kind::kClosed;
  spec.workload.think = 10s;
  const NamedPolicy policy = *ResolvePolicy("openai-node");
  std::uint64_t attempts = 0;
  for (auto _ : state) {
    const PolicyMeasures m = Simulate(RunInput{&spec, nullptr, &policy, 1, {}});
    attempts += m.attempts;
  }
  state.counters["attempts_per_s"] =
      benchmark::Counter(static_cast<double>(attempts), benchmark::Counter::kIsRate);
  state.counters["peak_rss_MiB"] = static_cast<double>(RssKb()) / 1024.0;
}
BENCHMARK(BM_MillionClients)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace faultline::fleet
