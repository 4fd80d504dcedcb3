// Files and folders of scenarios, the embedded catalogue, and error formatting.
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include "fmt/format.h"
#include "scenarios/embedded_catalog.h"
#include "scenarios/loader_internal.h"

namespace faultline::scenario {
namespace {

using internal::ReadFile;

namespace fs = std::filesystem;

bool IsScenarioFile(const fs::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".yaml" || extension == ".yml" || extension == ".json";
}

LoadError FileError(const fs::path& file, std::string message) {
  LoadError error;
  error.file = file.string();
  error.message = std::move(message);
  return error;
}

// The scenario files below `folder`, sorted by path; read failures are added to `errors`.
std::vector<fs::path> FilesBelow(const fs::path& folder, std::vector<LoadError>& errors) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && IsScenarioFile(it->path())) files.push_back(it->path());
  }
  if (ec) errors.push_back(FileError(folder, fmt::format("cannot list folder: {}", ec.message())));
  std::sort(files.begin(), files.end());
  return files;
}

// Every file to load, in order, each once (a file named directly and again through its folder
// would otherwise clash with itself as a duplicate).
std::vector<fs::path> ExpandPaths(std::span<const fs::path> paths, std::vector<LoadError>& errors) {
  std::vector<fs::path> files;
  for (const fs::path& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      errors.push_back(FileError(path, "no such file or folder"));
    } else if (fs::is_directory(status)) {
      std::vector<fs::path> below = FilesBelow(path, errors);
      files.insert(files.end(), below.begin(), below.end());
    } else {
      files.push_back(path);
    }
  }
  std::vector<fs::path> unique;
  std::vector<fs::path> seen;
  for (const fs::path& file : files) {
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(file, ec);
    if (ec) canonical = file;
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) continue;
    seen.push_back(canonical);
    unique.push_back(file);
  }
  return unique;
}

// Collects parsed scenarios, reporting a name that was already taken at the later definition.
class Collector {
 public:
  void Add(std::expected<internal::ParsedScenario, LoadError> parsed) {
    if (!parsed) {
      errors_.push_back(std::move(parsed.error()));
      return;
    }
    Scenario& scenario = parsed->scenario;
    auto [it, inserted] = first_source_.emplace(scenario.name, scenario.source);
    if (!inserted) {
      errors_.push_back(
          LoadError{.file = scenario.source,
                    .line = parsed->name_line,
                    .column = parsed->name_column,
                    .path = "name",
                    .message = fmt::format("duplicate scenario name '{}': already defined in {}",
                                           scenario.name, it->second)});
      return;
    }
    scenarios_.push_back(std::move(scenario));
  }
  void AddError(LoadError error) { errors_.push_back(std::move(error)); }
  std::size_t error_count() const { return errors_.size(); }

  std::expected<std::vector<Scenario>, std::vector<LoadError>> Result() && {
    if (!errors_.empty()) return std::unexpected(std::move(errors_));
    return std::move(scenarios_);
  }

 private:
  std::vector<Scenario> scenarios_;
  std::vector<LoadError> errors_;
  std::map<std::string, std::string> first_source_;  // name -> file that defined it first
};

std::expected<internal::ParsedScenario, LoadError> ParseFile(
    const fs::path& file, std::vector<LoadError>* further = nullptr, std::size_t max_errors = 1) {
  std::expected<std::string, LoadError> text = ReadFile(file);
  if (!text) return std::unexpected(std::move(text.error()));
  return internal::ParseScenarioWithPosition(*text, file.string(), {}, further, max_errors);
}

// Every scenario of one file: the one, or one per dialect of a matrix file (`dialects:`), each
// with its own errors (a file valid in one of its dialects may not be in another).
void CollectFile(std::string_view text, std::string_view file, std::size_t max_errors,
                 Collector& collector, const ParseLimits& limits = {}) {
  std::vector<std::optional<Dialect>> expansions;
  for (Dialect dialect : internal::MatrixDialects(text, limits)) expansions.emplace_back(dialect);
  if (expansions.empty()) expansions.emplace_back(std::nullopt);
  for (const std::optional<Dialect>& matrix : expansions) {
    std::vector<LoadError> further;
    collector.Add(
        internal::ParseScenarioWithPosition(text, file, limits, &further, max_errors, matrix));
    for (LoadError& error : further) collector.AddError(std::move(error));
  }
}

}  // namespace

namespace internal {

std::expected<std::string, LoadError> ReadFile(const std::filesystem::path& file) {
  std::error_code ec;
  if (fs::is_directory(file, ec)) return std::unexpected(FileError(file, "is a folder"));
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::unexpected(FileError(file, "cannot open file"));
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return std::unexpected(FileError(file, "cannot read file"));
  return std::move(content).str();
}

}  // namespace internal

