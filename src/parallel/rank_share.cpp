#include "parallel/rank_share.hpp"

#include <chrono>
#include <thread>

#include "parallel/mpi_check.hpp"

namespace gridsim {

namespace {

// How often a waiting rank looks for the exit code: seldom enough to leave its CPU to the
// running ranks, often enough that the job ends with them.
constexpr auto kWaitPoll = std::chrono::milliseconds(20);

}  // namespace

RankShare::RankShare(MPI_Comm world, int used) : comm_(world), used_(used) {
    launched_ = comm_size(world);
    if (used_ >= launched_) return;
    const int rank = comm_rank(world);
    runs_here_ = rank < used_;
    MPI_Comm part = MPI_COMM_NULL;
    GRIDSIM_MPI_CHECK(MPI_Comm_split(world, runs_here_ ? 0 : MPI_UNDEFINED, rank, &part));
    own_ = Communicator(part);
    comm_ = MPI_COMM_NULL;
    release_ = duplicate_comm(world);
}

void RankShare::release(int exit_code) {
    if (release_.get() == MPI_COMM_NULL) return;
    MPI_Request request = MPI_REQUEST_NULL;
    GRIDSIM_MPI_CHECK(MPI_Ibcast(&exit_code, 1, MPI_INT, 0, release_.get(), &request));
    GRIDSIM_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    release_ = Communicator();
}

int RankShare::wait() const {
    int exit_code = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    GRIDSIM_MPI_CHECK(MPI_Ibcast(&exit_code, 1, MPI_INT, 0, release_.get(), &request));
    int done = 0;
    while (true) {
        GRIDSIM_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
        if (done != 0) return exit_code;
        std::this_thread::sleep_for(kWaitPoll);
    }
}

}  // namespace gridsim
