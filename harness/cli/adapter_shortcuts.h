// Shortcut names for the adapters shipped in harness/adapters/ (`faultline run --adapter
// openai-node`), and the dialects each speaks. Anything that is not a shortcut is a command.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario.h"

namespace faultline::cli {

struct ResolvedAdapter {
  std::string command;
  std::vector<scenario::Dialect> dialects;  // empty: every dialect (a user's own command)
  std::string label;                        // the shortcut name, or the command
};

// `text` is a shortcut name (openai-node, openai-node-helper, anthropic-node,
// anthropic-node-helper, vercel-ai, langchain, vercel-ai-fallback, langchain-fallbacks,
// python-baseline, reference) or a command. The
// adapters are looked up in $FAULTLINE_ADAPTERS_DIR, else in share/faultline/adapters beside an
// installed binary's bin/, else in the source tree this binary was built from. Errors: a Node
// adapter whose pinned packages are not installed (names the setup command).
std::expected<ResolvedAdapter, std::string> ResolveAdapter(std::string_view text);

// "openai-node, openai-node-helper, ..." for --help.
std::string AdapterShortcutNames();

}  // namespace faultline::cli
