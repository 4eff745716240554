#include "parallel/cart_topology.hpp"

#include <fmt/format.h>

#include "parallel/grid_model.hpp"
#include "parallel/mpi_check.hpp"
#include "parallel/node_layout.hpp"
#include "parallel/node_map.hpp"

namespace gridsim {

CartTopology::CartTopology(MPI_Comm parent, const Config& cfg, const Domain& dom, int halo) {
    const int nranks = comm_size(parent);
    const Layout layout = choose_layout(cfg, dom, gather_node_map(parent).node_of, &layout_note_);
    process_grid_ = layout.grid;
    tile_ = layout.tile;
    if (const std::string why = decomposition_problem(dom, process_grid_, nranks, halo);
        !why.empty()) {
        throw ConfigError(
            cfg.where(process_grid_given(cfg) ? "parallel.process_grid" : "grid.cells") + why);
    }
    std::array<int, 3> periods{};
    for (int d = 0; d < dom.dims; ++d) periods[d] = dom.periodic[d] ? 1 : 0;
    // Ranks in the order of the blocks they take (Cartesian rank = block): the parent's order
    // unless the nodes take boxes of blocks (node_layout.hpp), so logs and reports match
    // mpirun's where they can.
    MPI_Comm ordered = MPI_COMM_NULL;
    GRIDSIM_MPI_CHECK(MPI_Comm_split(parent, 0, layout.block_of[comm_rank(parent)], &ordered));
    const Communicator owned(ordered);
    MPI_Comm cart = MPI_COMM_NULL;
    GRIDSIM_MPI_CHECK(
        MPI_Cart_create(ordered, dom.dims, process_grid_.data(), periods.data(), 0, &cart));
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

CartTopology CartTopology::with_block(const Subdomain& sub) const {
    CartTopology t;
    t.comm_ = duplicate_comm(comm());
    t.rank_ = rank_;
    t.size_ = size_;
    t.process_grid_ = process_grid_;
    t.coords_ = coords_;
    t.neighbours_ = neighbours_;
    t.sub_ = sub;
    t.tile_ = tile_;
    t.layout_note_ = layout_note_;
    return t;
}

CartTopology CartTopology::alone(const Subdomain& whole) {
    CartTopology t;
    t.comm_ = duplicate_comm(MPI_COMM_SELF);
    for (int face = 0; face < 6; ++face)
        t.neighbours_[face] = whole.has_neighbour[face] ? 0 : MPI_PROC_NULL;
    t.sub_ = whole;
    return t;
}

}  // namespace gridsim
