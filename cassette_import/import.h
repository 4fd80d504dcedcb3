// What the cassette importers (`faultline cassette import`, har_import.h and aimock_import.h)
// share: their result (cassettes, the scenario files that play them, what was left out and why),
// the reading of a JSON file with errors at their JSON path, and the pieces that make a cassette
// of recorded text: the body's events as the reference client's decoders find them, and a
// scenario that plays the cassettes in order.
//
// The importers are sans-I/O: text in, an Import (or a LoadError naming the file and the JSON
// path of what is wrong) out; the command (harness/cli/cassette_command.h) reads and writes the
// files. Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/cassette/cassette.h"
#include "scenarios/load_error.h"
#include "scenarios/scenario.h"

namespace faultline::scenario {

// One exchange an import made.
struct ImportedCassette {
  std::string file;  // its file name in the output folder: "0002-openai-chat.jsonl"
  Cassette cassette;
  bool stream = false;  // whether its request asked for a stream (the scenario's request.stream)
  std::string model;    // the model its request named ("" when none)
};

// A scenario file that plays an import's cassettes of one dialect, in order.
struct ImportedScenario {
  std::string file;  // "scenario.yaml"; "scenario-anthropic-messages.yaml" beside other dialects
  Dialect dialect = Dialect::kOpenAiChat;
  std::string text;  // YAML
};

// What an import left out: where in the input ("log.entries[3]") and why.
struct ImportSkip {
  std::string where;
  std::string reason;
};

struct Import {
  std::vector<ImportedCassette> cassettes;  // in the input's order
  std::vector<ImportedScenario> scenarios;  // one per dialect, in the order they first appear
  std::vector<ImportSkip> skipped;
};

struct ImportOptions {
  // The scenario file's name; with several dialects, its stem + "-DIALECT" + its extension.
  std::string scenario_file = "scenario.yaml";
  // The scenarios' name ("category/short-name"); "" = "imported/" + the input file's stem.
  std::string name;
};

namespace cassette_import {

using Json = nlohmann::ordered_json;

// The input parsed as JSON, or an error at its line and column (over kMaxCassetteBytes: refused).
std::expected<Json, LoadError> ParseJson(std::string_view text, std::string_view file);

// Reads the fields of a JSON input; every error names the file and the field's JSON path.
class JsonReader {
 public:
  explicit JsonReader(std::string_view file) : file_(file) {}

  LoadError Error(std::string_view path, std::string message) const;
  std::unexpected<LoadError> Fail(std::string_view path, std::string message) const {
    return std::unexpected(Error(path, std::move(message)));
  }
  // `json[key]` as an object, an array, a string or a number, at `path`.`key`. nullopt when the
  // key is absent and not `required` (an error when it is required); an error for another type.
  using Found = std::expected<const Json*, LoadError>;
  Found Object(const Json& json, std::string_view path, std::string_view key,
               bool required = true) const;
  Found Array(const Json& json, std::string_view path, std::string_view key,
              bool required = true) const;
  std::expected<std::optional<std::string>, LoadError> String(const Json& json,
                                                              std::string_view path,
                                                              std::string_view key,
                                                              bool required = true) const;
  std::expected<std::optional<double>, LoadError> Number(const Json& json, std::string_view path,
                                                         std::string_view key) const;

 private:
  Found Typed(const Json& json, std::string_view path, std::string_view key, bool required,
              Json::value_t type, std::string_view what) const;
  std::string file_;
};

// "path.key"; "key" at the top.
std::string PathOf(std::string_view path, std::string_view key);

// Body pieces for the cassette's writes: one per event as the reference client's decoders count
// them (the dialect's framing: SSE, NDJSON, the AWS event stream), bytes after the last event
// with it. A body that is no stream (`content_type` neither text/event-stream, NDJSON nor the
// AWS event stream) is one piece. No piece for an empty body.
std::vector<std::string> BodyEvents(Dialect dialect, std::string_view content_type,
                                    std::string_view body);

// The writes of `pieces`, spread evenly from `from` to `to`: piece i of n at
// from + (to - from) * (i + 1) / n.
std::vector<CassetteWrite> SpreadWrites(std::vector<std::string> pieces,
                                        std::chrono::microseconds from,
                                        std::chrono::microseconds to);

// Whether the body's last event is the dialect's terminal one ([DONE], message_stop, ...), or the
// body is no stream: what a client commits without a truncation.
bool Complete(Dialect dialect, std::string_view content_type, std::string_view body);

// Fills `import.scenarios` from its cassettes: one scenario per dialect whose responses play its
// cassettes in order. `source` names the input in the scenarios' description ("session.har
// (HAR)"); `input_file` gives the default name.
void AddScenarios(Import& import, std::string_view input_file, std::string_view source,
                  const ImportOptions& options);

}  // namespace cassette_import
}  // namespace faultline::scenario
