#include "reference_impl/budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace faultline::ref {
namespace {

TEST(RetryBudgetTest, StartsFullAndRunsDry) {
  RetryBudget budget({.capacity = 3, .retry_cost = 1, .success_refund = 0.1});
  EXPECT_DOUBLE_EQ(budget.tokens(), 3.0);
  EXPECT_TRUE(budget.TryWithdraw());
  EXPECT_TRUE(budget.TryWithdraw());
  EXPECT_TRUE(budget.TryWithdraw());
  EXPECT_FALSE(budget.TryWithdraw());
  EXPECT_FALSE(budget.TryWithdraw());
  EXPECT_DOUBLE_EQ(budget.tokens(), 0.0);
  EXPECT_EQ(budget.withdrawals(), 3u);
  EXPECT_EQ(budget.refusals(), 2u);
}

TEST(RetryBudgetTest, TenSuccessesBuyOneRetry) {
  RetryBudget budget({.capacity = 1, .retry_cost = 1, .success_refund = 0.1});
  ASSERT_TRUE(budget.TryWithdraw());
  for (int i = 0; i < 9; ++i) budget.RecordSuccess();
  EXPECT_FALSE(budget.TryWithdraw());  // 0.9 tokens: not yet
  budget.RecordSuccess();              // 1.0 (0.1 ten times, despite rounding)
  EXPECT_TRUE(budget.TryWithdraw());
  EXPECT_FALSE(budget.TryWithdraw());
}

TEST(RetryBudgetTest, RefillNeverExceedsCapacity) {
  RetryBudget budget({.capacity = 2, .retry_cost = 1, .success_refund = 0.5});
  for (int i = 0; i < 100; ++i) budget.RecordSuccess();
  EXPECT_DOUBLE_EQ(budget.tokens(), 2.0);
  EXPECT_TRUE(budget.TryWithdraw());
  EXPECT_TRUE(budget.TryWithdraw());
  EXPECT_FALSE(budget.TryWithdraw());
}

TEST(RetryBudgetTest, CostAboveOneToken) {
  RetryBudget budget({.capacity = 10, .retry_cost = 4, .success_refund = 1});
  EXPECT_TRUE(budget.TryWithdraw());   // 6 left
  EXPECT_TRUE(budget.TryWithdraw());   // 2 left
  EXPECT_FALSE(budget.TryWithdraw());  // needs 4
  budget.RecordSuccess();
  budget.RecordSuccess();  // 4
  EXPECT_TRUE(budget.TryWithdraw());
}

TEST(RetryBudgetTest, ConcurrentWithdrawalsNeverOverspend) {
  RetryBudget budget({.capacity = 100, .retry_cost = 1, .success_refund = 0});
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        if (budget.TryWithdraw()) granted.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(granted.load(), 100);
  EXPECT_EQ(budget.withdrawals(), 100u);
  EXPECT_EQ(budget.refusals(), 8u * 1000u - 100u);
  EXPECT_DOUBLE_EQ(budget.tokens(), 0.0);
}

TEST(RetryBudgetTest, ConcurrentRefundsAndWithdrawalsConserveTokens) {
  // Drain the bucket, then let 4 threads refund and spend at once. The bucket never holds more
  // than 4 tokens (far below capacity), so no refund is clipped: every token refunded is either
  // spent or still there. A lost update under contention would break the equality.
  RetryBudget budget({.capacity = 100, .retry_cost = 1, .success_refund = 1});
  while (budget.TryWithdraw()) {
  }
  const std::uint64_t drained = budget.withdrawals();
  ASSERT_EQ(drained, 100u);
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        budget.RecordSuccess();
        if (budget.TryWithdraw()) granted.fetch_add(1);
        if (budget.TryWithdraw()) granted.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_DOUBLE_EQ(granted.load() + budget.tokens(), 2000.0);
  EXPECT_EQ(budget.withdrawals(), drained + static_cast<std::uint64_t>(granted.load()));
  EXPECT_EQ(budget.withdrawals() + budget.refusals(), drained + 1 + 4u * 500u * 2u);
}

TEST(RetryBudgetTest, GrpcThrottlingChargesFailuresAndStopsAtHalf) {
  // gRFC A6 with max_tokens 10, token_ratio 0.1: failures take 1, retries cost nothing, and
  // retries stop once the count is at or below 5.
  RetryBudget budget({.capacity = 10,
                      .retry_cost = 0,
                      .success_refund = 0.1,
                      .failure_cost = 1,
                      .retry_threshold = 5});
  for (int i = 0; i < 4; ++i) budget.RecordFailure();
  EXPECT_DOUBLE_EQ(budget.tokens(), 6.0);
  EXPECT_TRUE(budget.TryWithdraw());
  EXPECT_DOUBLE_EQ(budget.tokens(), 6.0) << "a retry itself costs nothing";
  budget.RecordFailure();
  EXPECT_FALSE(budget.TryWithdraw()) << "5 tokens is at the threshold";
  for (int i = 0; i < 10; ++i) budget.RecordSuccess();
  EXPECT_TRUE(budget.TryWithdraw());
  for (int i = 0; i < 20; ++i) budget.RecordFailure();
  EXPECT_DOUBLE_EQ(budget.tokens(), 0.0) << "never below zero";
}

}  // namespace
}  // namespace faultline::ref
