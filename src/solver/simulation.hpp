// The state every explicit two-field problem shares (heat FTCS, jacobi): the process grid, the
// backend, the current and next field, the halo exchange and the overlap regions, and the one
// step that moves them forward (DESIGN.md section 5).
#pragma once

#include <memory>
#include <vector>

#include "comm/cart_topology.hpp"
#include "comm/halo_exchange.hpp"
#include "config/config.hpp"
#include "grid/domain.hpp"
#include "kernels/backend.hpp"
#include "solver/phase_timer.hpp"

namespace gridsim {

template <class T>
class Simulation {
public:
    // Throws ConfigError for a deck this rank count or this build cannot run.
    Simulation(const Config& cfg, MPI_Comm comm);

    // current = initial condition (Dirichlet points included), halos exchanged; next = current.
    void initialise();
    // One sweep next = stencil(current) by the overlap recipe, then current <-> next.
    void sweep(const StencilParams<T>& params);
    // sqrt of the global sum over updated points of (current - previous)^2.
    double residual();
    // sqrt of the global sum over owned points of current^2.
    double norm();
    // This rank's current field on the host (halos included; index with field extents).
    [[nodiscard]] FieldView<const T> current_on_host();
    // The global solved grid on rank 0 (empty elsewhere).
    [[nodiscard]] std::vector<double> gather();

    [[nodiscard]] const Domain& domain() const { return dom_; }
    [[nodiscard]] const CartTopology& topology() const { return topo_; }
    [[nodiscard]] const Subdomain& subdomain() const { return topo_.subdomain(); }
    [[nodiscard]] std::string backend_name() const { return backend_->name(); }
    [[nodiscard]] const char* transport_name() const { return halo_->transport_name(); }
    [[nodiscard]] std::int64_t global_updated_points() const { return global_updated_; }
    [[nodiscard]] PhaseTimer& timer() { return timer_; }
    void finish_all_work();

private:
    void update(const StencilParams<T>& p, const Box& box, Lane lane, Phase phase);
    double allreduce_sum(double local);

    const Config& cfg_;
    Domain dom_;
    CartTopology topo_;
    std::unique_ptr<Backend<T>> backend_;
    // u_[cur_] is the current field, u_[1 - cur_] the next; both carry kStencilRadius halos.
    std::array<Field<T>, 2> u_;
    int cur_ = 0;
    std::unique_ptr<HaloExchange<T>> halo_;
    Box updated_;
    SweepRegions regions_;
    std::int64_t global_updated_ = 0;
    PhaseTimer timer_;
    std::vector<T> host_copy_;
};

// The backend the deck asks for, or ConfigError naming parallel.backend when it is not built.
template <class T>
std::unique_ptr<Backend<T>> make_backend(const Config& cfg);

}  // namespace gridsim
