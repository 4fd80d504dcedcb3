// The embedded catalogue follows its conventions (name = path, tags, expectations, a short
// purpose) and covers the fault catalogue as fault x dialect: every label of the fault catalogue
// (docs/faults.md) in every dialect the scenario model knows is a cell, and each cell is either
// exercised by a catalogue scenario or declared impossible, with its reason, in docs/faults.md's
// "Faults a dialect cannot carry". A deleted or edited file that leaves a cell untested, a dialect
// added without its scenarios, or a declaration a scenario contradicts fails here, naming the
// cells.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenarios/catalog_index.h"
#include "scenarios/embedded_catalog.h"
#include "scenarios/loader.h"

namespace faultline::scenario {
namespace {

using Labels = std::set<std::string, std::less<>>;

const std::vector<Scenario>& Catalogue() {
  static const std::vector<Scenario> catalogue = [] {
    auto loaded = LoadBuiltinCatalog();
    return loaded ? std::move(*loaded) : std::vector<Scenario>{};
  }();
  return catalogue;
}

bool HasTag(const Scenario& scenario, std::string_view tag) {
  return std::ranges::find(scenario.tags, tag) != scenario.tags.end();
}

TEST(CatalogConventionsTest, EveryFileFollowsTheConventions) {
  ASSERT_GE(Catalogue().size(), 85u);
  for (const Scenario& scenario : Catalogue()) {
    SCOPED_TRACE(scenario.name);
    // A file holds the scenario of its own name, or a matrix file names the scenario by its
    // dialect: `name: category/{dialect}-rest` (docs/scenario-guide.md).
    const std::string own_file = "<builtin>/" + scenario.name + ".yaml";
    if (scenario.source != own_file) {
      std::string name_template = scenario.name;
      const std::string dialect(ToString(scenario.dialect));
      const std::size_t at = name_template.find(dialect);
      ASSERT_NE(at, std::string::npos) << scenario.source;
      name_template.replace(at, dialect.size(), "{dialect}");
      const auto file = std::ranges::find_if(EmbeddedCatalogFiles(), [&](const EmbeddedFile& f) {
        return "<builtin>/" + std::string(f.path) == scenario.source;
      });
      ASSERT_NE(file, EmbeddedCatalogFiles().end()) << scenario.source;
      EXPECT_NE(std::string_view(file->content).find("\nname: " + name_template + "\n"),
                std::string_view::npos)
          << scenario.source;
      EXPECT_EQ(CategoryOf(std::string_view(file->path)), CategoryOf(scenario.name));
    }
    const std::string_view category = CategoryOf(scenario.name);
    EXPECT_NE(category, "other");
    EXPECT_TRUE(HasTag(scenario, category));
    if (category != "demo") {
      EXPECT_TRUE(HasTag(scenario, ToString(scenario.dialect)));
    }
    // Seeded chaos draws other faults under another run seed: only the invariants judge it.
    EXPECT_EQ(scenario.expect.outcome.has_value(), !scenario.chaos.has_value());
    // The index shows the first sentence: short, and not the whole description (which must also
    // say what a correct client does).
    const std::string purpose = FirstSentence(scenario.description);
    EXPECT_LE(purpose.size(), 300u) << purpose;
    EXPECT_LT(purpose.size() + 40, scenario.description.size()) << purpose;
  }
}

constexpr std::array<std::string_view, 6> kEndNames = {"done",  "no_terminator", "no_final_chunk",
                                                       "close", "reset",         "stall"};
constexpr std::array<std::string_view, 9> kFaultNames = {
    "delay",          "stall",          "invalid_json", "wrong_shape", "two_objects",
    "error_envelope", "provider_error", "sequence_gap", "raw"};
constexpr std::array<std::string_view, 4> kShapeNames = {"default", "response_failed", "flat",
                                                         "nested"};
constexpr std::array<std::string_view, 4> kLineEndingNames = {"lf", "crlf", "cr", "mixed"};
constexpr std::array<std::string_view, 5> kRetryAfterNames = {"seconds", "imf", "rfc850", "asctime",
                                                              "raw"};
constexpr std::array<std::string_view, 3> kConnectionNames = {"none", "reset_before_headers",
                                                              "close_before_headers"};
constexpr std::array<std::string_view, 5> kWordingNames = {
    "dialect", "openai", "deepseek", "anthropic_prompt_too_long", "anthropic_exceed_context_limit"};

template <std::size_t N, typename Enum>
std::string Label(std::string_view prefix, const std::array<std::string_view, N>& names,
                  Enum value) {
  return fmt::format("{}:{}", prefix, names.at(static_cast<std::size_t>(value)));
}

void AddStreamLabels(const Content& content, Labels& out) {
  out.insert(Label("end", kEndNames, content.end.kind));
  if (content.end.at_byte) out.insert("end-at-byte");
  if (content.end.heartbeat.every.count() > 0) out.insert("end-heartbeat");
  for (const EventFault& fault : content.faults) {
    out.insert(Label("fault", kFaultNames, fault.kind));
    if (fault.wait.forever) out.insert("fault-forever");
    if (fault.heartbeat.every.count() > 0) {
      out.insert(fault.heartbeat.style == Heartbeat::Style::kPing ? "heartbeat:ping"
                                                                  : "heartbeat:comment");
    }
    if (fault.shape != EventFault::Shape::kDefault)
      out.insert(Label("shape", kShapeNames, fault.shape));
  }
  const Framing& framing = content.framing;
  out.insert(Label("line-ending", kLineEndingNames, framing.line_ending));
  if (framing.bom) out.insert("bom");
  if (framing.comments) out.insert("comments");
  if (framing.multiline_data) out.insert("multiline-data");
  if (framing.split_writes) out.insert("split-writes");
  if (framing.split_utf8) out.insert("split-utf8");
  if (content.drip_bytes > 0) out.insert("drip");
  if (content.tool_call) out.insert("tool-call");
  if (!content.reasoning.empty()) out.insert("reasoning");
  if (content.text.empty()) out.insert("empty");
}

void AddHeaderLabels(const ResponseSpec& response, Labels& out) {
  if (response.retry_after)
    out.insert(Label("retry-after", kRetryAfterNames, response.retry_after->form));
  if (response.retry_after_ms) out.insert("retry-after-ms");
  if (response.should_retry) out.insert("should-retry");
  if (response.rate_limit_headers) out.insert("rate-limit-headers");
  if (response.date_skew.count() != 0) out.insert("date-skew");
  if (response.content_type) out.insert("content-type");
  for (const Header& header : response.headers) {
    if (header.name == "Retry-After" || header.name == "retry-after")
      out.insert("duplicate-retry-after");
  }
}

// The wording a dialect's provider uses for a context overflow when the scenario names none
// (fake_provider's writers): OpenAI's in Chat Completions, "prompt is too long" in Anthropic's.
// The Responses API, Gemini and Ollama have words of their own, which no `wording` names.
std::optional<ContextWording> OwnWording(Dialect dialect) {
  switch (dialect) {
    case Dialect::kOpenAiChat:
      return ContextWording::kOpenAi;
    case Dialect::kAnthropicMessages:
      return ContextWording::kAnthropicPromptTooLong;
    default:
      return std::nullopt;
  }
}

void AddResponseLabels(const ResponseSpec& response, Dialect dialect, Labels& out) {
  out.insert(Label("connection", kConnectionNames, response.connection));
  if (response.headers_delay.count() > 0) out.insert("headers-delay");
  if (response.headers_stall) {
    out.insert(response.headers_stall->forever ? "headers-stall-forever" : "headers-stall");
  }
  AddHeaderLabels(response, out);
  if (response.connection != ConnectionFault::kNone) return;
  out.insert(fmt::format("status:{}", response.status));
  if (response.error) {
    out.insert(fmt::format("error:{}", ToString(response.error->kind)));
    out.insert(Label("wording", kWordingNames, response.error->wording));
    const std::optional<ContextWording> own = OwnWording(dialect);
    if (response.error->kind == ErrorKind::kContextWindow &&
        response.error->wording == ContextWording::kDialect && own) {
      out.insert(Label("wording", kWordingNames, *own));
    }
  }
  if (response.body) out.insert("body");
  if (response.status >= 200 && response.status < 300 && !response.body) {
    AddStreamLabels(response.content, out);
  }
}

// Whether a route lacks something the request needs of it (docs/routes.md); the context window
// is needed through max_tokens (the catalogue's bodies are small beside it).
bool LacksANeed(const RequestSpec& request, const Capabilities& route) {
  return (request.tools && !route.tools) || (request.reasoning && !route.reasoning) ||
         (request.image && !route.images) || (request.strict_tools && !route.strict_tools) ||
         (!request.stop.empty() && !route.stop_sequences) ||
         (!request.prefill.empty() && !route.prefill) || request.max_tokens >= route.context_window;
}

// Whether an answer fails before its content: no connection, or an error status.
bool FailsUpFront(const ResponseSpec& response) {
  return response.connection != ConnectionFault::kNone || response.status < 200 ||
         response.status > 299;
}

// Whether a 2xx stream breaks after its headers: cut short, or spoiled by a fault.
bool BreaksMidStream(const ResponseSpec& response) {
  if (FailsUpFront(response) || response.body) return false;
  const Content& content = response.content;
  return content.end.kind != Termination::Kind::kDone ||
         std::ranges::any_of(content.faults, SpoilsStream);
}

// The route family: one label per way a route of a scenario with `routes:` fails or falls short.
void AddRouteLabels(const Scenario& scenario, Labels& out) {
  for (const Route& route : scenario.routes) {
    if (route.dialect != scenario.dialect) out.insert("route:cross-dialect");
    if (LacksANeed(scenario.request, route.capabilities)) out.insert("route:capability");
    if (std::ranges::any_of(route.responses, FailsUpFront)) out.insert("route:failing-answer");
    if (std::ranges::any_of(route.responses, BreaksMidStream)) out.insert("route:mid-stream");
    if (!route.health) continue;
    const Health& health = *route.health;
    if (!health.down.empty()) out.insert("route:down");
    if (health.failure == Health::Failure::kRefused) out.insert("route:refused");
    if (health.flap_up) out.insert("route:flapping");
    if (health.error_probability > 0 || health.latency_multiplier != 1) {
      out.insert("route:brownout");
    }
  }
  if (!scenario.group_outages.empty()) out.insert("route:group-outage");
}

Labels ScenarioLabels(const Scenario& scenario) {
  Labels out;
  AddRouteLabels(scenario, out);
  for (const ResponseSpec& response : scenario.responses) {
    AddResponseLabels(response, scenario.dialect, out);
  }
  if (scenario.chaos) {
    out.insert("chaos");
    for (const Chaos::Choice& choice : scenario.chaos->faults)
      AddResponseLabels(choice.response, scenario.dialect, out);
    AddResponseLabels(scenario.chaos->otherwise, scenario.dialect, out);
  }
  if (scenario.rate_limit)
    out.insert(scenario.rate_limit->tokens > 0 ? "rate-limit:tokens" : "rate-limit:requests");
  if (!scenario.listener_outages.empty()) out.insert("listener-outage");
  if (scenario.cancel_at) out.insert("cancel");
  if (scenario.request.calls > 1) out.insert("concurrent-calls");
  if (!scenario.request.stream) out.insert("non-streaming");
  return out;
}

std::map<Dialect, Labels> LabelsByDialect() {
  std::map<Dialect, Labels> out;
  for (const Scenario& scenario : Catalogue()) {
    out[scenario.dialect].merge(ScenarioLabels(scenario));
  }
  return out;
}

// The words of a list separated by spaces or by `separator`.
std::vector<std::string> Words(std::string_view text, char separator = ' ') {
  std::vector<std::string> words;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find(separator, at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(at, end - at);
    while (!word.empty() && word.front() == ' ') word.remove_prefix(1);
    while (!word.empty() && word.back() == ' ') word.remove_suffix(1);
    if (!word.empty()) words.emplace_back(word);
    at = end + 1;
  }
  return words;
}

std::vector<std::string> Missing(const Labels& have, const std::vector<std::string>& want) {
  std::vector<std::string> missing;
  for (const std::string& label : want) {
    if (!have.contains(label)) missing.push_back(label);
  }
  return missing;
}

// The fault catalogue of docs/faults.md beyond the error kinds, end kinds and fault kinds (which
// are enumerated from the model), and the route family (docs/routes.md).
constexpr std::string_view kCatalogueFaults =
    "status:400 status:401 status:403 status:404 status:408 status:409 status:413 status:422 "
    "status:429 status:500 status:502 status:503 status:504 status:529 wording:openai "
    "wording:deepseek wording:anthropic_prompt_too_long "
    "wording:anthropic_exceed_context_limit retry-after:seconds retry-after:imf "
    "retry-after:rfc850 retry-after:asctime retry-after:raw retry-after-ms should-retry "
    "rate-limit-headers date-skew duplicate-retry-after connection:reset_before_headers "
    "connection:close_before_headers headers-delay headers-stall headers-stall-forever "
    "end-at-byte end-heartbeat fault-forever heartbeat:ping heartbeat:comment "
    "shape:response_failed shape:flat shape:nested line-ending:crlf line-ending:cr "
    "line-ending:mixed bom comments multiline-data split-writes split-utf8 drip tool-call "
    "reasoning empty content-type body chaos rate-limit:requests rate-limit:tokens "
    "listener-outage cancel concurrent-calls non-streaming route:down route:refused "
    "route:flapping route:brownout route:group-outage route:capability route:failing-answer "
    "route:mid-stream route:cross-dialect ";

// Every label of the fault catalogue: with every dialect, the cells.
std::vector<std::string> FaultLabels() {
  std::vector<std::string> labels = Words(kCatalogueFaults);
  for (std::size_t i = 0; i <= static_cast<std::size_t>(ErrorKind::kOverloaded); ++i) {
    labels.push_back(fmt::format("error:{}", ToString(static_cast<ErrorKind>(i))));
  }
  for (std::string_view name : kEndNames) labels.push_back(fmt::format("end:{}", name));
  for (std::string_view name : kFaultNames) labels.push_back(fmt::format("fault:{}", name));
  return labels;
}

// ---- The declared-impossible cells: docs/faults.md, "Faults a dialect cannot carry" ----
//
// Their one home is that section of the fault reference, where users read them: a table whose
// rows are | `label`, `label` ... | dialect, dialect ... | reason |. The test reads it from there.

constexpr std::string_view kImpossibleHeading = "## Faults a dialect cannot carry";

struct Declaration {
  std::vector<std::string> labels;
  std::vector<std::string> dialects;
  std::string reason;
  int line = 0;  // in docs/faults.md
};

// The cells of a table row's first cell: each `label` between backticks.
std::vector<std::string> BacktickedWords(std::string_view cell) {
  std::vector<std::string> out;
  for (std::size_t at = cell.find('`'); at != std::string_view::npos;) {
    const std::size_t end = cell.find('`', at + 1);
    if (end == std::string_view::npos) break;
    out.emplace_back(cell.substr(at + 1, end - at - 1));
    at = cell.find('`', end + 1);
  }
  return out;
}

// The rows of the section's table, from the text of docs/faults.md.
std::vector<Declaration> ParseDeclarations(std::string_view text) {
  std::vector<Declaration> out;
  std::istringstream in{std::string(text)};
  bool inside = false;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.starts_with("## ")) inside = line == kImpossibleHeading;
    if (!inside || !line.starts_with("| `")) continue;
    const std::vector<std::string> cells = Words(std::string_view(line).substr(1), '|');
    if (cells.size() != 3) {
      Declaration malformed;  // no labels: the well-formedness test names its line
      malformed.line = number;
      out.push_back(std::move(malformed));
      continue;
    }
    out.push_back({.labels = BacktickedWords(cells[0]),
                   .dialects = Words(cells[1], ','),
                   .reason = cells[2],
                   .line = number});
  }
  return out;
}

