// The frame shared by the HTML pages (run report, conformance matrix): doctype, inline stylesheet,
// the optional inline script, and the page end. Everything is inline so that one file is the whole
// report: no fonts, scripts, styles or images are fetched. Internal to reports/. Pure functions.
#pragma once

#include <ostream>
#include <string_view>

#include "reports/run_result.h"

namespace faultline::report::internal {

// Writes everything up to and including <body>. `title` is plain text (escaped here).
void WritePageStart(std::string_view title, std::ostream& out);
// Writes the small filtering script (the page works without it) and closes the document.
void WritePageEnd(std::ostream& out);

// "pass" | "fail" | "error": the CSS class of a verdict.
std::string_view VerdictClass(Verdict verdict);

}  // namespace faultline::report::internal
