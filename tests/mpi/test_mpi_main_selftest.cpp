// Proves the MPI test main: with GRIDSIM_SELFTEST_FAIL_LAST_RANK=1 the first test fails on the
// last rank only, and CTest (mpi_main_failure_on_last_rank_np4) expects the binary to fail and
// name that rank; with GRIDSIM_SELFTEST_THROW_LAST_RANK=1 the second throws on the last rank
// while the others wait in a barrier, and CTest (mpi_main_exception_on_last_rank_np4) expects
// every rank to end, the binary to fail and the rank to be named, within its time limit.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

TEST(MpiMain, FailureOnOneRankFailsEveryRank) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* armed = std::getenv("GRIDSIM_SELFTEST_FAIL_LAST_RANK");
    const bool fail_here = armed != nullptr && std::string(armed) == "1" && rank == size - 1;
    EXPECT_FALSE(fail_here) << "deliberate failure on rank " << rank;
}

TEST(MpiMain, AnExceptionOnOneRankEndsEveryRank) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* armed = std::getenv("GRIDSIM_SELFTEST_THROW_LAST_RANK");
    if (armed != nullptr && std::string(armed) == "1" && rank == size - 1)
        throw std::runtime_error("deliberate exception on rank " + std::to_string(rank));
    MPI_Barrier(MPI_COMM_WORLD);
}