const std::vector<Declaration>& Declarations() {
  static const std::vector<Declaration> declarations = [] {
    std::ifstream in(std::string(FAULTLINE_DOCS_DIR) + "/faults.md");
    std::stringstream text;
    text << in.rdbuf();
    return ParseDeclarations(text.str());
  }();
  return declarations;
}

using Cell = std::pair<std::string, std::string>;  // (dialect, label)

std::set<Cell> ImpossibleCells() {
  std::set<Cell> out;
  for (const Declaration& declaration : Declarations()) {
    for (const std::string& dialect : declaration.dialects) {
      for (const std::string& label : declaration.labels) out.emplace(dialect, label);
    }
  }
  return out;
}

std::string ListCells(const std::vector<Cell>& cells) {
  std::string out;
  for (const auto& [dialect, label] : cells) out += fmt::format("\n  ({}, {})", dialect, label);
  return out;
}

TEST(CatalogCellsTest, DeclarationsAreWellFormed) {
  ASSERT_FALSE(Declarations().empty())
      << "no table under '" << kImpossibleHeading << "' in docs/faults.md";
  const std::vector<std::string> labels = FaultLabels();
  std::set<Cell> seen;
  for (const Declaration& declaration : Declarations()) {
    SCOPED_TRACE(fmt::format("docs/faults.md:{}", declaration.line));
    EXPECT_FALSE(declaration.labels.empty()) << "expected | `label` ... | dialects | reason |";
    EXPECT_FALSE(declaration.dialects.empty());
    EXPECT_GE(declaration.reason.size(), 20u) << "a declaration says why, in words";
    for (const std::string& label : declaration.labels) {
      EXPECT_NE(std::ranges::find(labels, label), labels.end()) << "not a fault label: " << label;
    }
    for (const std::string& dialect : declaration.dialects) {
      EXPECT_TRUE(ParseDialect(dialect).has_value()) << "not a dialect: " << dialect;
      for (const std::string& label : declaration.labels) {
        EXPECT_TRUE(seen.emplace(dialect, label).second)
            << "declared twice: (" << dialect << ", " << label << ")";
      }
    }
  }
}

