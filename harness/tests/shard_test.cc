// `--shard I/N` and `--shard auto`: the shard each CI or cluster engine's variables name, and an
// error that names the variables whenever they say nothing, too little or two different things.
#include "harness/shard.h"

#include <gtest/gtest.h>

#include <string>

namespace faultline::harness {
namespace {

std::string Auto(const ShardEnvironment& env, std::optional<int> count = std::nullopt) {
  auto shard = ShardFromEnvironment(env, count);
  return shard ? ShardText(*shard) : "error: " + shard.error();
}

bool SaysError(const std::string& said, std::string_view part) {
  return said.starts_with("error: ") && said.find(part) != std::string::npos;
}

TEST(ShardTest, ParsesIOverN) {
  EXPECT_EQ(ShardText(*ParseShard("2/3")), "2/3");
  EXPECT_TRUE(ParseShard("3/3"));
  for (const char* bad : {"0/3", "4/3", "x", "1/0", "/3", "1/", "-1/3", "1/3x", "auto"}) {
    EXPECT_FALSE(ParseShard(bad)) << bad;
  }
}

TEST(ShardTest, ReadsOurVariablesOneBased) {
  EXPECT_EQ(Auto({{"FAULTLINE_SHARD_INDEX", "1"}, {"FAULTLINE_SHARD_TOTAL", "3"}}), "1/3");
  EXPECT_EQ(Auto({{"FAULTLINE_SHARD_INDEX", "3"}, {"FAULTLINE_SHARD_TOTAL", "3"}}), "3/3");
  EXPECT_EQ(Auto({{"FAULTLINE_SHARD_INDEX", "2"}}, 4), "2/4");  // the count from --shard-count
  EXPECT_TRUE(SaysError(Auto({{"FAULTLINE_SHARD_INDEX", "4"}, {"FAULTLINE_SHARD_TOTAL", "3"}}),
                        "FAULTLINE_SHARD_INDEX=4 is outside 1..3 (FAULTLINE_SHARD_TOTAL=3)"));
  EXPECT_TRUE(SaysError(Auto({{"FAULTLINE_SHARD_INDEX", "0"}, {"FAULTLINE_SHARD_TOTAL", "3"}}),
                        "FAULTLINE_SHARD_INDEX='0' is not a whole number >= 1"));
  EXPECT_TRUE(SaysError(Auto({{"FAULTLINE_SHARD_INDEX", "2"}}), "needs a count"));
}

TEST(ShardTest, ReadsGitLabParallel) {
  EXPECT_EQ(Auto({{"CI_NODE_INDEX", "2"}, {"CI_NODE_TOTAL", "5"}}), "2/5");
  // A job without parallel: GitLab sets CI_NODE_TOTAL=1 and no index: the whole run.
  EXPECT_EQ(Auto({{"CI_NODE_TOTAL", "1"}}), "1/1");
  EXPECT_TRUE(SaysError(Auto({{"CI_NODE_TOTAL", "4"}}), "CI_NODE_TOTAL=4 without CI_NODE_INDEX"));
  EXPECT_TRUE(SaysError(Auto({{"CI_NODE_INDEX", "2"}}), "CI_NODE_INDEX=2 without CI_NODE_TOTAL"));
  EXPECT_TRUE(SaysError(Auto({{"CI_NODE_INDEX", "6"}, {"CI_NODE_TOTAL", "5"}}),
                        "CI_NODE_INDEX=6 is outside 1..5 (CI_NODE_TOTAL=5)"));
  EXPECT_TRUE(SaysError(Auto({{"CI_NODE_INDEX", "2"}, {"CI_NODE_TOTAL", "5"}}, 4),
                        "--shard-count 4 disagrees with CI_NODE_INDEX=2, CI_NODE_TOTAL=5"));
}

TEST(ShardTest, ReadsAKubernetesIndexedJobZeroBasedWithTheCountGiven) {
  EXPECT_EQ(Auto({{"JOB_COMPLETION_INDEX", "0"}}, 3), "1/3");
  EXPECT_EQ(Auto({{"JOB_COMPLETION_INDEX", "2"}}, 3), "3/3");
  EXPECT_EQ(Auto({{"JOB_COMPLETION_INDEX", "2"}, {"FAULTLINE_SHARD_TOTAL", "7"}}), "3/7");
  EXPECT_TRUE(SaysError(Auto({{"JOB_COMPLETION_INDEX", "3"}}, 3),
                        "JOB_COMPLETION_INDEX=3 is outside 0..2 (--shard-count 3)"));
  EXPECT_TRUE(SaysError(Auto({{"JOB_COMPLETION_INDEX", "1"}}),
                        "give --shard-count N or set FAULTLINE_SHARD_TOTAL"));
  EXPECT_TRUE(SaysError(Auto({{"JOB_COMPLETION_INDEX", "1"}, {"FAULTLINE_SHARD_TOTAL", "3"}}, 4),
                        "--shard-count 4 disagrees with FAULTLINE_SHARD_TOTAL=3"));
}

TEST(ShardTest, EnginesThatAgreeAreFineAndEnginesThatDisagreeAreAnError) {
  EXPECT_EQ(Auto({{"FAULTLINE_SHARD_INDEX", "2"},
                  {"FAULTLINE_SHARD_TOTAL", "3"},
                  {"JOB_COMPLETION_INDEX", "1"}}),
            "2/3");
  const std::string two = Auto({{"FAULTLINE_SHARD_INDEX", "2"},
                                {"FAULTLINE_SHARD_TOTAL", "3"},
                                {"CI_NODE_INDEX", "1"},
                                {"CI_NODE_TOTAL", "3"}});
  EXPECT_TRUE(SaysError(two,
                        "the environment names two shards: 2/3 from FAULTLINE_SHARD_INDEX=2, "
                        "FAULTLINE_SHARD_TOTAL=3, 1/3 from CI_NODE_INDEX=1, CI_NODE_TOTAL=3"))
      << two;
  // A GitLab job without parallel: says nothing against another engine's index.
  EXPECT_EQ(Auto({{"CI_NODE_TOTAL", "1"}, {"JOB_COMPLETION_INDEX", "1"}}, 2), "2/2");
}

TEST(ShardTest, NothingFoundOrValuesThatAreNoNumbersAreErrors) {
  const std::string nothing = Auto({});
  EXPECT_TRUE(SaysError(nothing, "found no shard in the environment")) << nothing;
  for (const char* variable : {"FAULTLINE_SHARD_INDEX", "CI_NODE_INDEX", "JOB_COMPLETION_INDEX",
                               "CI_NODE_TOTAL", "FAULTLINE_SHARD_TOTAL"}) {
    EXPECT_NE(nothing.find(variable), std::string::npos) << "the error names " << variable;
  }
  EXPECT_TRUE(SaysError(Auto({{"FAULTLINE_SHARD_TOTAL", "3"}}),
                        "FAULTLINE_SHARD_TOTAL=3 gives a count but no variable gives this "
                        "shard's index"));
  EXPECT_TRUE(SaysError(Auto({}, 3), "--shard-count 3 gives a count but no variable"));
  EXPECT_TRUE(SaysError(Auto({{"CI_NODE_INDEX", ""}, {"CI_NODE_TOTAL", "2"}}),
                        "CI_NODE_INDEX='' is not a whole number >= 1"));
  EXPECT_TRUE(SaysError(Auto({{"JOB_COMPLETION_INDEX", "one"}}, 2),
                        "JOB_COMPLETION_INDEX='one' is not a whole number >= 0"));
}

TEST(ShardTest, ResolveShardTakesNothingIOverNOrAuto) {
  const ShardEnvironment env{{"CI_NODE_INDEX", "3"}, {"CI_NODE_TOTAL", "4"}};
  EXPECT_EQ(ResolveShard("", std::nullopt, env).value(), std::nullopt);
  EXPECT_EQ(ShardText(ResolveShard("2/5", std::nullopt, env).value().value()), "2/5");
  EXPECT_EQ(ShardText(ResolveShard("auto", std::nullopt, env).value().value()), "3/4");
  const auto bad = ResolveShard("auto", std::nullopt, {});
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.error().starts_with("--shard auto: found no shard")) << bad.error();
  EXPECT_FALSE(ResolveShard("2/5", 5, env)) << "--shard-count belongs to auto";
  EXPECT_FALSE(ResolveShard("", 5, env));
}

TEST(ShardTest, InShardPutsEachKeyInExactlyOneShard) {
  for (const int count : {1, 3, 7}) {
    int shards = 0;
    for (int index = 1; index <= count; ++index) {
      shards += InShard("rate-limit/openai-chat-429-then-success", Shard{index, count}) ? 1 : 0;
    }
    EXPECT_EQ(shards, 1) << count;
  }
}

}  // namespace
}  // namespace faultline::harness
