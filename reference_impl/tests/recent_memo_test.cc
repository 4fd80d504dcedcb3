#include "reference_impl/recent_memo.h"

#include <gtest/gtest.h>

#include <string>

namespace faultline::ref {
namespace {

TEST(RecentMemoTest, ComputesEachOfTheLastTextsOnce) {
  RecentMemo<std::size_t, 2> memo;
  int computed = 0;
  const auto size = [&](std::string_view text) {
    ++computed;
    return text.size();
  };
  EXPECT_EQ(memo.Get("ab", size), 2u);
  EXPECT_EQ(memo.Get("abc", size), 3u);
  EXPECT_EQ(memo.Get("ab", size), 2u);
  EXPECT_EQ(computed, 2);
  EXPECT_EQ(memo.Get("abcd", size), 4u);  // replaces the oldest, "ab"
  EXPECT_EQ(memo.Get("abc", size), 3u);
  EXPECT_EQ(computed, 3);
  EXPECT_EQ(memo.Get("ab", size), 2u);
  EXPECT_EQ(computed, 4);
  EXPECT_EQ(memo.Get(std::string("a\0b", 3), size), 3u);  // the whole text is the key
  EXPECT_EQ(memo.Get(std::string("a\0c", 3), size), 3u);
  EXPECT_EQ(computed, 6);
}

}  // namespace
}  // namespace faultline::ref