// The completeness test: every (dialect, fault) cell is exercised or declared impossible.
TEST(CatalogCellsTest, EveryCellIsCoveredOrDeclaredImpossible) {
  const std::map<Dialect, Labels> by_dialect = LabelsByDialect();
  const std::set<Cell> impossible = ImpossibleCells();
  std::vector<Cell> missing;
  std::size_t cells = 0;
  for (Dialect dialect : AllDialects()) {
    const auto found = by_dialect.find(dialect);
    const Labels have = found != by_dialect.end() ? found->second : Labels{};
    for (const std::string& label : FaultLabels()) {
      ++cells;
      const Cell cell{std::string(ToString(dialect)), label};
      if (!have.contains(label) && !impossible.contains(cell)) missing.push_back(cell);
    }
  }
  EXPECT_TRUE(missing.empty())
      << missing.size() << " of " << cells
      << " cells (dialect, fault) have no catalogue scenario and are not declared impossible in "
         "docs/faults.md, 'Faults a dialect cannot carry':"
      << ListCells(missing);
}

// A declaration that a scenario contradicts is stale: the cell exists after all.
TEST(CatalogCellsTest, NoDeclaredImpossibleCellIsCovered) {
  const std::map<Dialect, Labels> by_dialect = LabelsByDialect();
  std::vector<Cell> stale;
  for (const Cell& cell : ImpossibleCells()) {
    const std::optional<Dialect> dialect = ParseDialect(cell.first);
    if (!dialect) continue;  // DeclarationsAreWellFormed names it
    const auto found = by_dialect.find(*dialect);
    if (found != by_dialect.end() && found->second.contains(cell.second)) stale.push_back(cell);
  }
  EXPECT_TRUE(stale.empty()) << "declared impossible in docs/faults.md, yet a catalogue scenario "
                                "exercises them:"
                             << ListCells(stale);
}

