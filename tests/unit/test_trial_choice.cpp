// The start-up trials' verdicts as pure functions of measured costs: synthetic times in, the
// choice out (the trials themselves, collective and timed: tests/mpi/test_trial.cpp).
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "engine/trial.hpp"

using namespace gridsim;

TEST(TrialChoice, TheSmallestTimeWinsAndTheFirstAmongEquals) {
    EXPECT_EQ(first_fastest({3.0, 1.0, 2.0}), 1u);
    EXPECT_EQ(first_fastest({2.0, 1.0, 1.0}), 1u);
    EXPECT_EQ(first_fastest({5.0}), 0u);
    EXPECT_THROW((void)first_fastest({}), std::logic_error);
}

// Times per depth: split then fused.
TEST(TrialChoice, TheExchangeVerdictTakesTheFastestDepthAndPass) {
    const std::vector<int> depths{4, 8};
    ExchangeTrial t = exchange_verdict(depths, {2.0, 1.5, 1.2, 1.4});
    EXPECT_TRUE(t.ran);
    EXPECT_EQ(t.taken_depth().time_block, 8);
    EXPECT_FALSE(t.fused);
    ASSERT_EQ(t.depths.size(), 2u);
    EXPECT_EQ(t.depths[0].split_seconds_per_sweep, 2.0);
    EXPECT_EQ(t.depths[0].fused_seconds_per_sweep, 1.5);
    EXPECT_EQ(t.depths[1].time_block, 8);
    t = exchange_verdict(depths, {2.0, 1.1, 1.2, 1.4});
    EXPECT_EQ(t.taken_depth().time_block, 4);
    EXPECT_TRUE(t.fused);
}

TEST(TrialChoice, TiesGoToTheShallowerDepthThenTheSplit) {
    ExchangeTrial t = exchange_verdict({3, 6}, {1.0, 1.0, 1.0, 1.0});
    EXPECT_EQ(t.taken_depth().time_block, 3);
    EXPECT_FALSE(t.fused);
    t = exchange_verdict({3, 6}, {2.0, 1.0, 1.0, 1.0});
    EXPECT_EQ(t.taken_depth().time_block, 3);
    EXPECT_TRUE(t.fused);
    t = exchange_verdict({5}, {1.0, 1.0});
    EXPECT_FALSE(t.fused);
    EXPECT_THROW((void)exchange_verdict({5}, {1.0}), std::logic_error);
}
