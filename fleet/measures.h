// What a fleet run measures, per policy: counters, a latency histogram, time series, and the
// derived measures (amplification, goodput, percentiles, drain and recovery times).
//
// The simulation (simulation.h) fills the raw counters and series; Finish() derives the rest.
// Every report (report.h) is a pure function of these values. Values only; not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace faultline::fleet {

// Log-linear histogram of durations in microseconds (the layout of HdrHistogram): exact below
// 64 us, then 32 sub-buckets per doubling (about 3 % relative resolution) up to 2^63 us;
// constant memory however many samples, and no floating point on the hot path.
class LatencyHistogram {
 public:
  void Add(std::int64_t micros) {
    ++counts_[static_cast<std::size_t>(IndexOf(micros))];
    ++count_;
  }
  std::uint64_t count() const { return count_; }
  // The q-quantile (0..1) in milliseconds: the upper edge of its bucket; 0 without samples.
  double QuantileMs(double q) const;
  // (milliseconds, fraction of samples at or below) at every occupied bucket, for a CDF plot.
  std::vector<std::pair<double, double>> Cdf() const;
  void Merge(const LatencyHistogram& other);
  // The occupied buckets as (index, count), and back: how result.json keeps the histogram.
  std::vector<std::pair<int, std::uint64_t>> Occupied() const;
  void AddToBucket(int index, std::uint64_t count);

 private:
  static constexpr int kExact = 64;
  static constexpr int kPerDoubling = 32;
  static constexpr int kBuckets = kExact + (63 - 6 + 1) * kPerDoubling;
  static int IndexOf(std::int64_t micros) {
    if (micros < kExact) return static_cast<int>(micros < 0 ? 0 : micros);
    const int exponent = 63 - __builtin_clzll(static_cast<std::uint64_t>(micros));  // >= 6
    const int sub = static_cast<int>((micros >> (exponent - 5)) & (kPerDoubling - 1));
    return kExact + (exponent - 6) * kPerDoubling + sub;
  }
  static double UpperEdgeMs(int index);
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
};

// One step of the time series (`bucket` wide).
struct Bucket {
  std::uint64_t offered = 0;     // logical calls that arrived (started)
  std::uint64_t attempts = 0;    // attempts sent to the provider (its load)
  std::uint64_t retries = 0;     // of which retries
  std::uint64_t succeeded = 0;   // calls that ended with an answer (goodput)
  std::uint64_t failed = 0;      // calls that gave up
  std::uint64_t overloaded = 0;  // overload answers (429/503/529)
  std::uint64_t timeouts = 0;    // attempts the client timed out
  std::uint64_t wasted = 0;      // requests served after their client had given up on them
  double busy_slot_seconds = 0;  // service time started in this step
  std::uint64_t queue_max = 0;   // longest provider queue seen
};

// One gateway layer's traffic (scenario::FleetGateway): requests it received from the layer
// above and tries it sent below. Its amplification times the client's attempts per call times
// every other layer's is the provider requests per call when nothing is shed on the way.
struct LayerMeasures {
  std::string name;
  std::uint64_t received = 0;  // requests from the layer above
  std::uint64_t sent = 0;      // tries to the layer below (the provider for the last layer)
  std::uint64_t retries = 0;   // of which retries
  std::uint64_t timeouts = 0;  // tries its per-try timeout ended
  double amplification = 0;    // sent per received; derived by Finish()
  friend bool operator==(const LayerMeasures&, const LayerMeasures&) = default;
};

struct PolicyMeasures {
  std::string policy;       // profile or file name
  std::string description;  // DescribePolicy
  std::string source;       // the citation

  // Raw counters.
  std::uint64_t calls = 0;
  std::uint64_t succeeded = 0;
  std::uint64_t failed = 0;
  std::uint64_t unfinished = 0;  // still running when the drain limit was reached
  std::uint64_t shed = 0;        // open arrivals that found every client busy
  std::uint64_t attempts = 0;    // attempts made, local rejections included
  std::uint64_t provider_requests = 0;
  std::uint64_t local_rejections = 0;  // adaptive throttling
  std::uint64_t retries = 0;
  std::uint64_t overloaded = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t faults = 0;  // chaos answers
  std::uint64_t served = 0;
  std::uint64_t wasted_requests = 0;
  std::map<std::string, std::uint64_t> give_up_reasons;
  std::vector<LayerMeasures> layers;  // the gateway layers, the clients' first; empty: none
  LatencyHistogram latency;           // every finished call, successful or not
  std::vector<Bucket> series;
  double bucket_seconds = 1;
  int concurrency = 0;  // the provider's slots (0: unlimited), for utilisation
  double horizon_seconds = 0;
  double end_seconds = 0;  // when the last call ended (or the drain limit)
  std::uint64_t events = 0;
  int tokens_per_call = 0;
  int bytes_per_call = 0;
  std::optional<double> trigger_end_seconds;  // the end of the last spike or brownout, if any
  // The provider's capacity (requests/s) from each time (s) on: CapacitySteps (provider_model.h);
  // empty when unlimited, or in a result.json written before it was kept.
  std::vector<std::pair<double, double>> capacity_steps;

  // Derived by Finish().
  double amplification = 0;       // attempts per logical call
  double load_amplification = 0;  // provider requests per logical call
  double success_rate = 0;
  double goodput = 0;  // successful calls per second of the horizon
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, p999_ms = 0;
  std::optional<double> drain_seconds;     // after the horizon; nullopt: did not drain
  std::optional<double> recovery_seconds;  // after the trigger; nullopt: did not recover
  double utilisation = 0;                  // mean busy fraction over the horizon (slots only)
  std::uint64_t wasted_tokens = 0;
  std::uint64_t wasted_bytes = 0;
};

// Recovered: from this bucket on, for kRecoveryBuckets buckets in a row, at least this share of
// the calls offered in a bucket succeed in it.
inline constexpr double kRecoveredShare = 0.9;
inline constexpr int kRecoveryBuckets = 3;

// Derives the measures from the raw counters and series.
void Finish(PolicyMeasures& measures);

}  // namespace faultline::fleet
