#include "parallel/cart_topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "parallel/mpi_check.hpp"

namespace gridsim {

double modelled_halo_cost(const Domain& dom, const std::array<int, 3>& grid, int value_bytes) {
    // Orders of magnitude of a GPU node's halo path (launch, pack, NCCL or staged transfer): the
    // costs are compared with each other only (docs/tuning.md, "Process grid").
    constexpr double kLatency = 20e-6;        // seconds per message
    constexpr double kBandwidth = 1e11;       // bytes per second
    constexpr double kSector = 32.0;          // bytes the memory system moves at least
    std::array<long long, 3> block{1, 1, 1};  // the largest block
    for (int d = 0; d < dom.dims; ++d) block[d] = (dom.solved[d] + grid[d] - 1) / grid[d];
    double cost = 0.0;
    for (int d = 0; d < dom.dims; ++d) {
        if (grid[d] == 1) continue;  // a periodic axis on one rank is a local copy
        const int messages = dom.periodic[d] || grid[d] > 2 ? 2 : 1;
        long long points = 1;
        for (int e = 0; e < dom.dims; ++e) {
            if (e != d) points *= block[e];
        }
        // Contiguous bytes per run of the face: one value for x faces, a row otherwise.
        const double run = static_cast<double>(value_bytes) * (d == 0 ? 1 : block[0]);
        const double moved = std::ceil(run / kSector) * kSector / run;
        cost +=
            messages * (kLatency + static_cast<double>(points) * value_bytes * moved / kBandwidth);
    }
    return cost;
}

std::array<int, 3> choose_process_grid(const Config& cfg, const Domain& dom, int nranks) {
    std::array<int, 3> grid{1, 1, 1};
    const bool automatic =
        std::all_of(cfg.process_grid.begin(), cfg.process_grid.begin() + dom.dims,
                    [](int p) { return p == 0; });
    if (!automatic) {
        std::copy(cfg.process_grid.begin(), cfg.process_grid.begin() + dom.dims, grid.begin());
        long fixed = 1;
        for (int d = 0; d < dom.dims; ++d) fixed *= std::max(grid[d], 1);
        // MPI_Dims_create rejects a partial grid that does not divide the rank count; leave
        // the mismatch to decomposition_problem(), which explains it.
        if (nranks % fixed != 0) {
            for (int d = 0; d < dom.dims; ++d) grid[d] = std::max(grid[d], 1);
            return grid;
        }
        const bool complete =
            std::all_of(grid.begin(), grid.begin() + dom.dims, [](int p) { return p > 0; });
        if (!complete) GRIDSIM_MPI_CHECK(MPI_Dims_create(nranks, dom.dims, grid.data()));
        return grid;
    }
    // Every factorisation that leaves each rank at least one point per axis; the cheapest
    // wins, and among equal costs the one with the larger factors on the slower axes (z, then
    // y), whose faces are contiguous rows.
    const int value_bytes = cfg.precision == Precision::float32 ? 4 : 8;
    double best = std::numeric_limits<double>::infinity();
    const int max_z = dom.dims == 3 ? nranks : 1;
    for (int pz = max_z; pz >= 1; --pz) {
        if (nranks % pz != 0 || pz > dom.solved[2]) continue;
        for (int py = nranks / pz; py >= 1; --py) {
            if ((nranks / pz) % py != 0 || py > dom.solved[1]) continue;
            const std::array<int, 3> g{nranks / pz / py, py, pz};
            if (g[0] > dom.solved[0]) continue;
            const double cost = modelled_halo_cost(dom, g, value_bytes);
            if (cost < best * (1 - 1e-9)) {
                best = cost;
                grid = g;
            }
        }
    }
    if (best == std::numeric_limits<double>::infinity()) {
        grid = {nranks, 1, 1};  // no grid fits: decomposition_problem() says why
    }
    return grid;
}

CartTopology::CartTopology(MPI_Comm parent, const Config& cfg, const Domain& dom, int halo) {
    const int nranks = comm_size(parent);
    process_grid_ = choose_process_grid(cfg, dom, nranks);
    if (const std::string why = decomposition_problem(dom, process_grid_, nranks, halo);
        !why.empty()) {
        const bool from_deck = std::any_of(cfg.process_grid.begin(), cfg.process_grid.end(),
                                           [](int p) { return p != 0; });
        throw ConfigError(cfg.where(from_deck ? "parallel.process_grid" : "grid.cells") + why);
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
