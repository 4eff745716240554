// The residuals a run has requested and not yet taken, oldest first: each sweep's (or a summing
// pass's levels') sum read back beside the next sweeps, summed over the ranks on the host when
// taken.
#pragma once

#include <deque>

#include "engine/phase_timer.hpp"
#include "kernels/backend.hpp"
#include "parallel/cart_topology.hpp"
#include "parallel/halo_exchange.hpp"

namespace gridsim {

template <class T>
class ResidualPipeline {
public:
    ResidualPipeline(Backend<T>& be, PhaseTimer& timer, const CartTopology& topo,
                     HaloExchange<T>& halo)
        : be_(be), timer_(timer), topo_(topo), halo_(halo) {}

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
    HaloExchange<T>& halo_;
    std::deque<Pending> pending_;
};

}  // namespace gridsim
