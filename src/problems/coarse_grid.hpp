// A multigrid level coarser than the problem's grid (problems/mg_levels.hpp gives its blocks):
// its own fields' shape, the stencil rediscretised on it, and its own halo exchange over the
// run's process grid and face routes. Its operator applications exchange first and then update
// every point on the boundary lane: coarse blocks are small, so nothing overlaps. A gathered
// level is rank 0's alone: its halos are its own periodic faces, wrapped in place.
#pragma once

#include <memory>

#include "parallel/halo_exchange.hpp"
#include "problems/grid_operator.hpp"
#include "problems/mg_levels.hpp"

namespace gridsim {

template <class T>
class CoarseGrid final : public GridOperator<T> {
public:
    // Collective (the halo exchange connects the neighbours), but for a gathered level.
    CoarseGrid(Simulation<T>& sim, const MgLevel& level, const StencilParams<T>& op);

    [[nodiscard]] Field<T> make_field() override { return be_.allocate_field(ext_); }
    void apply(FieldView<T> in, FieldView<T> out) override;
    void exchange(FieldView<T> f) override { halo_->exchange(f); }
    [[nodiscard]] const Box& updated_points() const override { return updated_; }
    [[nodiscard]] Backend<T>& backend() override { return be_; }
    [[nodiscard]] PhaseTimer& timer() override { return timer_; }
    [[nodiscard]] const StencilParams<T>& params() const override { return op_; }

private:
    Backend<T>& be_;
    PhaseTimer& timer_;
    CartTopology topo_;
    FieldExtents ext_;
    Box updated_;
    StencilParams<T> op_;
    std::unique_ptr<HaloExchange<T>> halo_;
};

}  // namespace gridsim
