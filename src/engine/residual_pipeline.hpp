// The residuals a run has requested and not yet taken, oldest first: each sweep's (or a summing
// pass's levels') sum read back beside the next sweeps, summed over the ranks on the host when
// taken.
#pragma once

#include <deque>

#include "config/config.hpp"
#include "engine/phase_timer.hpp"
#include "kernels/backend.hpp"
#include "parallel/cart_topology.hpp"

namespace gridsim {

// A residual's local sum over the ranks of `comm`, as a run sums every one (a sweep's, and each
// level's of a summing pass, so that they have the same bits whatever the time block): with a
// transport that moves halos on the device (ipc, NCCL), every rank's sum added in rank order on
// the host, whatever the rank count (NCCL's own all-reduce adds in an order of its own beyond two
// ranks, ring or tree by size); with the host's (staged, cuda-aware), one MPI_Allreduce of one
// double (one call for all of a pass's levels might let MPI sum in another order).
double residual_over_ranks(MPI_Comm comm, double local, TransportKind transport);

template <class T>
class ResidualPipeline {
public:
    // `transport`: the run's, resolved.
    ResidualPipeline(Backend<T>& be, PhaseTimer& timer, const CartTopology& topo,
                     TransportKind transport)
        : be_(be), timer_(timer), topo_(topo), transport_(transport) {}

    // After a sweep that summed its change: folds that sum on the device and starts copying it to
    // the host. Never waits. `recorded_read` (>= 0): a replayed sweep folded it and started
    // reading it itself.
    void request(int recorded_read);
    // A summing pass's `count` levels, read by `read` (LevelSums::fold_and_read_levels).
    void request_levels(int read, int count) {
        for (int l = 0; l < count; ++l) pending_.push_back({read, l});
    }
    // Waits for the oldest requested residual: sqrt of the global sum over updated points of
    // (u^n - u^{n-1})^2 for the sweep n that requested it.
    double take();
    // Forgets the requested residuals not yet taken (after a convergence inside a pass).
    void drop() { pending_.clear(); }

private:
    // A read in flight (its id) of a local sum; `level` >= 0: that level's sum of a summing
    // pass's read.
    struct Pending {
        int read;
        int level = -1;
    };
    Backend<T>& be_;
    PhaseTimer& timer_;
    const CartTopology& topo_;
    TransportKind transport_;
    std::deque<Pending> pending_;
};

}  // namespace gridsim
