// A stencil's read-only coefficient field (kernels/stencil.hpp, AxisCoeffs::field), made beside a
// Simulation's fields: shaped as they are, its values computed where it lives, halos exchanged.
#pragma once

#include "engine/initial.hpp"
#include "engine/simulation.hpp"

namespace gridsim {

// p's values (kernels/initial.hpp) at every owned point of this rank, halos exchanged; the caller
// counts it among the Simulation's extra fields (the memory check).
template <class T>
Field<T> make_coefficient_field(Simulation<T>& sim, const InitialParams& p) {
    Field<T> f = sim.make_field();
    sim.backend_ops().fill_initial(p, f.view(), global_origin(sim.domain(), sim.subdomain()));
    sim.stencil_operator().exchange(f.view());
    sim.backend_ops().wait(Lane::boundary);
    return f;
}

}  // namespace gridsim
