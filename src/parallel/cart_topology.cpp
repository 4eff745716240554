#include "parallel/cart_topology.hpp"

#include <fmt/format.h>

#include "parallel/grid_model.hpp"
#include "parallel/mpi_check.hpp"

namespace gridsim {

CartTopology::CartTopology(MPI_Comm parent, const Config& cfg, const Domain& dom, int halo) {
    const int nranks = comm_size(parent);
    process_grid_ = choose_process_grid(cfg, dom, nranks);
    if (const std::string why = decomposition_problem(dom, process_grid_, nranks, halo);
        !why.empty()) {
        throw ConfigError(
            cfg.where(process_grid_given(cfg) ? "parallel.process_grid" : "grid.cells") + why);
    }
    std::array<int, 3> periods{};
    for (int d = 0; d < dom.dims; ++d) periods[d] = dom.periodic[d] ? 1 : 0;
    MPI_Comm cart = MPI_COMM_NULL;
    // reorder = 0: rank numbers stay those of the parent, so logs and reports match mpirun's.
    GRIDSIM_MPI_CHECK(
        MPI_Cart_create(parent, dom.dims, process_grid_.data(), periods.data(), 0, &cart));
    comm_ = Communicator(cart);
    rank_ = comm_rank(cart);
    size_ = nranks;
    GRIDSIM_MPI_CHECK(MPI_Cart_coords(cart, rank_, dom.dims, coords_.data()));
    neighbours_.fill(MPI_PROC_NULL);
    for (int d = 0; d < dom.dims; ++d) {
        GRIDSIM_MPI_CHECK(MPI_Cart_shift(cart, d, 1, &neighbours_[2 * d], &neighbours_[2 * d + 1]));
    }
    sub_ = make_subdomain(dom, process_grid_, coords_);
}

}  // namespace gridsim