// Every fault exists somewhere: a label declared impossible in every dialect is no fault at all.
TEST(CatalogCellsTest, EveryFaultExistsInSomeDialect) {
  const std::set<Cell> impossible = ImpossibleCells();
  for (const std::string& label : FaultLabels()) {
    EXPECT_FALSE(std::ranges::all_of(AllDialects(), [&](Dialect dialect) {
      return impossible.contains({std::string(ToString(dialect)), label});
    })) << label;
  }
}

// The helpers of the coverage checks find what they should.
TEST(CatalogCellsTest, HelpersReadWhatTheyShould) {
  EXPECT_EQ(Words(" a  b c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Words("x, y ,z", ','), (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(Missing(Labels{"a", "c"}, {"a", "b", "c", "d"}), (std::vector<std::string>{"b", "d"}));
  EXPECT_TRUE(Missing(Labels{"a"}, {}).empty());
  const std::vector<Declaration> parsed = ParseDeclarations(
      "## Other\n| `x` | ollama | not here |\n" + std::string(kImpossibleHeading) +
      "\n\n| fault | dialects | why |\n|---|---|---|\n"
      "| `bom`, `comments` | ollama, gemini | NDJSON has no such thing |\n| `x` | y |\n## Next\n"
      "| `z` | ollama | after the section |\n");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].labels, (std::vector<std::string>{"bom", "comments"}));
  EXPECT_EQ(parsed[0].dialects, (std::vector<std::string>{"ollama", "gemini"}));
  EXPECT_EQ(parsed[0].reason, "NDJSON has no such thing");
  EXPECT_EQ(parsed[0].line, 7);
  EXPECT_TRUE(parsed[1].labels.empty());  // a row without three cells
}

}  // namespace
}  // namespace faultline::scenario
