#include "fleet/contention.h"

#include <chrono>
#include <cmath>
#include <vector>

#include "fleet/event_queue.h"
#include "reference_impl/classify.h"
#include "reference_impl/http_response.h"
#include "reference_impl/policy.h"

namespace faultline::fleet {
namespace {

constexpr double kNetMeanUs = 10'000;  // Brooker's Net(10, 2), in ms there
constexpr double kNetSdUs = 2'000;
constexpr std::uint64_t kMaxEvents = 50'000'000;  // bounds a run whatever the policy

// The steps of one client's update, carried in Event::token.
enum Step : std::uint32_t { kReadAtServer, kReadReply, kWriteAtServer, kWriteFailed, kWriteOk };

class Model {
 public:
  Model(const NamedPolicy& policy, int clients, std::uint64_t seed)
      : policy_(policy),
        rng_(seed),
        versions_(static_cast<std::size_t>(clients)),
        attempts_(static_cast<std::size_t>(clients)),
        previous_ms_(static_cast<std::size_t>(clients), -1) {
    const ref::HttpHeaders none;
    conflict_.failure =
        ref::ClassifyHttpError({409, none, "", ref::Dialect::kOpenAiChat}, {}).failure;
  }

  // Runs to the end; returns (completion time in us, writes).
  std::pair<Micros, std::uint64_t> Run() {
    for (std::uint32_t c = 0; c < versions_.size(); ++c) Send(0, c, kReadAtServer);
    Micros now = 0;
    for (std::uint64_t n = 0; !queue_.empty() && n < kMaxEvents; ++n) {
      const Event event = queue_.Pop();
      now = event.time;
      Handle(event);
    }
    return {now, writes_};
  }

 private:
  Micros Net() {
    const double normal = ref::StandardNormal(rng_);
    return static_cast<Micros>(std::abs(kNetMeanUs + kNetSdUs * normal));
  }
  void Send(Micros at, std::uint32_t client, std::uint32_t step) {
    queue_.Push(Event{at + Net(), client, step, EventKind::kStartAttempt});
  }
  void Handle(const Event& event) {
    const std::uint32_t c = event.slot;
    switch (event.token) {
      case kReadAtServer:
        versions_[c] = version_;
        Send(event.time, c, kReadReply);
        break;
      case kReadReply:
        Send(event.time, c, kWriteAtServer);
        break;
      case kWriteAtServer:
        ++writes_;
        if (versions_[c] == version_) {
          ++version_;
          Send(event.time, c, kWriteOk);  // the reply ends this client's work
        } else {
          Send(event.time, c, kWriteFailed);
        }
        break;
      case kWriteFailed:
        Backoff(event.time, c);
        break;
      default:
        break;
    }
  }
  void Backoff(Micros now, std::uint32_t c) {
    conflict_.attempt = ++attempts_[c];
    conflict_.now = ref::PolicyClock::time_point(std::chrono::microseconds(now));
    conflict_.previous_delay = std::nullopt;
    if (previous_ms_[c] >= 0) conflict_.previous_delay = std::chrono::milliseconds(previous_ms_[c]);
    const ref::Decision decision = ref::Decide(policy_.policy, conflict_, rng_);
    if (!decision.retry()) return;  // a bounded policy gives up: this client stops
    previous_ms_[c] = decision.delay.count();
    // Brooker's client sleeps one network delay plus the backoff, then reads again.
    Send(now + decision.delay.count() * 1000, c, kReadAtServer);
  }

  const NamedPolicy& policy_;
  ref::RetryRng rng_;
  EventQueue queue_;
  std::uint64_t version_ = 0;
  std::uint64_t writes_ = 0;
  std::vector<std::uint64_t> versions_;  // the version each client read
  std::vector<int> attempts_;
  std::vector<std::int64_t> previous_ms_;
  ref::DecisionInput conflict_;
};

}  // namespace

ContentionResult RunContention(const NamedPolicy& policy, int clients, int runs,
                               std::uint64_t seed) {
  ContentionResult result;
  for (int run = 0; run < runs; ++run) {
    Model model(policy, clients, seed * 7919 + static_cast<std::uint64_t>(run));
    const auto [end, writes] = model.Run();
    result.completion_ms += static_cast<double>(end) / 1000.0 / runs;
    result.calls += static_cast<double>(writes) / runs;
  }
  return result;
}

}  // namespace faultline::fleet
