// The pieces of the scenario loader, split by the part of the document they read. Internal to
// scenarios/: loader.cc reads the document, loader_response.cc one response entry,
// loader_content.cc a response's streamed content, loader_files.cc files and folders.
#pragma once

#include <expected>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

#include "scenarios/loader.h"
#include "scenarios/proxy_rules.h"
#include "scenarios/scenario.h"
#include "scenarios/yaml_reader.h"

namespace faultline::scenario::internal {

// Where a response entry appears: in `responses` (answers `repeat` attempts), inside `chaos`
// (drawn afresh for every attempt, so `repeat` means nothing there) or as a route's health
// failure (sent whenever the route is down, so `repeat` means nothing there either).
enum class ResponsePlace { kResponses, kChaos, kHealth };

// The largest count or index a scenario field takes (a repeat, an event number): an int's.
inline constexpr int kMaxInt = std::numeric_limits<int>::max();

// A file's whole text, or an error naming it (cannot open, a folder).
std::expected<std::string, LoadError> ReadFile(const std::filesystem::path& file);

// Reads a response entry's `cassette` and `time_scale` (loader_cassette.cc): the recorded
// exchange it plays back, and which of the entry's other keys can go with it.
void ReadCassetteEntry(Reader& reader, const Map& map, Dialect dialect, ResponseSpec* out);

// Reads a `responses` list (a scenario's or a route's) into *out.
void ReadResponses(Reader& reader, const Field& field, Dialect dialect,
                   std::vector<ResponseSpec>* out);

// Reads `routes` and `group_outages` of the document (loader_routes.cc), if present.
void ReadRoutes(Reader& reader, const Map& document, Scenario* out);

// Reads one response entry into *out. Errors go to `reader`.
void ReadResponse(Reader& reader, const Field& field, Dialect dialect, ResponsePlace place,
                  ResponseSpec* out);

// Reads an ErrorSpec: a kind name ("rate_limit") or {kind, wording, message}.
std::optional<ErrorSpec> ReadError(Reader& reader, const Field& field, Dialect dialect);

// Reads a response's `content` (or its alias `stream`) into *out.
void ReadContent(Reader& reader, const Field& field, Dialect dialect, Content* out);
// The events (and drip writes) the plan renders for `content` (ParseLimits::max_stream_events).
std::size_t StreamEvents(const Content& content);

// Reads the `expect:` block into *out (loader_expect.cc).
void ReadExpect(Reader& reader, const Field& field, Expect* out);

// Reads the `policy:` mapping as JSON text with every value's position (loader_expect.cc). Its
// keys are not checked here: the harness validates the policy and reports at those positions.
std::optional<PolicySpec> ReadPolicy(Reader& reader, const Field& field);

// Reads a `fleet:` section into *out (loader_fleet.cc).
void ReadFleet(Reader& reader, const Field& field, FleetSpec* out);

// Reads a `faultline proxy` rule file's document into *out (loader_proxy.cc).
void ReadProxyRules(Reader& reader, const Field& document, ProxyRules* out);

// Rejects `map[key]` when present: `reason` says why the key has no meaning there.
void RejectKey(Reader& reader, const Map& map, std::string_view key, std::string_view reason);

// The `content` (or its alias `stream`) of a response entry whose answer someone else writes (a
// cassette's recording, the upstream's live traffic): only `faults` and `end` can be overlaid on
// it, and every other key of content is refused at its line as "'KEY' is the OWNER's to write;
// WHERE takes only faults and end". The content's field and mapping; nullopt when the entry has
// none, or it is not a mapping (reported).
struct OverlayContent {
  Field field;
  Map map;
};
std::optional<OverlayContent> ReadOverlayContent(Reader& reader, const Map& response,
                                                 std::string_view owner, std::string_view where);

// RFC 9110 token characters: what a header name may consist of.
bool IsHeaderName(std::string_view text);

// Printable text for a header value: no CR, LF or NUL (they would break the response framing).
bool IsHeaderSafe(std::string_view text);

// A parsed scenario with the position of its `name`, so that duplicate names can point at it.
struct ParsedScenario {
  Scenario scenario;
  int name_line = 0;
  int name_column = 0;
};
// With `further`, a document whose fields are wrong is read again past each error found
// (yaml_reader.h) and `further` gets its later errors, up to `max_errors` in all with the first;
// a syntax error, an empty file or a text over the limits has only the one.
// `matrix`: read a file with `dialects: [...]` as its scenario in that one dialect
// (MatrixDialects); without it such a file is an error (a caller that takes one scenario cannot
// take several).
std::expected<ParsedScenario, LoadError> ParseScenarioWithPosition(
    std::string_view text, std::string_view file, const ParseLimits& limits = {},
    std::vector<LoadError>* further = nullptr, std::size_t max_errors = 1,
    std::optional<Dialect> matrix = std::nullopt);

// The dialects a matrix file (`dialects: [...]` instead of `dialect:`) expands into, in its
// order; empty for any other text, including one that is not a valid document; one dialect for a
// `dialects` list that is not valid (the parse in it then reports what is wrong).
std::vector<Dialect> MatrixDialects(std::string_view text, const ParseLimits& limits = {});

}  // namespace faultline::scenario::internal
