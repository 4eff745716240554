// The typed collectives of parallel/collectives.hpp, and how a residual is summed over the ranks
// (engine/residual_pipeline.hpp), against values each rank can compute on its own: rank r
// contributes r + 1 (or a value derived from it), so sums, extremes and orders are known in
// closed form at every rank count.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "engine/residual_pipeline.hpp"
#include "parallel/collectives.hpp"
#include "parallel/mpi_session.hpp"
#include "parallel/node_map.hpp"
#include "support/mpi_helpers.hpp"

using namespace gridsim;

TEST(Collectives, AllreduceSumsMinimaAndMaximaOfEveryType) {
    const int rank = test::world_rank();
    const int size = test::world_size();
    EXPECT_EQ(allreduce(MPI_COMM_WORLD, rank + 1, Reduce::sum), size * (size + 1) / 2);
    EXPECT_EQ(allreduce(MPI_COMM_WORLD, static_cast<long long>(rank) << 40, Reduce::max),
              static_cast<long long>(size - 1) << 40);
    EXPECT_EQ(allreduce(MPI_COMM_WORLD, 0.5 * (rank + 1), Reduce::min), 0.5);
    EXPECT_EQ(allreduce(MPI_COMM_WORLD, static_cast<unsigned long long>(rank + 7), Reduce::max),
              static_cast<unsigned long long>(size + 6));
    // Arrays, in place and not.
    std::array<double, 2> mine{1.0 * rank, -1.0 * rank};
    std::array<double, 2> sums{};
    allreduce(MPI_COMM_WORLD, mine.data(), sums.data(), 2, Reduce::sum);
    EXPECT_EQ(sums[0], size * (size - 1) / 2.0);
    EXPECT_EQ(sums[1], -size * (size - 1) / 2.0);
    allreduce(MPI_COMM_WORLD, mine.data(), mine.data(), 2, Reduce::max);
    EXPECT_EQ(mine[0], size - 1.0);
    EXPECT_EQ(mine[1], 0.0);
}

TEST(Collectives, ReduceToRootLeavesOtherRanksAlone) {
    const int rank = test::world_rank();
    const int size = test::world_size();
    double out = -1.0;
    const double in = rank + 1.0;
    reduce_to_root(MPI_COMM_WORLD, &in, &out, 1, Reduce::sum);
    EXPECT_EQ(out, rank == 0 ? size * (size + 1) / 2.0 : -1.0);
    EXPECT_EQ(reduce_to_root(MPI_COMM_WORLD, rank, Reduce::max), rank == 0 ? size - 1 : 0);
}

TEST(Collectives, BroadcastAndAllgatherKeepRankOrder) {
    const int rank = test::world_rank();
    const int size = test::world_size();
    std::array<long, 3> v{rank * 10L, rank * 10L + 1, rank * 10L + 2};
    broadcast(MPI_COMM_WORLD, v.data(), 3);
    EXPECT_EQ(v, (std::array<long, 3>{0, 1, 2}));
    const std::vector<double> all = allgather(MPI_COMM_WORLD, 2.0 * rank);
    ASSERT_EQ(all.size(), static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) EXPECT_EQ(all[r], 2.0 * r);
}

// Rank 0 holds 2^53, every other rank 1: from the first rank on, each 1 is lost to rounding (2^53
// + 1 rounds to even, 2^53), while the ones added together first would survive (2^53 + 2 at
// three ranks). Every rank gets the same bits.
TEST(Collectives, SumInRankOrderAddsFromTheFirstRank) {
    const int rank = test::world_rank();
    const int size = test::world_size();
    const double big = 9007199254740992.0;  // 2^53
    EXPECT_EQ(sum_in_rank_order(MPI_COMM_WORLD, rank == 0 ? big : 1.0), big);
    EXPECT_EQ(sum_in_rank_order(MPI_COMM_WORLD, rank + 1.0), size * (size + 1) / 2.0);
}

// A residual over the ranks (engine/residual_pipeline.hpp): in rank order with the transports that
// move halos on the device, however many ranks; through MPI's sum with the host's.
TEST(Collectives, ResidualsOfDeviceTransportsAreSummedInRankOrder) {
    const int rank = test::world_rank();
    const int size = test::world_size();
    const double big = 9007199254740992.0;  // 2^53, as above
    for (TransportKind t : {TransportKind::ipc, TransportKind::nccl})
        EXPECT_EQ(residual_over_ranks(MPI_COMM_WORLD, rank == 0 ? big : 1.0, t), big);
    for (TransportKind t : {TransportKind::staged, TransportKind::cuda_aware})
        EXPECT_EQ(residual_over_ranks(MPI_COMM_WORLD, rank + 1.0, t), size * (size + 1) / 2.0);
}

// Several residuals in one collective (a group of replayed sweeps, a summing pass's levels): each
// has the bits its own sum over the ranks gives, with every transport.
TEST(Collectives, ResidualsSummedTogetherHaveTheirOwnSumsBits) {
    const int rank = test::world_rank();
    const int size = test::world_size();
    const double big = 9007199254740992.0;  // 2^53, as above
    const std::array<double, 3> mine{rank == 0 ? big : 1.0, rank + 1.0, 0.1 * (rank + 1)};
    double tenths = 0.1;  // the third value's sum in rank order, added here on its own
    for (int r = 1; r < size; ++r) tenths += 0.1 * (r + 1);
    for (TransportKind t : {TransportKind::ipc, TransportKind::nccl, TransportKind::staged,
                            TransportKind::cuda_aware}) {
        std::array<double, 3> sums = mine;
        residuals_over_ranks(MPI_COMM_WORLD, sums.data(), 3, t);
        for (std::size_t i = 0; i < sums.size(); ++i)
            EXPECT_EQ(sums[i], residual_over_ranks(MPI_COMM_WORLD, mine[i], t)) << i;
        if (t == TransportKind::ipc || t == TransportKind::nccl) {
            EXPECT_EQ(sums[0], big);
            EXPECT_EQ(sums[2], tenths);
        }
        EXPECT_EQ(sums[1], size * (size + 1) / 2.0);
    }
}

TEST(Collectives, MaxlocNamesTheLowestRankOfTheLargestValue) {
    const int rank = test::world_rank();
    const int size = test::world_size();
    // Ranks 0 and 1 (where there are two) hold the largest value.
    const RankedValue worst = allreduce_maxloc(MPI_COMM_WORLD, rank <= 1 ? 9.0 : 1.0, rank);
    EXPECT_EQ(worst.value, 9.0);
    EXPECT_EQ(worst.rank, 0);
    const RankedValue last = allreduce_maxloc(MPI_COMM_WORLD, 1.0 * rank, rank);
    EXPECT_EQ(last.rank, size - 1);
}

TEST(Collectives, PendingMaxCompletesOneExchangeAtATime) {
    const int rank = test::world_rank();
    const int size = test::world_size();
    PendingMax<3> agreement(MPI_COMM_WORLD);
    agreement.start({rank, -rank, rank == 0 ? 5 : 0});
    const std::array<int, 3> first = agreement.wait();
    EXPECT_EQ(first, (std::array<int, 3>{size - 1, 0, 5}));
    agreement.start({1, 1, 1});  // left in flight: the destructor completes it on every rank
}

TEST(Collectives, NodeCommunicatorHoldsThisRank) {
    const Communicator node = node_comm(MPI_COMM_WORLD);
    const int on_node = node.size();
    EXPECT_GE(on_node, 1);
    EXPECT_LE(on_node, test::world_size());
    EXPECT_EQ(allreduce(node.get(), 1, Reduce::sum), on_node);
}
