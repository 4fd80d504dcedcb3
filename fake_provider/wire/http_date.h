// HTTP dates and RFC 3339 instants, formatted from a WallTime.
//
// The fake provider writes `Date` (IMF-fixdate), Retry-After HTTP-dates in all three forms that
// RFC 9110 §5.6.7 obliges recipients to accept (IMF-fixdate, the obsolete RFC 850 form and ANSI
// C's asctime), and RFC 3339 instants for rate-limit reset headers. Every form has one-second
// resolution: sub-second parts are dropped (floor), so a formatted date never lies in the future
// of the instant it stands for.
//
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "fake_provider/wire/dialect.h"

namespace faultline::provider {

std::string FormatImfFixdate(WallTime instant);  // "Sun, 06 Nov 1994 08:49:37 GMT"
std::string FormatRfc850(WallTime instant);      // "Sunday, 06-Nov-94 08:49:37 GMT"
std::string FormatAsctime(WallTime instant);     // "Sun Nov  6 08:49:37 1994"
std::string FormatRfc3339(WallTime instant);     // "1994-11-06T08:49:37Z"

// A Retry-After header's value: delay-seconds or raw text as written, or an HTTP-date in its
// form, `date` (the response's Date) plus the offset.
std::string FormatRetryAfter(const scenario::RetryAfter& retry_after, WallTime date);

}  // namespace faultline::provider
