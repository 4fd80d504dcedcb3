// The scenario docs cannot fall behind the loader: every complete example in
// docs/scenario-guide.md, docs/faults.md and docs/routes.md loads, and the guide names every key
// and every enumerated value of the format.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scenarios/loader.h"
#include "scenarios/loader_keys.h"

namespace faultline::scenario {
namespace {

std::string ReadDoc(const std::string& name) {
  const std::string path = std::string(FAULTLINE_DOCS_DIR) + "/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Example {
  int line = 0;  // of the opening fence
  std::string text;
};

constexpr std::string_view kModeline = "# yaml-language-server: $schema=scenario.schema.json\n";

// A whole document starts with `faultline:`, after the editor's modeline that every complete
// example carries (a bare `faultline:` block is still found, so the modeline check below fails
// on it rather than the example going unloaded).
bool IsWholeDocument(std::string_view text) {
  if (text.starts_with(kModeline)) text.remove_prefix(kModeline.size());
  return text.starts_with("faultline:");
}

// The ```yaml blocks that are whole scenario documents.
std::vector<Example> ScenarioExamples(const std::string& doc) {
  std::vector<Example> examples;
  std::istringstream lines(doc);
  std::string line;
  int number = 0;
  std::optional<Example> open;
  while (std::getline(lines, line)) {
    ++number;
    if (!open && line == "```yaml") {
      open = Example{number, {}};
    } else if (open && line == "```") {
      if (IsWholeDocument(open->text)) examples.push_back(std::move(*open));
      open.reset();
    } else if (open) {
      open->text += line + "\n";
    }
  }
  return examples;
}

void ExpectExamplesLoad(const std::string& name) {
  const std::vector<Example> examples = ScenarioExamples(ReadDoc(name));
  EXPECT_FALSE(examples.empty()) << name << " has no complete scenario example";
  for (const Example& example : examples) {
    const auto loaded = ParseScenarios(example.text, name);
    EXPECT_TRUE(loaded.has_value()) << "docs/" << name << ", example at line " << example.line
                                    << ": " << (loaded ? "" : loaded.error().front().ToString());
    EXPECT_TRUE(example.text.starts_with(kModeline))
        << "docs/" << name << ", example at line " << example.line
        << ": a complete example starts with the editor's modeline, " << kModeline;
  }
}

TEST(DocsExamplesTest, EveryScenarioInTheGuideLoads) { ExpectExamplesLoad("scenario-guide.md"); }

TEST(DocsExamplesTest, EveryScenarioInTheFaultReferenceLoads) { ExpectExamplesLoad("faults.md"); }

TEST(DocsExamplesTest, EveryScenarioOfTheRoutesPageLoads) { ExpectExamplesLoad("routes.md"); }

// A key counts as documented when the guide shows it as `key` or writes it as `key:`.
bool Mentions(const std::string& doc, std::string_view word) {
  const std::string quoted = "`" + std::string(word) + "`";
  const std::string written = std::string(word) + ":";
  return doc.find(quoted) != std::string::npos || doc.find(written) != std::string::npos;
}

TEST(DocsExamplesTest, TheGuideNamesEveryKeyOfTheFormat) {
  const std::string guide = ReadDoc("scenario-guide.md");
  for (const keys::KeySet& set : keys::kObjectKeySets) {
    for (std::string_view key : set.keys) {
      EXPECT_TRUE(Mentions(guide, key))
          << "docs/scenario-guide.md never shows the key '" << key << "' (schema "
          << (set.schema_pointer.empty() ? "/" : set.schema_pointer) << ")";
    }
  }
}

// A value counts as documented when the guide shows it as `value` or writes it as `key: value`.
bool ShowsValue(const std::string& doc, std::string_view value) {
  if (doc.find("`" + std::string(value) + "`") != std::string::npos) return true;
  const std::string written = ": " + std::string(value);
  for (std::size_t at = doc.find(written); at != std::string::npos;
       at = doc.find(written, at + 1)) {
    const std::size_t end = at + written.size();
    if (end == doc.size() || std::string_view(",} \n").find(doc[end]) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

TEST(DocsExamplesTest, TheGuideNamesEveryEnumeratedValue) {
  const std::string guide = ReadDoc("scenario-guide.md");
  for (const keys::NameSet& set : keys::kEnumNameSets) {
    for (std::string_view name : set.names) {
      EXPECT_TRUE(ShowsValue(guide, name)) << "docs/scenario-guide.md never names '" << name
                                           << "' (schema " << set.schema_pointer << ")";
    }
  }
  for (int kind = 0; kind <= static_cast<int>(ErrorKind::kOverloaded); ++kind) {
    const std::string_view name = ToString(static_cast<ErrorKind>(kind));
    EXPECT_TRUE(ShowsValue(guide, name))
        << "docs/scenario-guide.md never names the error '" << name << "'";
  }
}

}  // namespace
}  // namespace faultline::scenario
