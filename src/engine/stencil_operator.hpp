// The stencil as an operator on any field shaped like the solution (the implicit heat's CG):
// out = stencil(in) at every updated point, overlapped the other way round from a sweep: in's
// halos are exchanged on the boundary lane while the interior lane updates the points that read
// none, then the boundary lane updates the shell. Both lanes are joined at the end, so what
// follows on either sees all of out.
#pragma once

#include "engine/halo_setup.hpp"
#include "engine/phase_timer.hpp"
#include "engine/sweep_phases.hpp"
#include "engine/sweep_plan.hpp"

namespace gridsim {

template <class T>
class StencilOperator {
public:
    StencilOperator(Backend<T>& be, PhaseTimer& timer, const HaloSetup<T>& halos,
                    const SweepGeometry& geo, const SweepPlan& plan)
        : be_(be),
          timer_(timer),
          halo_(*halos.halo),
          geo_(geo),
          phases_(timer, *halos.halo, plan.overlapped()) {}

    void apply(const StencilParams<T>& p, FieldView<T> in, FieldView<T> out) {
        apply_summing(p, in, out, StencilSum::none);
    }
    // apply() that also sums in * out over the updated points in the same pass (the CG's
    // p . A p without a pass of its own): returns the address of this rank's sum in backend
    // memory, folded, the boundary lane ordered after the fold. Valid until the next call.
    double* apply_and_dot(const StencilParams<T>& p, FieldView<T> in, FieldView<T> out) {
        apply_summing(p, in, out, StencilSum::product);
        double* sum = be_.sums().fold_residual();
        be_.sums().join_fold(Lane::boundary);
        return sum;
    }
    // Refreshes the halos of `f` from the neighbours' owned points (boundary lane).
    void exchange(FieldView<T> f) { halo_.exchange(f); }
    // Zero at every entry of `f` that is not an updated point: halos, the global Dirichlet
    // points (row padding is zero from allocation and no operation writes it).
    void zero_outside_updated(FieldView<T> f);
    [[nodiscard]] const Box& updated_points() const { return geo_.updated; }

private:
    void apply_summing(const StencilParams<T>& p, FieldView<T> in, FieldView<T> out,
                       StencilSum sum) {
        be_.join_lanes();  // in was written on either lane
        timer_.start_pass();
        auto op = [&](const Box& b, Lane lane) { be_.apply(p, in, out, b, lane, sum); };
        phases_.exchange_beside_interior(in, op, &geo_.regions);
        phases_.shell(op, geo_.regions);
        be_.join_lanes();
    }

    Backend<T>& be_;
    PhaseTimer& timer_;
    HaloExchange<T>& halo_;
    const SweepGeometry& geo_;
    SweepPhases<T> phases_;
};

// The full index range of the field (halos included, row padding not), cut into slabs around
// the updated box: on each axis below and above it, the other axes whole (corners twice).
template <class T>
void StencilOperator<T>::zero_outside_updated(FieldView<T> f) {
    const int h = f.ext.halo;
    const Box& updated = geo_.updated;
    Box full{{-h, -h, f.ext.dims == 3 ? -h : 0},
             {f.ext.n[0] + h, f.ext.n[1] + h, f.ext.dims == 3 ? f.ext.n[2] + h : 1}};
    for (int d = 0; d < f.ext.dims; ++d) {
        Box below = full;
        below.hi[d] = updated.lo[d];
        Box above = full;
        above.lo[d] = updated.hi[d];
        if (!below.empty()) be_.fill(f, below, T(0));
        if (!above.empty()) be_.fill(f, above, T(0));
    }
}

}  // namespace gridsim
