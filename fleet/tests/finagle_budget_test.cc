// Finagle's RetryBudget against the properties of its source (RetryBudget.scala, util's
// TokenBucket.newLeakyBucket and WindowedAdder), in virtual time.
#include "fleet/finagle_budget.h"

#include <gtest/gtest.h>

namespace faultline::fleet {
namespace {

constexpr Micros kSecond = 1'000'000;

int Withdrawals(FinagleRetryBudget& budget, Micros now, int most = 100'000) {
  int n = 0;
  while (n < most && budget.TryWithdraw(now)) ++n;
  return n;
}

TEST(FinagleBudgetTest, AFreshBudgetHoldsTheReserve) {
  FinagleRetryBudget budget(FinagleBudgetConfig{});  // ttl 10 s, 10/s, 20%
  EXPECT_EQ(budget.Balance(0), 10 * 10);
  EXPECT_EQ(Withdrawals(budget, 0), 100);
  EXPECT_FALSE(budget.TryWithdraw(0));
}

TEST(FinagleBudgetTest, EachRequestEarnsPercentCanRetry) {
  FinagleRetryBudget budget(FinagleBudgetConfig{kSecond * 10, 0, 0.2});  // no reserve
  for (int i = 0; i < 50; ++i) budget.Deposit(0);
  EXPECT_EQ(budget.Balance(0), 10);
  EXPECT_EQ(Withdrawals(budget, 0), 10);  // 20% of 50 requests
}

TEST(FinagleBudgetTest, DepositsExpireAfterTheTtl) {
  FinagleRetryBudget budget(FinagleBudgetConfig{kSecond * 10, 0, 0.2});
  for (int i = 0; i < 100; ++i) budget.Deposit(0);
  EXPECT_EQ(budget.Balance(9 * kSecond), 20);  // still in the window
  EXPECT_EQ(budget.Balance(11 * kSecond), 0);  // gone with its slice
}

TEST(FinagleBudgetTest, WithdrawalsExpireTooSoTheReserveComesBack) {
  FinagleRetryBudget budget(FinagleBudgetConfig{});
  EXPECT_EQ(Withdrawals(budget, 0), 100);
  EXPECT_EQ(Withdrawals(budget, 5 * kSecond), 0);
  EXPECT_EQ(Withdrawals(budget, 11 * kSecond), 100);  // every ttl has its reserve
}

TEST(FinagleBudgetTest, WithoutPercentOnlyTheReserveCountsOnePerRetry) {
  FinagleRetryBudget budget(FinagleBudgetConfig{kSecond * 5, 2, 0});
  for (int i = 0; i < 1000; ++i) budget.Deposit(0);  // requests earn nothing
  EXPECT_EQ(Withdrawals(budget, 0), 2 * 5);
}

}  // namespace
}  // namespace faultline::fleet
