// A strict reader of one JSON object, for RunResultFromJson: every field it is asked for must be
// present (unless read as optional) and of the right type, every field it was not asked for is an
// error, and every error names the JSON path ("scenarios[3].checks[0].status: ...").
//
// The first error wins and is written to the `error` string shared by a whole parse; once it is
// set, every further read is a no-op, so parsing code reads fields in a straight line and checks
// ok() once. Not owning: the JSON and the error string must outlive the reader. Thread-safety:
// none (a value used on one thread).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace faultline::report::internal {

// "a.b" / "a[3]" path building; the root is "".
std::string JoinPath(std::string_view path, std::string_view key);
std::string IndexPath(std::string_view path, std::size_t index);
// How a path is shown in a message: the root is "(top level)".
std::string ShowPath(std::string_view path);
// "object", "array", "string", "number", "boolean", "null".
std::string_view TypeName(const nlohmann::json& json);

class ObjectReader {
 public:
  // Records an error at `path` when `json` is not an object.
  ObjectReader(const nlohmann::json& json, std::string path, std::string& error);

  void Read(std::string_view key, std::string& out);
  void Read(std::string_view key, int& out, int minimum = 0);
  void Read(std::string_view key, std::uint64_t& out);
  void Read(std::string_view key, double& out);
  void Read(std::string_view key, bool& out);
  void Read(std::string_view key, std::vector<std::string>& out);
  // Absent keys leave `out` unchanged.
  void ReadOptional(std::string_view key, std::string& out);
  void ReadOptional(std::string_view key, std::optional<double>& out);
  // The raw value of a required key, or nullptr (with the error set) when absent.
  const nlohmann::json* Field(std::string_view key);
  // The raw value of an optional key, or nullptr when absent.
  const nlohmann::json* OptionalField(std::string_view key);

  // Reports the first key that was never read. Returns ok().
  bool Finish();
  bool ok() const { return error_.empty(); }
  // Sets the error (unless one is set) for `key` of this object: "<path>.<key>: <message>".
  void Fail(std::string_view key, std::string_view message);
  const std::string& path() const { return path_; }

 private:
  const nlohmann::json* Find(std::string_view key, bool required);
  void TypeError(std::string_view key, std::string_view expected, const nlohmann::json& got);

  const nlohmann::json& json_;
  std::string path_;
  std::string& error_;
  std::set<std::string, std::less<>> read_;
};

}  // namespace faultline::report::internal
