// Named policies ("presets"): policy documents a policy may start from with
// `"extends": "openai-node"`, for the shipped subjects, for common shapes ("reference",
// "one-endpoint", "no-retry") and for the fleet's profiles.
//
// One JSON file per preset in reference_impl/presets/ (the preset's name is the file's stem),
// embedded in the binary at build time (cmake/embed_files.cmake): the one home of every named
// declaration, read by a policy's `extends` (policy_json.h), by `faultline call/run --policy
// NAME`, by the fleet's profiles and by the shipped adapters, which declare `extends`. A file
// holds the preset's one-line summary, the source its values were read from, a note per policy
// key with the file:line evidence, and the policy document itself, which may extend another
// preset:
//
//   {"summary": "openai 6.30.1 (Node), default client",
//    "source": "openai src/client.ts:423, ...",
//    "notes": {"max_attempts": "O:423 `maxRetries ?? 2`: ...", ...},
//    "policy": {"extends": "node-fetch", "max_attempts": 3, ...}}
//
// A preset is complete by definition: what it does not state through its chain is the reference
// client's default. Every preset but "reference" states its routing (one endpoint, or a router's
// own), so that extending one never implies the reference client's failover by accident.
//
// Thread-safety: the table is built once, on first use, and read-only afterwards.
#pragma once

#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"
#include "reference_impl/policy.h"

namespace faultline::ref {

// A file embedded at build time: its path below reference_impl/presets/ and its bytes.
struct EmbeddedFile {
  std::string_view path;  // "openai-node.json"
  std::string_view content;
};
std::span<const EmbeddedFile> EmbeddedPresetFiles();

struct Preset {
  std::string name;       // "openai-node"
  std::string summary;    // one line: who behaves like this
  std::string source;     // where the values were read (files, lines, versions)
  nlohmann::json notes;   // policy key -> why it has its value
  nlohmann::json policy;  // the document as written, "extends" included
  std::string error;      // the file does not read as a preset (a test keeps this empty)
};

// Every preset, sorted by name.
std::span<const Preset> Presets();
const Preset* FindPreset(std::string_view name);

// How many presets an `extends` chain may pass through.
inline constexpr int kMaxExtendsDepth = 8;

// `document` with its `extends` resolved: the named preset's document (itself resolved) with
// `document`'s own keys over it, nested objects merged key by key (anything else, arrays and
// null included, replaces); "extends" itself is gone. Giving `max_attempts` or `max_retries`
// replaces both of the preset's. A document without "extends" (or not an object) is returned as
// is. Errors are at path "extends": not a string, an unknown preset (with a did-you-mean and the
// list), a chain that loops or is deeper than kMaxExtendsDepth.
std::expected<nlohmann::json, PolicyError> ResolveExtends(const nlohmann::json& document);

}  // namespace faultline::ref
