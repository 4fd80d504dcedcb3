#include "fleet/policy_file.h"

#include <vector>

#include "fmt/format.h"
#include "reference_impl/policy_json.h"
#include "reference_impl/presets.h"
#include "scenarios/loader.h"

namespace faultline::fleet {

std::expected<ref::RetryPolicy, std::string> LoadPolicyFile(const std::filesystem::path& file) {
  auto document = scenario::LoadPolicyDocument(file);
  if (!document) return std::unexpected(document.error().ToString());
  auto policy = ref::LoadPolicy(document->json);
  if (policy) return std::move(*policy);
  const ref::PolicyError& error = policy.error();
  return std::unexpected(
      document->ErrorAt(file.string(), "", error.path, error.message).ToString());
}

std::expected<LoadedPolicy, std::string> LoadNamedPolicy(
    std::string_view name_or_path, std::span<const std::string_view> more_names) {
  if (const ref::Preset* preset = ref::FindPreset(name_or_path)) {
    auto policy = ref::PolicyFromJson(nlohmann::json{{"extends", preset->name}});
    if (!policy) {
      return std::unexpected(fmt::format("the built-in preset '{}' does not load: {}", preset->name,
                                         policy.error().ToString()));
    }
    return LoadedPolicy{preset->name, std::move(*policy), preset->source};
  }
  const std::filesystem::path file(name_or_path);
  std::error_code error;
  if (std::filesystem::exists(file, error)) {
    auto policy = LoadPolicyFile(file);
    if (!policy) return std::unexpected(policy.error());
    return LoadedPolicy{file.stem().string(), std::move(*policy), file.string()};
  }
  std::vector<std::string_view> names(more_names.begin(), more_names.end());
  for (const ref::Preset& preset : ref::Presets()) names.push_back(preset.name);
  return std::unexpected(fmt::format(
      "unknown policy '{}'{} (a preset's name, docs/policy.md lists them, or the path of a JSON "
      "or YAML policy file)",
      name_or_path, ref::DidYouMean(name_or_path, names)));
}

std::expected<ref::RetryPolicy, std::string> PolicyOption(std::string_view name_or_path) {
  if (name_or_path.empty()) return ref::RetryPolicy{};
  auto loaded = LoadNamedPolicy(name_or_path);
  if (!loaded) return std::unexpected(std::move(loaded.error()));
  return std::move(loaded->policy);
}

}  // namespace faultline::fleet
