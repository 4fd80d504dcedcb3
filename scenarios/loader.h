// Loading scenario files: YAML or JSON text -> validated Scenario, or a precise error.
//
// Both formats go through yaml-cpp (JSON is YAML's flow subset), so every error can name the file,
// the line and column, the JSON path of the bad field ("responses[1].retry_after.form"), and what
// was expected. Unknown keys are errors (a typo must never become a silent default). The
// authoritative description of the format is scenarios/schema/scenario.schema.json; the loader
// enforces the same rules and a test keeps the two in step.
//
// Thread-safety: all functions are reentrant; they share no state.
#pragma once

#include <expected>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/duration.h"
#include "scenarios/load_error.h"
#include "scenarios/parse_limits.h"
#include "scenarios/scenario.h"

namespace faultline::scenario {

// Parses one scenario document. `file` is used in errors and stored in Scenario::source.
// Text beyond `limits` is refused before it is built (LoadError::over_limit).
std::expected<Scenario, LoadError> ParseScenario(std::string_view text, std::string_view file,
                                                 const ParseLimits& limits = {});

// Parses one document into every scenario it holds: one, or one per dialect of a matrix file
// (`dialects:` instead of `dialect:`, docs/scenario-guide.md). ParseScenario refuses a matrix.
std::expected<std::vector<Scenario>, std::vector<LoadError>> ParseScenarios(
    std::string_view text, std::string_view file, const ParseLimits& limits = {});

// Reads and parses one file (.yaml, .yml or .json).
std::expected<Scenario, LoadError> LoadScenarioFile(const std::filesystem::path& file);

// Loads files and folders (recursively, *.yaml|*.yml|*.json, sorted by path). Every file is tried:
// the result holds all scenarios, or every error found. Duplicate scenario names are errors.
std::expected<std::vector<Scenario>, std::vector<LoadError>> LoadScenarios(
    std::span<const std::filesystem::path> paths);

// How many errors `faultline validate` reports per file before it stops with a note.
inline constexpr std::size_t kMaxErrorsPerFile = 50;

// LoadScenarios, but with up to `max_errors_per_file` errors of each file, not only its first:
// after an error the loader reads on past the field at fault. A last error per file says when
// it stopped at the cap. A syntax error still stops its file (nothing after it can be read).
std::expected<std::vector<Scenario>, std::vector<LoadError>> LoadScenarios(
    std::span<const std::filesystem::path> paths, std::size_t max_errors_per_file);

// A retry policy document (docs/policy.md) in YAML or JSON: `faultline call/run --policy FILE` and
// a fleet's policy files. Read like a scenario's `policy:` block, into its JSON text with every
// value's position (this library knows nothing of retry policies: the caller parses the JSON and
// places its errors with PolicySpec::ErrorAt). One document, a mapping, within `limits`.
std::expected<PolicySpec, LoadError> ParsePolicyDocument(std::string_view text,
                                                         std::string_view file,
                                                         const ParseLimits& limits = {});
std::expected<PolicySpec, LoadError> LoadPolicyDocument(const std::filesystem::path& file);

// The catalogue embedded in the binary at build time (scenarios/catalog/**), parsed.
// Its files are valid by construction (a test loads them); this still returns errors, not asserts.
std::expected<std::vector<Scenario>, std::vector<LoadError>> LoadBuiltinCatalog();
// The gateway catalogue (scenarios/gateways/): scenarios with routes for a gateway in front of
// them (`faultline run --gateway`), apart from the catalogue above, which judges clients.
std::expected<std::vector<Scenario>, std::vector<LoadError>> LoadBuiltinGatewayCatalog();

// A fleet experiment embedded from scenarios/fleet/, found by the names a user types after
// reading the README: "rate-limit-storm", "fleet/rate-limit-storm(.yaml)" or a path ending in
// "scenarios/fleet/rate-limit-storm.yaml". nullopt when `name` names none of them.
std::optional<std::expected<Scenario, LoadError>> LoadBuiltinFleet(std::string_view name);
// The embedded fleet experiments' names ("fleet/rate-limit-storm", ...), for help and errors.
std::vector<std::string> BuiltinFleetNames();

}  // namespace faultline::scenario
