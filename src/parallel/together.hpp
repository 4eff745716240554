// Failing and acting together: a failure every rank has agreed on ends every rank the same way
// (rank 0 says it once, each rank throws RunFailure, main exits 1 without MPI_Abort), and work
// only rank 0 does (a file it alone writes) fails on every rank if it fails there.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include <mpi.h>

namespace gridsim {

// A runtime failure every rank has detected together and that the ranks concerned have already
// reported (a blow-up, a checkpoint that would hold non-finite values): main exits 1 on every
// rank without MPI_Abort and without printing it again.
class RunFailure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A failure the ranks have agreed on (`text` is the same on every rank): rank 0 prints it as the
// run's one error line and every rank throws RunFailure (exit 1, no MPI_Abort).
[[noreturn]] void fail_together(MPI_Comm comm, const std::string& text);

// Collective: rank 0 runs `work` (a file only rank 0 writes); a std::exception it throws becomes
// fail_together on every rank.
void on_rank0_together(MPI_Comm comm, const std::function<void()>& work);

}  // namespace gridsim
