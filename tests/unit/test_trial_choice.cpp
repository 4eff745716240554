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

namespace {
// The verdict took halos `depth` deep and exchanging pass `pass`.
void expect_taken(const ExchangeTrial& t, int depth, ExchangePass pass) {
    EXPECT_EQ(t.taken_depth().time_block, depth);
    EXPECT_EQ(t.pass, pass);
}
}  // namespace

// Times per depth: split then fused.
TEST(TrialChoice, TheExchangeVerdictTakesTheFastestDepthAndPass) {
    const std::vector<int> depths{4, 8};
    ExchangeTrial t = exchange_verdict(depths, {2.0, 1.5, 1.2, 1.4});
    EXPECT_TRUE(t.ran);
    expect_taken(t, 8, ExchangePass::split);
    ASSERT_EQ(t.depths.size(), 2u);
    EXPECT_EQ(t.depths[0].split_seconds_per_sweep, 2.0);
    EXPECT_EQ(t.depths[0].fused_seconds_per_sweep, 1.5);
    EXPECT_EQ(t.depths[1].time_block, 8);
    t = exchange_verdict(depths, {2.0, 1.1, 1.2, 1.4});
    expect_taken(t, 4, ExchangePass::fused);
}

TEST(TrialChoice, TiesGoToTheShallowerDepthThenTheSplit) {
    ExchangeTrial t = exchange_verdict({3, 6}, {1.0, 1.0, 1.0, 1.0});
    expect_taken(t, 3, ExchangePass::split);
    t = exchange_verdict({3, 6}, {2.0, 1.0, 1.0, 1.0});
    expect_taken(t, 3, ExchangePass::fused);
    t = exchange_verdict({5}, {1.0, 1.0});
    EXPECT_EQ(t.pass, ExchangePass::split);
    EXPECT_THROW((void)exchange_verdict({5}, {1.0}), std::logic_error);
}

// Times per depth: split, fused, faces first.
TEST(TrialChoice, FacesFirstIsTakenWhereItIsTheFastestAndLastAmongEquals) {
    ExchangeTrial t = exchange_verdict({2, 4}, {3.0, 2.0, 1.5, 1.8, 1.6, 1.7}, 3);
    EXPECT_TRUE(t.timed_faces_first);
    expect_taken(t, 2, ExchangePass::faces_first);
    ASSERT_EQ(t.depths.size(), 2u);
    EXPECT_EQ(t.depths[0].faces_first_seconds_per_sweep, 1.5);
    EXPECT_EQ(t.depths[1].split_seconds_per_sweep, 1.8);
    EXPECT_EQ(t.depths[1].faces_first_seconds_per_sweep, 1.7);
    t = exchange_verdict({2, 4}, {3.0, 2.0, 1.5, 1.8, 1.4, 1.4}, 3);
    expect_taken(t, 4, ExchangePass::fused);
    t = exchange_verdict({3}, {1.0, 1.0, 1.0}, 3);
    EXPECT_EQ(t.pass, ExchangePass::split);
    EXPECT_FALSE(exchange_verdict({3}, {1.0, 1.0}).timed_faces_first);
    EXPECT_THROW((void)exchange_verdict({3}, {1.0, 1.0}, 3), std::logic_error);
}

// Times per depth: split, fused, faces first, pipelined.
TEST(TrialChoice, PipelinedIsTakenWhereItIsTheFastestAndLastAmongEquals) {
    ExchangeTrial t = exchange_verdict({3, 6}, {3.0, 2.0, 1.5, 1.2, 1.8, 1.6, 1.7, 1.3}, 4);
    EXPECT_TRUE(t.timed_faces_first);
    EXPECT_TRUE(t.timed_pipelined);
    expect_taken(t, 3, ExchangePass::pipelined);
    ASSERT_EQ(t.depths.size(), 2u);
    EXPECT_EQ(t.depths[0].pipelined_seconds_per_sweep, 1.2);
    EXPECT_EQ(t.depths[1].faces_first_seconds_per_sweep, 1.7);
    EXPECT_EQ(t.depths[1].pipelined_seconds_per_sweep, 1.3);
    t = exchange_verdict({3}, {1.0, 0.9, 0.9, 0.9}, 4);
    EXPECT_EQ(t.pass, ExchangePass::fused);
    t = exchange_verdict({3, 6}, {3.0, 2.0, 1.5, 1.2, 1.8, 1.1, 1.7, 1.3}, 4);
    expect_taken(t, 6, ExchangePass::fused);
    EXPECT_FALSE(exchange_verdict({3}, {1.0, 1.0, 1.0}, 3).timed_pipelined);
    EXPECT_THROW((void)exchange_verdict({3}, {1.0, 1.0, 1.0}, 4), std::logic_error);
    EXPECT_THROW((void)exchange_verdict({3}, {1.0, 1.0, 1.0, 1.0, 1.0}, 5), std::logic_error);
}
