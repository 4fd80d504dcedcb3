// Judged virtual runs per CPU-second: the built-in catalogue against the in-process reference
// client in virtual time, as `faultline run --time virtual --jobs 1 --repeat R` makes them
// (harness::RunAll: run, judge, metrics, fingerprint), without loading the catalogue or writing
// the report files.
//   BM_VirtualCatalogue/R/0 - every scenario R times, each result whole (its trace for the
//                             reports, the judge's bands on it), as a caller of RunAll gets it;
//   BM_VirtualCatalogue/R/1 - the same slimmed as `--no-reports` keeps them (no trace built).
// Counter runs_per_cpu_s: runs over process CPU time (the runner's worker thread counts).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <vector>

#include "harness/runner.h"
#include "scenarios/loader.h"

namespace faultline::harness::bench {
namespace {

const std::vector<scenario::Scenario>& Catalogue() {
  static const std::vector<scenario::Scenario> kCatalogue = [] {
    auto loaded = scenario::LoadBuiltinCatalog();
    if (!loaded) std::abort();  // the embedded catalogue is checked by scenarios_tests
    return std::move(*loaded);
  }();
  return kCatalogue;
}

void BM_VirtualCatalogue(benchmark::State& state) {
  RunnerOptions options;
  options.world = WorldChoice::kVirtual;
  options.jobs = 1;
  options.repeat = static_cast<int>(state.range(0));
  options.slim_runs = state.range(1) != 0;
  const std::vector<scenario::Scenario>& catalogue = Catalogue();
  std::size_t runs = 0;
  for (auto _ : state) {
    auto result = RunAll(catalogue, options, {});
    if (!result || result->failed() + result->errors() > 0) {
      state.SkipWithError("the reference client failed a catalogue scenario");
      return;
    }
    runs += result->scenarios.size();
    benchmark::DoNotOptimize(result->fingerprint);
  }
  state.counters["runs"] = static_cast<double>(runs) / static_cast<double>(state.iterations());
  state.counters["runs_per_cpu_s"] =
      benchmark::Counter(static_cast<double>(runs), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_VirtualCatalogue)
    ->Args({1, 0})
    ->Args({40, 0})
    ->Args({40, 1})
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace faultline::harness::bench
