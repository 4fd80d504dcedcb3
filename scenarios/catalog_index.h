// The catalogue index: scenarios/README.md, rendered from the scenarios themselves.
//
// One table row per scenario (name, dialect, expected outcome and its purpose, which is the first
// sentence of its description), grouped by category (the name's prefix before the first '/'),
// with counts. The index is never edited by hand: a test in scenarios/tests/ renders the embedded
// catalogue and fails when scenarios/README.md differs, and rewrites the file when asked to
// (FAULTLINE_UPDATE_INDEX=1), so the index cannot drift from the files.
//
// Pure functions of their arguments: no I/O, no clock. Thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario.h"

namespace faultline::scenario {

// The first sentence of `text`: up to and including the first '.', '!' or '?' that is followed by
// whitespace or ends the text, not counting those inside double quotes ("... your request. Sorry
// about that!" is one quoted phrase, not two sentences). The whole text when no sentence ends.
// Runs of whitespace become one space; leading and trailing whitespace is dropped.
std::string FirstSentence(std::string_view text);

// The category of a scenario name: the part before the first '/', or "other" when there is none.
std::string_view CategoryOf(std::string_view name);

// What the scenario expects, in a few words: "committed, 2 attempts", "failed RATE_LIMIT,
// 1 attempt", "failed (aborted)" (class when there is no code), "committed"; "" when the
// scenario expects nothing.
std::string ExpectSummary(const Expect& expect);

// The Markdown index of `scenarios` (any order; the output is sorted by name, so the same set of
// scenarios always renders to the same bytes).
std::string RenderCatalogIndex(const std::vector<Scenario>& scenarios);

}  // namespace faultline::scenario
