// The outputs of `faultline simulate`, each a pure function of an Experiment written to an
// injected stream: the terminal table, CSV (one row per job), a Markdown summary, and one
// self-contained HTML page with SVG plots (fleet/plot_svg.h: load against the provider's capacity,
// goodput and more over time per policy, a latency CDF, amplification bars, and for a --sweep
// each measure against the swept value). result.json is ToJson (experiment.h). Thread-safe (no
// shared state).
#pragma once

#include <ostream>

#include "fleet/experiment.h"

namespace faultline::fleet {

void WriteTable(const Experiment& experiment, std::ostream& out);
void WriteCsv(const Experiment& experiment, std::ostream& out);
void WriteMarkdown(const Experiment& experiment, std::ostream& out);
void WriteHtml(const Experiment& experiment, std::ostream& out);

// "12.3 ms", "4.56 s", "did not recover" style cells, shared by every writer.
std::string FormatMs(double ms);
std::string FormatSeconds(const std::optional<double>& seconds, std::string_view none);

}  // namespace faultline::fleet
