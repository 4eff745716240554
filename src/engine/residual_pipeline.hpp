// The residuals a run has requested and not yet taken, oldest first: each sweep's (or a summing
// pass's levels') sum read back beside the next sweeps, summed over the ranks on the host when
// taken.
#pragma once

#include <deque>
#include <vector>

#include "config/config.hpp"
#include "engine/phase_timer.hpp"
#include "kernels/backend.hpp"
#include "parallel/cart_topology.hpp"

namespace gridsim {

// Residuals' local sums (`count` of them, in place) summed over the ranks of `comm`, as a run sums
// every one (a sweep's, and each level's of a summing pass, so that they have the same bits
// whatever the time block): with a transport that sums on the device (its row's `sums`), every
// rank's sum added in rank order on the host, all `count` in one collective, whatever the rank
// count (NCCL's own all-reduce adds in an order of its own beyond two ranks, ring or tree by
// size); with the host's (staged, cuda-aware), one MPI_Allreduce of one double each (one call for
// several might let MPI sum in another order).
void residuals_over_ranks(MPI_Comm comm, double* sums, int count, TransportKind transport);
inline double residual_over_ranks(MPI_Comm comm, double local, TransportKind transport) {
    residuals_over_ranks(comm, &local, 1, transport);
    return local;
}

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
    // A replayed group of `count` residual sweeps, read by `first_read` and the ids after it
    // (Sweeper::residual_group).
    void request_group(int first_read, int count) { pending_.push_back({first_read, count}); }
    // A summing pass's `count` levels, read by `read` (LevelSums::fold_and_read_levels).
    void request_levels(int read, int count) { pending_.push_back({read, count, true}); }
    // Waits for the oldest requested residual: sqrt of the global sum over updated points of
    // (u^n - u^{n-1})^2 for the sweep n that requested it. The first of a request's residuals
    // waits for all of them (one replay or pass made them) and sums them over the ranks in one
    // collective.
    double take();
    // Forgets the requested residuals not yet taken (after a convergence inside a pass).
    void drop() {
        pending_.clear();
        taken_.clear();
    }

private:
    // One request's reads in flight: `count` local sums, read by ids `read` on (`levels`: the
    // levels of one summing pass's read).
    struct Pending {
        int read;
        int count = 1;
        bool levels = false;
    };
    // The oldest request's residuals, read and summed over the ranks, into taken_.
    void take_request();

    Backend<T>& be_;
    PhaseTimer& timer_;
    const CartTopology& topo_;
    TransportKind transport_;
    std::deque<Pending> pending_;
    std::deque<double> taken_;  // residuals of a request already summed, not yet taken
    std::vector<double> sums_;  // take_request's local sums (kept: no allocation per request)
};

}  // namespace gridsim
