#include "reference_impl/presets.h"

#include <algorithm>
#include <array>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "reference_impl/policy_json.h"

namespace faultline::ref {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::string_view, 4> kPresetKeys{"summary", "source", "notes", "policy"};

// Why `json` is not a preset file, or "".
std::string PresetFileError(const Json& json) {
  if (!json.is_object()) return "not a JSON object";
  for (const auto& [key, value] : json.items()) {
    if (std::ranges::find(kPresetKeys, key) == kPresetKeys.end()) {
      return fmt::format("unknown key '{}'", key);
    }
  }
  for (const char* text : {"summary", "source"}) {
    if (!json.contains(text) || !json[text].is_string()) return fmt::format("no '{}' text", text);
  }
  if (!json.contains("notes") || !json["notes"].is_object()) return "no 'notes' object";
  if (!json.contains("policy") || !json["policy"].is_object()) return "no 'policy' object";
  return {};
}

Preset ReadPreset(const EmbeddedFile& file) {
  Preset preset;
  std::string_view name = file.path;
  if (name.ends_with(".json")) name.remove_suffix(5);
  preset.name = std::string(name);
  const Json json = Json::parse(file.content, nullptr, /*allow_exceptions=*/false);
  preset.error = json.is_discarded() ? "not valid JSON" : PresetFileError(json);
  if (!preset.error.empty()) return preset;
  preset.summary = json["summary"].get<std::string>();
  preset.source = json["source"].get<std::string>();
  preset.notes = json["notes"];
  preset.policy = json["policy"];
  return preset;
}

std::vector<Preset> ReadAll() {
  std::vector<Preset> presets;
  for (const EmbeddedFile& file : EmbeddedPresetFiles()) presets.push_back(ReadPreset(file));
  std::ranges::sort(presets, {}, &Preset::name);
  return presets;
}

// `over`'s keys on top of `base`: objects merged key by key, anything else replaced.
void MergeInto(Json& base, const Json& over) {
  for (const auto& [key, value] : over.items()) {
    auto found = base.find(key);
    if (found != base.end() && found->is_object() && value.is_object()) {
      MergeInto(*found, value);
    } else {
      base[key] = value;
    }
  }
}

PolicyError ExtendsError(std::string message) { return PolicyError{"extends", std::move(message)}; }

std::expected<Json, PolicyError> Resolve(const Json& document, std::vector<std::string>& chain);

// The resolved document of the preset `name`, reached through `chain`.
std::expected<Json, PolicyError> PresetDocument(std::string_view name,
                                                std::vector<std::string>& chain) {
  const Preset* preset = FindPreset(name);
  if (preset == nullptr) {
    std::vector<std::string_view> names;
    for (const Preset& known : Presets()) names.push_back(known.name);
    return std::unexpected(
        ExtendsError(fmt::format("unknown preset '{}'{} (presets: {})", name,
                                 DidYouMean(name, names), fmt::join(names, ", "))));
  }
  if (!preset->error.empty()) {
    return std::unexpected(ExtendsError(
        fmt::format("the built-in preset '{}' does not read: {}", name, preset->error)));
  }
  if (std::ranges::find(chain, name) != chain.end()) {
    return std::unexpected(ExtendsError(fmt::format(
        "the presets extend each other in a loop: {} -> {}", fmt::join(chain, " -> "), name)));
  }
  if (static_cast<int>(chain.size()) >= kMaxExtendsDepth) {
    return std::unexpected(ExtendsError(fmt::format("more than {} presets extend each other: {}",
                                                    kMaxExtendsDepth, fmt::join(chain, " -> "))));
  }
  chain.emplace_back(name);
  return Resolve(preset->policy, chain);
}

std::expected<Json, PolicyError> Resolve(const Json& document, std::vector<std::string>& chain) {
  if (!document.is_object() || !document.contains("extends")) return document;
  const Json& name = document["extends"];
  if (!name.is_string()) {
    return std::unexpected(
        ExtendsError(fmt::format("expected the name of a preset, got {}", name.type_name())));
  }
  auto base = PresetDocument(name.get_ref<const std::string&>(), chain);
  if (!base) return base;
  Json own = document;
  own.erase("extends");
  if (own.contains("max_attempts") || own.contains("max_retries")) {
    base->erase("max_attempts");
    base->erase("max_retries");
  }
  MergeInto(*base, own);
  return base;
}

}  // namespace

std::span<const Preset> Presets() {
  static const std::vector<Preset> presets = ReadAll();
  return presets;
}

const Preset* FindPreset(std::string_view name) {
  const auto presets = Presets();
  const auto found = std::ranges::find(presets, name, &Preset::name);
  return found == presets.end() ? nullptr : &*found;
}

std::expected<nlohmann::json, PolicyError> ResolveExtends(const nlohmann::json& document) {
  std::vector<std::string> chain;
  return Resolve(document, chain);
}

}  // namespace faultline::ref