std::expected<std::vector<Scenario>, std::vector<LoadError>> ParseScenarios(
    std::string_view text, std::string_view file, const ParseLimits& limits) {
  Collector collector;
  CollectFile(text, file, 1, collector, limits);
  return std::move(collector).Result();
}

std::expected<Scenario, LoadError> LoadScenarioFile(const fs::path& file) {
  auto parsed = ParseFile(file);
  if (!parsed) return std::unexpected(std::move(parsed.error()));
  return std::move(parsed->scenario);
}

std::expected<PolicySpec, LoadError> LoadPolicyDocument(const fs::path& file) {
  std::expected<std::string, LoadError> text = ReadFile(file);
  if (!text) return std::unexpected(std::move(text.error()));
  return ParsePolicyDocument(*text, file.string());
}

std::expected<ProxyRules, LoadError> LoadProxyRules(const fs::path& file) {
  std::expected<std::string, LoadError> text = ReadFile(file);
  if (!text) return std::unexpected(std::move(text.error()));
  return ParseProxyRules(*text, file.string());
}

std::expected<std::vector<Scenario>, std::vector<LoadError>> LoadScenarios(
    std::span<const fs::path> paths) {
  return LoadScenarios(paths, 1);
}

std::expected<std::vector<Scenario>, std::vector<LoadError>> LoadScenarios(
    std::span<const fs::path> paths, std::size_t max_errors_per_file) {
  Collector collector;
  std::vector<LoadError> path_errors;
  const std::vector<fs::path> files = ExpandPaths(paths, path_errors);
  for (LoadError& error : path_errors) collector.AddError(std::move(error));
  for (const fs::path& file : files) {
    std::expected<std::string, LoadError> text = ReadFile(file);
    if (!text) {
      collector.AddError(std::move(text.error()));
      continue;
    }
    const std::size_t errors_before = collector.error_count();
    CollectFile(*text, file.string(), max_errors_per_file, collector);
    if (max_errors_per_file > 1 && collector.error_count() - errors_before >= max_errors_per_file) {
      collector.AddError(FileError(
          file, fmt::format("stopped after {} errors in this file; fix these and validate again",
                            max_errors_per_file)));
    }
  }
  return std::move(collector).Result();
}

std::expected<std::vector<Scenario>, std::vector<LoadError>> LoadBuiltinCatalog() {
  Collector collector;
  for (const EmbeddedFile& file : EmbeddedCatalogFiles()) {
    CollectFile(file.content, fmt::format("<builtin>/{}", file.path), 1, collector);
  }
  return std::move(collector).Result();
}

std::expected<std::vector<Scenario>, std::vector<LoadError>> LoadBuiltinGatewayCatalog() {
  Collector collector;
  for (const EmbeddedFile& file : EmbeddedGatewayCatalogFiles()) {
    CollectFile(file.content, fmt::format("<builtin>/gateways/{}", file.path), 1, collector);
  }
  return std::move(collector).Result();
}

namespace {

std::string_view WithoutExtension(std::string_view path) {
  for (std::string_view extension : {".yaml", ".yml", ".json"}) {
    if (path.ends_with(extension)) return path.substr(0, path.size() - extension.size());
  }
  return path;
}

}  // namespace

std::optional<std::expected<Scenario, LoadError>> LoadBuiltinFleet(std::string_view name) {
  std::string_view wanted = WithoutExtension(name);
  while (wanted.starts_with("./")) wanted.remove_prefix(2);
  // Only the names the README and the help print, never any path that happens to end alike: a
  // missing file of the user's own stays "no such file".
  for (std::string_view folder : {"scenarios/fleet/", "fleet/"}) {
    if (wanted.starts_with(folder)) {
      wanted.remove_prefix(folder.size());
      break;
    }
  }
  for (const EmbeddedFile& file : EmbeddedFleetFiles()) {
    if (WithoutExtension(file.path) != wanted) continue;
    auto parsed = internal::ParseScenarioWithPosition(file.content,
                                                      fmt::format("<builtin>/fleet/{}", file.path));
    if (!parsed) return std::unexpected(std::move(parsed.error()));
    return std::move(parsed->scenario);
  }
  return std::nullopt;
}

std::vector<std::string> BuiltinFleetNames() {
  std::vector<std::string> names;
  for (const EmbeddedFile& file : EmbeddedFleetFiles()) {
    names.push_back(fmt::format("fleet/{}", WithoutExtension(file.path)));
  }
  return names;
}

}  // namespace faultline::scenario
