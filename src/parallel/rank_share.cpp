#include "parallel/rank_share.hpp"

#include <chrono>

#include "parallel/mpi_check.hpp"

namespace gridsim {

namespace {

// How often a waiting rank looks for the exit code: seldom enough to leave its CPU to the
// running ranks, often enough that the job ends with them.
constexpr auto kWaitPoll = std::chrono::milliseconds(20);

// The exit code from world rank 0 (a running rank) to every rank of `comm`. Non-blocking on
// both sides: a blocking broadcast would not match the waiting ranks' non-blocking one.
MPI_Request broadcast_code(int& exit_code, MPI_Comm comm) {
    MPI_Request request = MPI_REQUEST_NULL;
    GRIDSIM_MPI_CHECK(MPI_Ibcast(&exit_code, 1, MPI_INT, 0, comm, &request));
    return request;
}

}  // namespace

RankShare::RankShare(MPI_Comm world, int used) : comm_(world), launched_(comm_size(world)) {
    if (used >= launched_) return;
    const int rank = comm_rank(world);
    MPI_Comm part = MPI_COMM_NULL;
    GRIDSIM_MPI_CHECK(MPI_Comm_split(world, rank < used ? 0 : MPI_UNDEFINED, rank, &part));
    own_ = Communicator(part);
    comm_ = own_.get();
    release_ = duplicate_comm(world);
}

void RankShare::release(int exit_code) {
    if (release_.get() == MPI_COMM_NULL) return;
    MPI_Request request = broadcast_code(exit_code, release_.get());
    GRIDSIM_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    release_ = Communicator();
}

int RankShare::wait() const {
    int exit_code = 0;
    MPI_Request request = broadcast_code(exit_code, release_.get());
    wait_sleeping(request, kWaitPoll);
    return exit_code;
}

}  // namespace gridsim
