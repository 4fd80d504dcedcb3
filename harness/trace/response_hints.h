// The retry hints one response carried, read from the fields the provider recorded as it sent
// them (provider::PlanTruth::hint_fields) with the reference client's own parsers
// (reference_impl/retry_after.h): one home for the rules that turn "Retry-After: 1.5", a
// "Please try again in 1s." body or an anthropic-ratelimit reset instant into a delay, each
// delay tagged with the source a policy names it by (docs/policy.md). Which of them a subject
// reads is its declared policy's business: the judge decides that (judge/).
//
// Pure functions; values.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "fake_provider/journal.h"
#include "reference_impl/retry_after.h"

namespace faultline::harness {

struct ResponseHints {
  // Every valid hint, one per source, strongest first (ref::FindRetryHints).
  std::vector<ref::RetryHint> values;
  // Sources whose field is on the wire but holds nothing the parsers can value ("soon", "-5",
  // "NaN"): a client may make anything of it.
  std::vector<ref::DelaySource> unreadable;
};

// How a client reads `retry-after` (a policy's retry_after.parse). Under RFC 9110 a date is
// measured from the response's own Date header; a client that hands the value to JavaScript's
// Date.parse measures whatever V8 reads as a date against its own clock, `client_wall`: the wall
// time when the response's head reached it.
struct HintReading {
  ref::RetryAfterParse parse = ref::RetryAfterParse::kRfc9110;
  std::chrono::system_clock::time_point client_wall{};
};

ResponseHints ReadHints(const provider::JournalEntry& entry, const HintReading& reading = {});

// The sources any HTTP client may be expected to read: the Retry-After header in both its forms
// and `retry-after-ms`. The judge holds a subject without a declared policy to these.
inline constexpr std::array<ref::DelaySource, 3> kRetryAfterHeaderSources{
    ref::DelaySource::kRetryAfterMs, ref::DelaySource::kRetryAfter,
    ref::DelaySource::kRetryAfterDate};

// The least delay among `hints` from one of kRetryAfterHeaderSources (an HTTP-date less the
// second its whole-second resolution may cost a client that measures it from its own clock);
// nullopt when there is none.
std::optional<std::chrono::milliseconds> RetryAfterHeaderFloor(const ResponseHints& hints);

// An HTTP-date has whole seconds: a client reading it against its own clock may wait up to this
// much less than the response's Date header implies, and still be right.
inline constexpr std::chrono::milliseconds kHttpDateLenience{1000};

}  // namespace faultline::harness
