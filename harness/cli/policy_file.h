// Loading a reference-client retry policy from a JSON file named on the command line (`--policy`),
// shared by `faultline call` and `faultline run`. An empty path means the default policy.
#pragma once

#include <expected>
#include <string>

#include "reference_impl/policy.h"

namespace faultline::cli {

// Errors name the file and, for invalid content, the JSON path (policy_json.h).
std::expected<ref::RetryPolicy, std::string> LoadPolicyFile(const std::string& path);

}  // namespace faultline::cli
