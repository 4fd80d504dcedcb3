// The retry-log reader on hostile log text, and a restart from what it recovered: the first
// line names the call id (the rest is the log). RecoverFromLog must not overflow or throw, its
// counts must add up, and a Call resumed from the result must either start an attempt, fail at
// once, or wait no longer than the policy ever waits and within the total deadline.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "reference_impl/call.h"
#include "reference_impl/retry_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline::ref;
  using namespace faultline::ref::fuzz;
  const std::string_view input = AsText(data, size);
  const std::size_t newline = input.find('\n');
  const std::string_view call_id = input.substr(0, newline);
  const std::string_view log = newline == std::string_view::npos ? "" : input.substr(newline + 1);
  const RecoveredCall recovered = RecoverFromLog(log, call_id);
  const auto lines = static_cast<std::size_t>(std::count(log.begin(), log.end(), '\n')) + 1;
  if (recovered.records + recovered.torn_lines + recovered.invalid_lines > lines ||
      recovered.retries < 0 || (recovered.records == 0 && recovered.retries != 0)) {
    Fail("retry log counts", std::to_string(lines) + " lines",
         std::to_string(recovered.records) + " records, retries " +
             std::to_string(recovered.retries));
  }
  RetryPolicy policy;  // the defaults: 3 attempts, 60 s Retry-After cap, 10 min deadline
  const auto now = PolicyClock::time_point(std::chrono::hours(1));
  const auto wall = std::chrono::system_clock::time_point(std::chrono::seconds(1'767'225'600));
  Call call({.dialect = Dialect::kOpenAiChat,
             .base_url = {.host = "127.0.0.1", .port = 80, .path = ""},
             .api_key = "sk-fuzz",
             .body = "{}",
             .stream = true,
             .idempotency_key = std::nullopt,
             .extra_headers = {},
             .routes = {}},
            policy, {.call_id = std::string(call_id), .recovered = recovered});
  const auto longest = std::max(policy.backoff.cap, *policy.retry_after.cap);  // the default cap
  for (const Action& action : call.Start(now, wall)) {
    if (action.kind == Action::Kind::kWait && (action.at < now || action.at - now > longest ||
                                               action.at > now + *policy.timeouts.total)) {
      Fail("a resumed wait is bounded", "at most " + std::to_string(longest.count()) + " ms",
           std::to_string((action.at - now).count()) + " ns");
    }
  }
  for (const LifecycleEvent& event : call.TakeEvents()) (void)event.ToJsonLine();
  return 0;
}
