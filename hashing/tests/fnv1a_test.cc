// FNV-1a 64 gives the published values (the fingerprints in result files and the README depend
// on them never changing) and hashes in parts as in one piece.
#include "hashing/fnv1a.h"

#include <gtest/gtest.h>

namespace faultline::hashing {
namespace {

TEST(Fnv1aTest, GivesThePublishedValues) {
  // The reference vectors of the FNV authors' test suite (isthe.com/chongo/tech/comp/fnv).
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ULL);
  static_assert(Fnv1a64("a") == 0xaf63dc4c8601ec8cULL, "usable at compile time");
}

TEST(Fnv1aTest, HashesInPartsAsInOnePiece) {
  EXPECT_EQ(Fnv1a64("bar", Fnv1a64("foo")), Fnv1a64("foobar"));
  EXPECT_NE(Fnv1a64("ab|c"), Fnv1a64("a|bc"));
  // Bytes above 0x7f count as unsigned, whatever char's signedness.
  EXPECT_EQ(Fnv1a64("\xff"), (kFnv1aOffsetBasis ^ 0xffULL) * kFnv1aPrime);
}

}  // namespace
}  // namespace faultline::hashing
