// Proves the MPI test main: with GRIDSIM_SELFTEST_FAIL_LAST_RANK=1 this test fails on the last
// rank only, and CTest (mpi_main_selftest_np4) expects the binary to fail and name that rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>

TEST(MpiMain, FailureOnOneRankFailsEveryRank) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* armed = std::getenv("GRIDSIM_SELFTEST_FAIL_LAST_RANK");
    const bool fail_here = armed != nullptr && std::string(armed) == "1" && rank == size - 1;
    EXPECT_FALSE(fail_here) << "deliberate failure on rank " << rank;
}
