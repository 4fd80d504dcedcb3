// The properties both importers' fuzz targets check (har_import_fuzz.cc, aimock_import_fuzz.cc):
// an import of any text answers (an Import or a LoadError), never throws or hangs; it answers the
// same when asked again; an error's line lies inside the text; every cassette it makes is one the
// cassette reader takes back unchanged (WriteCassette, ParseCassette), in time order; it made at
// least one cassette and one scenario per dialect, and named every skip.
#pragma once

#include <algorithm>
#include <expected>
#include <string>
#include <string_view>

#include "cassette_import/import.h"
#include "fuzz/fuzz_support.h"

namespace faultline::scenario::fuzz {

inline std::string Describe(const std::expected<Import, LoadError>& import) {
  if (!import) return "error: " + import.error().ToString();
  std::string text = "import:";
  for (const ImportedCassette& cassette : import->cassettes) {
    text += " " + cassette.file + "/" + std::to_string(cassette.cassette.body_size());
  }
  for (const ImportedScenario& scenario : import->scenarios) text += "\n" + scenario.text;
  for (const ImportSkip& skip : import->skipped) text += "\n" + skip.where + " " + skip.reason;
  return text;
}

inline void CheckImport(const std::expected<Import, LoadError>& import,
                        const std::expected<Import, LoadError>& again, std::string_view text) {
  using ref::fuzz::Fail;
  if (Describe(import) != Describe(again)) {
    Fail("an import answers the same twice", Describe(import), Describe(again));
  }
  if (!import) {
    const auto lines = static_cast<int>(std::ranges::count(text, '\n')) + 1;
    if (import.error().line < 0 || import.error().line > lines) {
      Fail("errors point inside the text", std::to_string(lines), import.error().ToString());
    }
    return;
  }
  if (import->cassettes.empty() || import->scenarios.empty()) {
    Fail("an import makes a cassette and a scenario", "", Describe(import));
  }
  for (const ImportSkip& skip : import->skipped) {
    if (skip.where.empty() || skip.reason.empty())
      Fail("every skip is named", "", Describe(import));
  }
  for (const ImportedCassette& cassette : import->cassettes) {
    const std::string written = WriteCassette(cassette.cassette);
    auto read = ParseCassette(written, cassette.file);
    if (!read) Fail("the reader takes every imported cassette", written, read.error().ToString());
    if (*read != cassette.cassette) Fail("an imported cassette reads back unchanged", written, "");
  }
}

}  // namespace faultline::scenario::fuzz
