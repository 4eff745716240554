// PhaseTimer's sampling (parallel.phase_every): which passes time their lane phases, how the
// totals are scaled to every pass, and that host phases are timed on every pass and not scaled.
// Stand-in clocks give every interval half a second and count the intervals begun, so the
// expected totals follow from counting.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine/phase_timer.hpp"

using namespace gridsim;

namespace {

// Each finished interval lasts 0.5 s; counts every begin().
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

struct Counts {
    int lane = 0;  // lane intervals begun
    int host = 0;  // host intervals begun
};

// `passes` passes, each timing one interior interval on a lane and one reduction on the host.
PhaseTimes run(int every, int passes, Counts* begun, std::vector<bool>* sampled = nullptr) {
    PhaseTimer timer(std::make_unique<CountingTimer>(&begun->lane), every,
                     std::make_unique<CountingTimer>(&begun->host));
    for (int p = 0; p < passes; ++p) {
        timer.start_pass();
        if (sampled != nullptr) sampled->push_back(timer.sampled());
        { auto t = timer.on_lane(Phase::interior, Lane::interior); }
        { auto t = timer.on_host(Phase::reduction); }
    }
    EXPECT_EQ(timer.passes(), passes);
    return timer.totals();
}

double seconds(const PhaseTimes& t, Phase p) { return t[static_cast<int>(p)]; }

}  // namespace

TEST(PhaseTimer, EveryPassIsTimedByDefault) {
    Counts begun;
    const PhaseTimes t = run(1, 7, &begun);
    EXPECT_EQ(begun.lane, 7);
    EXPECT_DOUBLE_EQ(seconds(t, Phase::interior), 7 * 0.5);
    EXPECT_DOUBLE_EQ(seconds(t, Phase::reduction), 7 * 0.5);
}

TEST(PhaseTimer, SampledPassesAreEveryNthFromTheSecondAndScaledToAll) {
    Counts begun;
    std::vector<bool> sampled;
    const PhaseTimes t = run(4, 12, &begun, &sampled);
    // Passes 2, 6 and 10 (1-based): the first carries one-time costs.
    const std::vector<bool> expect = {false, true,  false, false, false, true,
                                      false, false, false, true,  false, false};
    EXPECT_EQ(sampled, expect);
    EXPECT_EQ(begun.lane, 3);
    // Three intervals of 0.5 s stand for twelve passes.
    EXPECT_DOUBLE_EQ(seconds(t, Phase::interior), 3 * 0.5 * 12.0 / 3.0);
    // Host phases: every pass timed, none scaled.
    EXPECT_EQ(begun.host, 12);
    EXPECT_DOUBLE_EQ(seconds(t, Phase::reduction), 12 * 0.5);
}

// samples_within(n), asked before each pass: whether one of the next n passes is sampled. With
// every = 4 the sampled passes are 2, 6, 10 (1-based, as above), so before pass p (p - 1 passes
// started) the next two are sampled where p or p + 1 is one of them.
TEST(PhaseTimer, SamplesWithinLooksAheadAtTheSchedule) {
    int begun = 0;
    PhaseTimer timer(std::make_unique<CountingTimer>(&begun), 4);
    const std::vector<bool> expect = {true,  true,  false, false, true,  true,
                                      false, false, true,  true,  false, false};
    std::vector<bool> got;
    for (int p = 1; p <= 12; ++p) {
        got.push_back(timer.samples_within(2));
        timer.start_pass();
    }
    EXPECT_EQ(got, expect);
}

TEST(PhaseTimer, AOnePassRunTimesNoLanePhaseWhenSampling) {
    Counts begun;
    const PhaseTimes t = run(64, 1, &begun);
    EXPECT_EQ(begun.lane, 0);
    EXPECT_DOUBLE_EQ(seconds(t, Phase::interior), 0.0);
    EXPECT_EQ(begun.host, 1);
}
