#include "harness/cli/policy_file.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "reference_impl/policy_json.h"

namespace faultline::cli {

std::expected<ref::RetryPolicy, std::string> LoadPolicyFile(const std::string& path) {
  if (path.empty()) return ref::RetryPolicy{};
  std::ifstream file(path);
  if (!file) return std::unexpected(fmt::format("cannot read policy file '{}'", path));
  std::stringstream text;
  text << file.rdbuf();
  auto policy = ref::LoadPolicy(text.str());
  if (!policy) return std::unexpected(fmt::format("{}: {}", path, policy.error().ToString()));
  return std::move(*policy);
}

}  // namespace faultline::cli
