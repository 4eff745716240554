// PhaseTimer's sampling (parallel.phase_every): which passes time their lane phases, how the
// totals are scaled to every pass, and that host phases are always timed. A stand-in lane clock
// gives every interval a known length, so the expected totals follow from counting.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "solver/phase_timer.hpp"

using namespace gridsim;

namespace {

// Each finished interval of slot s lasts `seconds_per_interval[s]`; counts every begin().
class CountingTimer final : public IntervalTimer {
public:
    explicit CountingTimer(int* begun) : begun_(begun) {}
    void begin(int /*slot*/, Lane /*lane*/) override { ++*begun_; }
    void end(int slot, Lane /*lane*/) override { done_.push_back(slot); }
    void collect(std::vector<double>& seconds, bool /*block*/) override {
        for (int slot : done_) seconds[slot] += 0.5;
        done_.clear();
    }

private:
    int* begun_;
    std::vector<int> done_;
};

// `passes` passes, each timing one interior interval on a lane and one reduction on the host.
PhaseTimes run(int every, int passes, int* begun, std::vector<bool>* sampled = nullptr) {
    PhaseTimer timer(std::make_unique<CountingTimer>(begun), every);
    for (int p = 0; p < passes; ++p) {
        timer.start_pass();
        if (sampled != nullptr) sampled->push_back(timer.sampled());
        { auto t = timer.on_lane(Phase::interior, Lane::interior); }
        { auto t = timer.on_host(Phase::reduction); }
    }
    EXPECT_EQ(timer.passes(), passes);
    return timer.totals();
}

}  // namespace

TEST(PhaseTimer, EveryPassIsTimedByDefault) {
    int begun = 0;
    const PhaseTimes t = run(1, 7, &begun);
    EXPECT_EQ(begun, 7);
    EXPECT_DOUBLE_EQ(t[static_cast<int>(Phase::interior)], 7 * 0.5);
}

TEST(PhaseTimer, SampledPassesAreEveryNthFromTheSecondAndScaledToAll) {
    int begun = 0;
    std::vector<bool> sampled;
    const PhaseTimes t = run(4, 12, &begun, &sampled);
    // Passes 2, 6 and 10 (1-based): the first carries one-time costs.
    const std::vector<bool> expect = {false, true,  false, false, false, true,
                                      false, false, false, true,  false, false};
    EXPECT_EQ(sampled, expect);
    EXPECT_EQ(begun, 3);
    // Three intervals of 0.5 s stand for twelve passes.
    EXPECT_DOUBLE_EQ(t[static_cast<int>(Phase::interior)], 3 * 0.5 * 12.0 / 3.0);
    EXPECT_GE(t[static_cast<int>(Phase::reduction)], 0.0);  // host phases: the wall clock
}

TEST(PhaseTimer, AOnePassRunTimesNoLanePhaseWhenSampling) {
    int begun = 0;
    const PhaseTimes t = run(64, 1, &begun);
    EXPECT_EQ(begun, 0);
    EXPECT_DOUBLE_EQ(t[static_cast<int>(Phase::interior)], 0.0);
}
