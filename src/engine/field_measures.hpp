// Global measures of a simulation's current field, each a host reduction over the ranks: the
// residual as a pass of its own (tests compare the fused value against it), the 2-norm over the
// owned points, and min / max / sum / non-finite count. Each waits for both lanes first, so the
// reduction phase times the reduction alone.
#pragma once

#include "engine/field_pair.hpp"
#include "engine/phase_timer.hpp"
#include "engine/sweep_plan.hpp"
#include "kernels/backend.hpp"
#include "parallel/cart_topology.hpp"

namespace gridsim {

template <class T>
class FieldMeasures {
public:
    FieldMeasures(Backend<T>& be, PhaseTimer& timer, FieldPair<T>& fields, const SweepGeometry& geo,
                  const CartTopology& topo)
        : be_(be), timer_(timer), fields_(fields), geo_(geo), topo_(topo) {}

    double residual_separate_pass();
    double norm();
    FieldStats stats();
    // Blocks the host until both lanes' work so far is done.
    void wait_for_lanes();

private:
    PhaseTimer::Scope time_host_reduction();

    Backend<T>& be_;
    PhaseTimer& timer_;
    FieldPair<T>& fields_;
    const SweepGeometry& geo_;
    const CartTopology& topo_;
};

}  // namespace gridsim
