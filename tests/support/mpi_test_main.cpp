// GoogleTest main for MPI tests. Every rank runs every test; after each test the failures of
// all ranks are gathered to rank 0, which prints them with their rank, and the final exit
// status is all-reduced: a failure on rank 3 alone fails the test binary on every rank. A fatal
// failure (an exception thrown in a test, an ASSERT) leaves its test on that rank alone, while
// the others may wait in a collective it will never reach: the rank prints it and ends every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "parallel/mpi_session.hpp"

namespace {

class GatherFailures : public testing::EmptyTestEventListener {
public:
    void OnTestStart(const testing::TestInfo& info) override {
        test_ = std::string(info.test_suite_name()) + "." + info.name();
    }

    void OnTestPartResult(const testing::TestPartResult& r) override {
        if (!r.failed()) return;
        failures_ += std::string(r.file_name() ? r.file_name() : "?") + ":" +
                     std::to_string(r.line_number()) + ": " + r.summary() + "\n";
        int size = 1;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (r.fatally_failed() && size > 1) end_every_rank();
    }

    void OnTestEnd(const testing::TestInfo& info) override {
        int rank = 0;
        int size = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        const int len = static_cast<int>(failures_.size());
        std::vector<int> lens(size), displs(size);
        MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
        int total = 0;
        for (int r = 0; r < size; ++r) {
            displs[r] = total;
            total += lens[r];
        }
        std::string all(static_cast<std::size_t>(total), '\0');
        MPI_Gatherv(failures_.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(),
                    MPI_CHAR, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            for (int r = 0; r < size; ++r) {
                if (lens[r] == 0) continue;
                std::printf("[  RANK %d ] %s.%s failed on rank %d:\n%s", r, info.test_suite_name(),
                            info.name(), r, all.substr(displs[r], lens[r]).c_str());
            }
            std::fflush(stdout);
        }
        failures_.clear();
    }

private:
    // (GoogleTest holds its own lock while it reports a result: the test's name is kept from its
    // start, not asked for here.)
    void end_every_rank() const {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        std::fprintf(stderr, "[  RANK %d ] %s failed fatally on rank %d, ending every rank:\n%s",
                     rank, test_.c_str(), rank, failures_.c_str());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    std::string test_;  // the running test, suite.name
    std::string failures_;
};

}  // namespace

int main(int argc, char** argv) {
    // gridsim's own session: the same MPI set-up as the program (error handler, MPI-IO choice).
    gridsim::MpiSession session(&argc, &argv);
    testing::InitGoogleTest(&argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    if (rank != 0)
        delete listeners.Release(listeners.default_result_printer());  // one log, rank 0's
    listeners.Append(new GatherFailures);

    const int mine = RUN_ALL_TESTS() != 0 ? 1 : 0;
    int any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && any != 0 && mine == 0) {
        std::printf(
            "[  FAILED  ] a test failed on another rank (see the [  RANK n ] lines above)\n");
    }
    return any;
}
