// A run on the first ranks of those launched: the others wait idle, without polling hard, until
// the run tells them its exit code (parallel.ranks_used, docs/running.md, "Ranks used").
#pragma once

#include <mpi.h>

#include "parallel/mpi_session.hpp"

namespace gridsim {

class RankShare {
public:
    // Collective over `world`: ranks 0 to used - 1 run, the rest wait. With every rank used the
    // run's communicator is `world` itself.
    RankShare(MPI_Comm world, int used);
    RankShare(const RankShare&) = delete;
    RankShare& operator=(const RankShare&) = delete;

    // The running ranks' communicator (MPI_COMM_NULL on a waiting rank).
    [[nodiscard]] MPI_Comm comm() const { return comm_; }
    [[nodiscard]] bool runs_here() const { return comm_ != MPI_COMM_NULL; }
    [[nodiscard]] int launched() const { return launched_; }

    // A running rank: tells the waiting ranks the run's exit code (every running rank calls it
    // once, as the run ends, with the same code).
    void release(int exit_code);
    // A waiting rank: sleeps until release(); returns the run's exit code.
    [[nodiscard]] int wait() const;

private:
    MPI_Comm comm_ = MPI_COMM_NULL;  // `world`, or own_'s
    Communicator own_;               // the running ranks, where some wait
    Communicator release_;           // over every launched rank, for the exit code alone
    int launched_ = 1;
};

}  // namespace gridsim
