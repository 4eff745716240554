// One grid's operator, as the preconditioners see it: the problem's own grid (the simulation's
// fields, its overlapped stencil operator) or a multigrid level's (src/problems/coarse_grid.hpp).
// A polynomial in the operator (problems/chebyshev.hpp) runs on either.
#pragma once

#include "engine/simulation.hpp"

namespace gridsim {

template <class T>
class GridOperator {
public:
    GridOperator() = default;
    GridOperator(const GridOperator&) = delete;
    GridOperator& operator=(const GridOperator&) = delete;
    virtual ~GridOperator() = default;

    // A zero field of this grid's shape.
    [[nodiscard]] virtual Field<T> make_field() = 0;
    // out = A in at the updated points (in's halos exchanged first, on the boundary lane).
    virtual void apply(FieldView<T> in, FieldView<T> out) = 0;
    // Refreshes the halos of `f` from the neighbours' owned points.
    virtual void exchange(FieldView<T> f) = 0;
    [[nodiscard]] virtual const Box& updated_points() const = 0;
    // The stencil's parameters: A's coefficients.
    [[nodiscard]] virtual const StencilParams<T>& params() const = 0;
    [[nodiscard]] virtual Backend<T>& backend() = 0;
    [[nodiscard]] virtual PhaseTimer& timer() = 0;
};

// The problem's grid: the simulation's fields and stencil operator with the parameters `op`.
template <class T>
class SimulationGrid final : public GridOperator<T> {
public:
    SimulationGrid(Simulation<T>& sim, const StencilParams<T>& op) : sim_(sim), op_(op) {}

    [[nodiscard]] Field<T> make_field() override { return sim_.make_field(); }
    void apply(FieldView<T> in, FieldView<T> out) override {
        sim_.stencil_operator().apply(op_, in, out);
    }
    void exchange(FieldView<T> f) override { sim_.stencil_operator().exchange(f); }
    [[nodiscard]] const Box& updated_points() const override {
        return sim_.stencil_operator().updated_points();
    }
    [[nodiscard]] Backend<T>& backend() override { return sim_.backend_ops(); }
    [[nodiscard]] PhaseTimer& timer() override { return sim_.timer(); }
    [[nodiscard]] const StencilParams<T>& params() const override { return op_; }

private:
    Simulation<T>& sim_;
    StencilParams<T> op_;
};

}  // namespace gridsim
