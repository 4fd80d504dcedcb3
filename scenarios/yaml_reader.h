// Typed, position-aware reading of a yaml-cpp node tree, for the scenario loader.
//
// A Reader records the first error it meets (file, line, column, JSON path, message) and turns
// every later read into a no-op, so the loader reads a document top-down without checking after
// every field, and still reports the first problem exactly. To find every error of a document,
// the loader reads it again with the errors found so far as `reported`: a Fail at one of those
// places records nothing and the read goes on past that field (for an unknown key, past that
// key, so its siblings are checked too), so the next pass stops at the next error. What such a
// mapping lacks as a whole (a required key that "descriptio" misspells, one of its keys) is not
// reported: it would repeat the one mistake. Reading never throws
// on bad input; LoadDocuments throws yaml-cpp's syntax errors, which the loader's entry points
// catch. Internal to scenarios/.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "scenarios/loader.h"
#include "scenarios/parse_limits.h"
#include "scenarios/scenario.h"

namespace faultline::scenario::internal {

// A value in the document and where it is: its JSON path and its position for errors.
struct Field {
  YAML::Node node;
  std::string path;  // "responses[1].retry_after"; "" for the document itself
  YAML::Mark mark;   // the value's position, or its key's when the value is empty
};

// What a YAML scalar resolves to under the YAML 1.2 core schema. Quoted scalars are strings.
enum class ScalarType { kNull, kBool, kInt, kFloat, kString };
ScalarType Classify(const YAML::Node& node);

// "the string \"abc\"", "the number 5", "a list", ... for "got ..." in messages.
std::string Describe(const YAML::Node& node);

// The known key closest to `key` within edit distance 2 (transpositions count as one edit), or
// "" when none is that close.
std::string_view ClosestKey(std::string_view key, std::span<const std::string_view> known);

// A mapping whose keys were checked: every key known, none given twice.
class Map {
 public:
  const Field& self() const { return self_; }
  std::optional<Field> Get(std::string_view key) const;
  // The same field, but positioned at its key: for errors about the key's presence itself.
  std::optional<Field> GetKey(std::string_view key) const;
  bool Has(std::string_view key) const { return Get(key).has_value(); }

 private:
  friend class Reader;
  struct Entry {
    std::string name;
    Field field;
    YAML::Mark key_mark;
  };
  const Entry* Find(std::string_view key) const;

  Field self_;
  std::vector<Entry> entries_;
};

enum class Sign { kNonNegative, kAny };

class Reader {
 public:
  // `reported` (errors of earlier passes over the same document) must outlive the reader.
  explicit Reader(std::string_view file, std::span<const LoadError> reported = {})
      : file_(file), reported_(reported) {}

  bool ok() const { return !error_.has_value(); }
  const std::optional<LoadError>& error() const { return error_; }
  const std::string& file() const { return file_; }

  // Records an error at `at` unless one was recorded already (the first error is the one
  // reported) or `reported` has one at the same place (then the caller reads on past it).
  void Fail(const Field& at, std::string message);

  // Structure. Each returns nullopt (and records an error) when the value has the wrong shape.
  std::optional<Map> ReadMap(const Field& field, std::span<const std::string_view> known);
  std::optional<std::vector<Field>> ReadList(const Field& field);
  // map[key], recording "missing required key" when it is absent.
  std::optional<Field> Require(const Map& map, std::string_view key);

  // Scalars.
  std::optional<std::string> ReadString(const Field& field);
  // A string or a number, kept exactly as written (header values, Retry-After text).
  std::optional<std::string> ReadText(const Field& field);
  std::optional<bool> ReadBool(const Field& field);
  std::optional<std::int64_t> ReadInt(const Field& field, std::int64_t min, std::int64_t max);
  std::optional<std::uint64_t> ReadUint64(const Field& field);
  std::optional<double> ReadNumber(const Field& field, double min, double max);
  std::optional<Duration> ReadDuration(const Field& field, Sign sign);
  std::optional<Wait> ReadWait(const Field& field);  // a duration or "forever"
  // One of `names`; returns its position in `names`.
  std::optional<std::size_t> ReadName(const Field& field, std::span<const std::string_view> names);

  // map[key] into *out when the key is present (and no error was recorded before).
  void Get(const Map& map, std::string_view key, bool* out);
  void Get(const Map& map, std::string_view key, std::optional<bool>* out);
  void Get(const Map& map, std::string_view key, std::string* out);
  void Get(const Map& map, std::string_view key, std::optional<std::string>* out);
  void Get(const Map& map, std::string_view key, int* out, int min, int max);
  void Get(const Map& map, std::string_view key, std::optional<int>* out, int min, int max);
  void Get(const Map& map, std::string_view key, Duration* out, Sign sign = Sign::kNonNegative);
  void Get(const Map& map, std::string_view key, std::optional<Duration>* out,
           Sign sign = Sign::kNonNegative);
  void Get(const Map& map, std::string_view key, Wait* out);
  void Get(const Map& map, std::string_view key, std::optional<Wait>* out);
  // An enumerated value: `names[i]` maps to `static_cast<E>(first + i)`.
  template <typename E>
  void GetEnum(const Map& map, std::string_view key, std::span<const std::string_view> names,
               E first, E* out) {
    std::optional<Field> field = Present(map, key);
    if (!field) return;
    if (std::optional<std::size_t> index = ReadName(*field, names)) {
      *out = static_cast<E>(static_cast<int>(first) + static_cast<int>(*index));
    }
  }

  // map[key] when present and no error was recorded before.
  std::optional<Field> Present(const Map& map, std::string_view key) const;

 private:
  bool CheckKey(Map& map, const YAML::Node& key, const YAML::Node& value,
                std::span<const std::string_view> known);

  std::string file_;
  std::span<const LoadError> reported_;
  std::optional<LoadError> error_;
  // The mappings read past a reported unknown key (path, line, column): errors about one of them
  // as a whole are not recorded, and the read goes on.
  std::vector<std::tuple<std::string, int, int>> read_past_;
};

// Why LoadDocuments built nothing: yaml-cpp stopped making progress at `mark` (it would loop
// forever there), or the text is over the limits there.
struct DocumentError {
  YAML::Mark mark;
  std::string message;
  bool over_limit = false;
};

// The documents of `text`, as YAML::LoadAll returns them, after a first pass that checks each
// against `limits`. Throws YAML::Exception on syntax errors.
std::expected<std::vector<YAML::Node>, DocumentError> LoadDocuments(const std::string& text,
                                                                    const ParseLimits& limits);

// JSON paths.
std::string ChildPath(std::string_view parent, std::string_view key);
std::string ItemPath(std::string_view parent, std::size_t index);

}  // namespace faultline::scenario::internal
