#include "harness/trace/response_hints.h"

#include <algorithm>

namespace faultline::harness {
namespace {

using ref::DelaySource;

bool Has(const ResponseHints& hints, DelaySource source) {
  return std::ranges::any_of(hints.values,
                             [&](const ref::RetryHint& hint) { return hint.source == source; });
}

// The sources whose field is there but gave no value.
std::vector<DelaySource> Unreadable(const ref::HttpHeaders& headers, int status,
                                    const ResponseHints& hints) {
  std::vector<DelaySource> out;
  const bool retry_after = headers.Find("retry-after").has_value();
  if (retry_after && !Has(hints, DelaySource::kRetryAfter) &&
      !Has(hints, DelaySource::kRetryAfterDate)) {
    out.push_back(DelaySource::kRetryAfter);
    out.push_back(DelaySource::kRetryAfterDate);
  }
  if (headers.Find("retry-after-ms") && !Has(hints, DelaySource::kRetryAfterMs)) {
    out.push_back(DelaySource::kRetryAfterMs);
  }
  const bool reset = std::ranges::any_of(headers.entries(), [](const ref::HttpHeader& header) {
    return header.name.ends_with("-reset") && (header.name.starts_with("x-ratelimit-reset") ||
                                               header.name.starts_with("anthropic-ratelimit-"));
  });
  if (status == 429 && reset && !Has(hints, DelaySource::kRatelimitReset)) {
    out.push_back(DelaySource::kRatelimitReset);
  }
  return out;
}

}  // namespace

ResponseHints ReadHints(const provider::JournalEntry& entry, const HintReading& reading) {
  ResponseHints hints;
  const std::vector<provider::HintField>& fields = entry.truth.hint_fields;
  if (fields.empty()) return hints;
  ref::HttpHeaders headers;
  std::string_view body;
  for (const provider::HintField& field : fields) {
    if (field.name == "body") {
      body = field.value;
    } else {
      headers.Append(field.name, field.value);
    }
  }
  // Dates are measured from the response's own Date header; it also dates an RFC 850 year.
  std::chrono::system_clock::time_point now{};
  if (const auto date = headers.Find("date")) {
    if (const auto parsed = ref::ParseHttpDate(*date, now)) now = *parsed;
  }
  if (reading.parse == ref::RetryAfterParse::kDateParse) now = reading.client_wall;
  hints.values = ref::FindRetryHints({headers, body, entry.status, now, reading.parse});
  hints.unreadable = Unreadable(headers, entry.status, hints);
  return hints;
}

std::optional<std::chrono::milliseconds> RetryAfterHeaderFloor(const ResponseHints& hints) {
  std::optional<std::chrono::milliseconds> least;
  for (const ref::RetryHint& hint : hints.values) {
    if (std::ranges::find(kRetryAfterHeaderSources, hint.source) == kRetryAfterHeaderSources.end())
      continue;
    auto delay = hint.delay;
    if (hint.source == DelaySource::kRetryAfterDate) {
      delay = std::max(std::chrono::milliseconds(0), delay - kHttpDateLenience);
    }
    if (!least || delay < *least) least = delay;
  }
  return least;
}

}  // namespace faultline::harness
