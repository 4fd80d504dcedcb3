// The one loader of retry policies named on a command line or in a fleet file: a preset's name
// (reference_impl/presets.h) or a policy file in YAML or JSON (docs/policy.md), for `faultline
// call --policy`, `faultline run --policy` and `faultline simulate` (whose profiles add the
// fleet's own mechanisms to a preset: profiles.h).
//
// A file is read by the scenario library's YAML reader (JSON is YAML's flow subset) into the
// policy's JSON with the position of every value, then parsed by the reference client's strict
// loader, so an error reads "file:line:column: at backoff.cap_ms: must be >= base_ms ...". The
// loader lives in the fleet library because that is the one library that reaches both the
// reference client's format and the YAML reader, and that both the command line and the fleet
// reach (reference_impl itself stays free of yaml-cpp).
//
// Pure functions of the file system; thread-safe.
#pragma once

#include <expected>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "reference_impl/policy.h"

namespace faultline::fleet {

// The policy of a YAML or JSON file (either, whatever its name), `extends` resolved.
std::expected<ref::RetryPolicy, std::string> LoadPolicyFile(const std::filesystem::path& file);

struct LoadedPolicy {
  std::string name;  // the preset's name, or the file's stem
  ref::RetryPolicy policy;
  std::string source;  // the preset's source, or the file's path
};

// The preset called `name_or_path`, else the policy file at that path. An unknown name suggests
// the nearest preset, or of `more_names` (the fleet's profiles).
std::expected<LoadedPolicy, std::string> LoadNamedPolicy(
    std::string_view name_or_path, std::span<const std::string_view> more_names = {});

// The policy a `--policy NAME|FILE` option names: the reference client's defaults when it is
// empty, else LoadNamedPolicy's.
std::expected<ref::RetryPolicy, std::string> PolicyOption(std::string_view name_or_path);

}  // namespace faultline::fleet
