// Shard buckets are a function of the key alone, in range, stable across releases (a CI matrix
// whose jobs run different faultline builds still splits one way) and spread evenly enough that
// no shard of a catalogue-sized set is starved.
#include "hashing/shard_bucket.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace faultline::hashing {
namespace {

TEST(ShardBucketTest, IsInRangeAndOneForASingleShard) {
  for (const int count : {1, 2, 3, 7, 64}) {
    for (int i = 0; i < 200; ++i) {
      const int bucket = ShardBucket("scenario-" + std::to_string(i), count);
      EXPECT_GE(bucket, 1);
      EXPECT_LE(bucket, count);
    }
  }
  EXPECT_EQ(ShardBucket("anything", 1), 1);
  static_assert(ShardBucket("demo/ok", 1) == 1, "usable at compile time");
}

TEST(ShardBucketTest, GivesThePublishedValues) {
  // Pinned: a change here moves scenarios between the shards of every user's CI matrix.
  EXPECT_EQ(ShardBucket("demo/rate-limit-retry-after", 3), 1);
  EXPECT_EQ(ShardBucket("rate-limit/openai-429-retry-after", 3), 2);
  EXPECT_EQ(ShardBucket("stall/anthropic-stall-every-attempt", 7), 1);
  EXPECT_EQ(ShardBucket("", 2), 2);
}

// Keys that differ in one character (as a catalogue's names do) still spread over every shard,
// the even counts too, which hash % count would not (see the header).
TEST(ShardBucketTest, SpreadsSimilarKeysOverEveryShard) {
  for (const int count : {2, 3, 4, 7, 8}) {
    std::vector<int> sizes(static_cast<std::size_t>(count), 0);
    constexpr int kKeys = 700;
    for (int i = 0; i < kKeys; ++i) {
      ++sizes[static_cast<std::size_t>(ShardBucket("rate-limit/case-" + std::to_string(i), count) -
                                       1)];
    }
    for (int shard = 0; shard < count; ++shard) {
      // Within 30 % of an even share: a binomial spread, far from one shard doing it all.
      EXPECT_GT(sizes[static_cast<std::size_t>(shard)], kKeys / count * 7 / 10)
          << "count " << count << " shard " << shard + 1;
      EXPECT_LT(sizes[static_cast<std::size_t>(shard)], kKeys / count * 13 / 10)
          << "count " << count << " shard " << shard + 1;
    }
  }
}

}  // namespace
}  // namespace faultline::hashing
