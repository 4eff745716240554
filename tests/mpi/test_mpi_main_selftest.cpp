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

namespace {

// Whether environment variable `name` is "1" and this is the last rank (a deliberate failure's
// place); `rank` is set to this rank.
bool armed_on_last_rank(const char* name, int& rank) {
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* armed = std::getenv(name);
    return armed != nullptr && std::string(armed) == "1" && rank == size - 1;
}

}  // namespace

TEST(MpiMain, FailureOnOneRankFailsEveryRank) {
    int rank = 0;
    const bool fail_here = armed_on_last_rank("GRIDSIM_SELFTEST_FAIL_LAST_RANK", rank);
    EXPECT_FALSE(fail_here) << "deliberate failure on rank " << rank;
}

TEST(MpiMain, AnExceptionOnOneRankEndsEveryRank) {
    int rank = 0;
    if (armed_on_last_rank("GRIDSIM_SELFTEST_THROW_LAST_RANK", rank))
        throw std::runtime_error("deliberate exception on rank " + std::to_string(rank));
    MPI_Barrier(MPI_COMM_WORLD);
}
