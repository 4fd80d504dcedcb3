// The embedded catalogue follows its conventions (name = path, tags, expectations, a short
// purpose) and covers the fault catalogue of docs/faults.md, in every dialect where a fault
// applies. A deleted or edited file that leaves a fault untested fails here, naming what went
// missing.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <string_view>
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

void AddResponseLabels(const ResponseSpec& response, Labels& out) {
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
  }
  if (response.body) out.insert("body");
  if (response.status >= 200 && response.status < 300 && !response.body) {
    AddStreamLabels(response.content, out);
  }
}

Labels ScenarioLabels(const Scenario& scenario) {
  Labels out;
  for (const ResponseSpec& response : scenario.responses) AddResponseLabels(response, out);
  if (scenario.chaos) {
    out.insert("chaos");
    for (const Chaos::Choice& choice : scenario.chaos->faults)
      AddResponseLabels(choice.response, out);
    AddResponseLabels(scenario.chaos->otherwise, out);
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

// The words of a space-separated list.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    if (end > at) words.emplace_back(text.substr(at, end - at));
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

// the fault catalogue of docs/faults.md beyond the error kinds, end kinds and fault kinds (which
// are enumerated from the model).
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
    "listener-outage cancel concurrent-calls non-streaming ";

// The faults that apply to every dialect.
constexpr std::string_view kEveryDialectFaults =
    "status:400 status:401 status:429 status:500 error:context_window error:quota "
    "retry-after:seconds retry-after-ms end:done end:no_terminator end:no_final_chunk "
    "end:close end:reset end:stall end-at-byte fault:stall fault-forever fault:invalid_json "
    "fault:wrong_shape split-writes tool-call empty non-streaming "
    "connection:reset_before_headers listener-outage cancel chaos concurrent-calls ";

TEST(CatalogCoverageTest, CoversTheWholeFaultCatalogue) {
  Labels all;
  for (auto& [dialect, labels] : LabelsByDialect()) all.insert(labels.begin(), labels.end());
  std::vector<std::string> want = Words(kCatalogueFaults);
  for (std::size_t i = 0; i <= static_cast<std::size_t>(ErrorKind::kOverloaded); ++i) {
    want.push_back(fmt::format("error:{}", ToString(static_cast<ErrorKind>(i))));
  }
  for (std::string_view name : kEndNames) want.push_back(fmt::format("end:{}", name));
  for (std::string_view name : kFaultNames) want.push_back(fmt::format("fault:{}", name));
  const std::vector<std::string> missing = Missing(all, want);
  EXPECT_TRUE(missing.empty()) << "no catalogue scenario exercises: "
                               << fmt::format("{}", fmt::join(missing, ", "));
}

TEST(CatalogCoverageTest, CoversEveryDialect) {
  const std::map<Dialect, Labels> by_dialect = LabelsByDialect();
  const std::vector<std::string> want = Words(kEveryDialectFaults);
  for (Dialect dialect :
       {Dialect::kOpenAiChat, Dialect::kAnthropicMessages, Dialect::kOpenAiResponses}) {
    const auto found = by_dialect.find(dialect);
    ASSERT_NE(found, by_dialect.end()) << ToString(dialect);
    const std::vector<std::string> missing = Missing(found->second, want);
    EXPECT_TRUE(missing.empty()) << ToString(dialect) << " has no scenario exercising: "
                                 << fmt::format("{}", fmt::join(missing, ", "));
  }
}

// The helpers of the coverage checks find what they should.
TEST(CatalogCoverageTest, MissingNamesWhatIsAbsent) {
  EXPECT_EQ(Words(" a  b c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Missing(Labels{"a", "c"}, {"a", "b", "c", "d"}), (std::vector<std::string>{"b", "d"}));
  EXPECT_TRUE(Missing(Labels{"a"}, {}).empty());
}

}  // namespace
}  // namespace faultline::scenario
