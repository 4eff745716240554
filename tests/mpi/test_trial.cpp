// parallel.time_block = "auto"'s start-up trial (engine/trial.hpp): every rank times every
// candidate, the ranks take the candidate whose slowest rank is fastest, all alike. The times are
// made up per rank here so that each rank's own fastest differs from the agreed one.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "engine/trial.hpp"
#include "support/mpi_helpers.hpp"

using namespace gridsim;

namespace {

const std::vector<int> kCandidates = {2, 3, 4, 5};

// Rank r's seconds for candidate index i: index r % 2 is its fastest (1), index 2 is 2 on every
// rank, the others 3, the last 9. With two ranks or more the slowest ranks make index 2 the
// fastest; on one rank index 0 is.
double made_up(int rank, std::size_t i) {
    if (i == kCandidates.size() - 1) return 9.0;
    if (i == 2) return 2.0;
    return i == static_cast<std::size_t>(rank % 2) ? 1.0 : 3.0;
}

std::size_t index_of(int candidate) {
    return static_cast<std::size_t>(std::find(kCandidates.begin(), kCandidates.end(), candidate) -
                                    kCandidates.begin());
}

}  // namespace

TEST(StartupTrial, RanksAgreeOnTheCandidateWhoseSlowestRankIsFastest) {
    const int rank = test::world_rank();
    const int size = test::world_size();
    std::vector<int> asked;
    const TrialChoice c = agree_on_fastest(MPI_COMM_WORLD, kCandidates, [&](int k) {
        asked.push_back(k);
        return made_up(rank, index_of(k));
    });
    EXPECT_EQ(asked, kCandidates);  // each once, in order
    ASSERT_EQ(c.slowest.size(), kCandidates.size());
    for (std::size_t i = 0; i < kCandidates.size(); ++i) {
        double worst = 0.0;
        for (int r = 0; r < size; ++r) worst = std::max(worst, made_up(r, i));
        EXPECT_EQ(c.slowest[i], worst) << "candidate " << kCandidates[i];
    }
    EXPECT_EQ(c.chosen, size == 1 ? 2 : 4);
    int lowest = c.chosen;
    int highest = c.chosen;
    MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(lowest, highest);
}

TEST(StartupTrial, EqualTimesTakeTheFirstCandidate) {
    const TrialChoice c = agree_on_fastest(MPI_COMM_WORLD, {3, 2, 4}, [](int) { return 0.5; });
    EXPECT_EQ(c.chosen, 3);
}

TEST(StartupTrial, NoCandidateIsAProgrammingError) {
    EXPECT_THROW(agree_on_fastest(MPI_COMM_WORLD, {}, [](int) { return 1.0; }), std::logic_error);
}

// The repetitions of a trial's round follow the slowest rank's first run (rank r took r + 1
// units, binary fractions so that the quotients are exact: the last rank's), so every rank
// repeats alike; at least 1, at most `most`.
TEST(StartupTrial, RepetitionsFollowTheSlowestRank) {
    const double unit = 1.0 / 1024;
    const double first = unit * (test::world_rank() + 1);
    const int slowest = test::world_size();  // units
    EXPECT_EQ(repetitions_for(MPI_COMM_WORLD, first, 12 * unit, 64), 12 / slowest);
    EXPECT_EQ(repetitions_for(MPI_COMM_WORLD, first, 1.0, 64), 64);
    EXPECT_EQ(repetitions_for(MPI_COMM_WORLD, first, unit / 2, 64), 1);
}

// The exchange trial's rounds (fastest_rounds): round r takes the choices in turn from choice
// r (mod the count), each time counting the slowest rank's seconds, and each choice keeps its
// fastest round. Rank k takes (k + 1) * base(c, round) units, so the slowest rank is the last
// one and every product is exact.
TEST(StartupTrial, RoundsTakeTurnsAndKeepEachChoicesFastestSlowestRank) {
    const int rank = test::world_rank();
    const int size = test::world_size();
    const double unit = 1.0 / 1024;
    // base[round][choice]: choice 1 is fastest in round 1, choice 0 in round 2, choice 2 never.
    const double base[3][3] = {{5, 6, 7}, {4, 2, 8}, {3, 9, 6}};
    std::vector<std::size_t> order;
    int call = 0;
    const std::vector<double> best = fastest_rounds(MPI_COMM_WORLD, 3, 3, [&](std::size_t c) {
        order.push_back(c);
        const int round = call++ / 3;
        return (rank + 1) * base[round][c] * unit;
    });
    EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 1, 2, 0, 2, 0, 1}));
    ASSERT_EQ(best.size(), 3U);
    EXPECT_EQ(best[0], size * 3 * unit);
    EXPECT_EQ(best[1], size * 2 * unit);
    EXPECT_EQ(best[2], size * 6 * unit);
}
