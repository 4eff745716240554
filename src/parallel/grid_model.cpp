#include "parallel/grid_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/levels_3d_tile.hpp"
#include "parallel/mpi_check.hpp"
#include "parallel/plane_pass_model.hpp"

namespace gridsim {

namespace {

// Seconds of the busiest rank's halo exchange on `grid`, every face over the link of `costs`.
HaloCost halo_cost(const Domain& dom, const std::array<int, 3>& grid, int value_bytes,
                   const FixedCosts& costs) {
    const std::array<long long, 3> block = largest_block(dom, grid);
    HaloCost c;
    for (int d = 0; d < dom.dims; ++d) {
        if (grid[d] == 1) continue;  // a periodic axis on one rank is a local copy
        const int messages = dom.periodic[d] || grid[d] > 2 ? 2 : 1;
        const HaloCost f =
            face_cost(dom, block, d, value_bytes, costs.message, costs.bandwidth, costs);
        c.messages += messages * f.messages;
        c.bytes += messages * f.bytes;
    }
    return c;
}

// Whether a summing pass of `levels` levels runs on `grid`: 2D, every rank as deep as the pass's
// halos.
bool takes_summing_passes(const Domain& dom, const std::array<int, 3>& grid, int levels) {
    return levels > 1 && dom.dims == 2 &&
           decomposition_problem(dom, grid, grid_ranks(grid), levels).empty();
}

// Whether a 3D pass of `levels` levels runs on `grid`: every rank's x-y cross-section at least
// kLevels3dMinCrossSection points and as deep as the pass's halos.
bool takes_plane_passes(const Domain& dom, const std::array<int, 3>& grid, int levels) {
    if (levels <= 1 || dom.dims != 3) return false;
    return smallest_cross_section(dom, grid) >= kLevels3dMinCrossSection &&
           decomposition_problem(dom, grid, grid_ranks(grid), levels).empty();
}

// A 3D sweep with time blocking on `grid`: the busiest rank's block at the fastest k, a pass of
// k levels where the grid lets every rank take it (its messages shared by its levels), else one
// sweep per pass; its halos' bytes and a residual's read-back every sweep.
double plane_sweep_cost(const Domain& dom, const std::array<int, 3>& grid, const GridDemand& demand,
                        const FixedCosts& costs, const HaloCost& halo) {
    const std::array<long long, 3> block = largest_block(dom, grid);
    const double every_sweep = halo.bytes + (demand.sums_residual ? costs.read_back : 0.0);
    double best = modelled_single_sweep_seconds(block, demand.value_bytes) + halo.messages;
    for (int k = 2; k <= demand.plane_pass_levels; ++k) {
        if (!takes_plane_passes(dom, grid, k)) continue;
        best = std::min(
            best, modelled_plane_pass_seconds(block, demand.value_bytes, k) + halo.messages / k);
    }
    return best + every_sweep;
}

}  // namespace

std::array<long long, 3> largest_block(const Domain& dom, const std::array<int, 3>& grid) {
    std::array<long long, 3> block{1, 1, 1};
    for (int d = 0; d < dom.dims; ++d) block[d] = (dom.solved[d] + grid[d] - 1) / grid[d];
    return block;
}

long long face_points(const Domain& dom, const std::array<long long, 3>& block, int d) {
    long long points = 1;
    for (int e = 0; e < dom.dims; ++e) {
        if (e != d) points *= block[e];
    }
    return points;
}

HaloCost face_cost(const Domain& dom, const std::array<long long, 3>& block, int d, int value_bytes,
                   double message, double bandwidth, const FixedCosts& costs) {
    const long long points = face_points(dom, block, d);
    // Contiguous bytes per run of the face: one value for x faces, a row otherwise.
    const double run = static_cast<double>(value_bytes) * (d == 0 ? 1 : block[0]);
    const double moved = std::ceil(run / costs.sector) * costs.sector / run;
    return {message + (d == 0 ? costs.packing : 0.0),
            static_cast<double>(points) * value_bytes * moved / bandwidth};
}

GridDemand grid_demand(const Config& cfg) {
    GridDemand d;
    d.value_bytes = cfg.precision == Precision::float32 ? 4 : 8;
    d.halo_layers = cfg.stencil_radius;
    // Jacobi's residual cadence (time.norm_every) is a key of the run, not of the problem: the
    // grid is the one of a residual every sweep at every cadence, so a residual's bits at a
    // sweep do not depend on how often it is taken.
    d.sums_residual = cfg.problem == "jacobi";
    if (d.sums_residual && cfg.dims == 2) d.summing_pass_levels = kModelSummingLevels;
    const bool implicit = cfg.problem == "heat" && cfg.word("problem.scheme") == "implicit";
    if (cfg.dims == 3 && !implicit && cfg.stencil_plain_star) d.plane_pass_levels = kMaxLevels3d;
    return d;
}

std::int64_t smallest_cross_section(const Domain& dom, const std::array<int, 3>& grid) {
    return std::int64_t{dom.solved[0] / grid[0]} * (dom.solved[1] / grid[1]);
}

std::int64_t largest_block_points(const Domain& dom, const std::array<int, 3>& grid) {
    const std::array<long long, 3> block = largest_block(dom, grid);
    return block[0] * block[1] * block[2];
}

bool below_paying_size(const Domain& dom, const std::array<int, 3>& grid) {
    if (grid_ranks(grid) < 2) return false;
    return largest_block_points(dom, grid) <= slower_per_gpu_points(dom.dims);
}

bool process_grid_given(const Config& cfg) {
    return std::any_of(cfg.process_grid.begin(), cfg.process_grid.end(),
                       [](int p) { return p != 0; });
}

int ranks_to_use(const Config& cfg, const Domain& dom, int launched, bool on_gpus) {
    if (cfg.ranks_used > launched) {
        throw ConfigError(
            cfg.where("parallel.ranks_used") +
            fmt::format("{} ranks asked for, but {} were launched", cfg.ranks_used, launched));
    }
    if (cfg.ranks_used > 0) return cfg.ranks_used;
    if (process_grid_given(cfg) || !on_gpus ||
        !below_paying_size(dom, choose_process_grid(cfg, dom, launched)))
        return launched;
    // The most ranks whose blocks hold more than the crossover on average (so their largest
    // block does too): fewer than `launched`, whose blocks hold at most it.
    const auto points = static_cast<std::int64_t>(grid_points(dom));
    return static_cast<int>(
        std::max<std::int64_t>(1, (points - 1) / slower_per_gpu_points(dom.dims)));
}

double modelled_sweep_cost(const Domain& dom, const std::array<int, 3>& grid,
                           const GridDemand& demand, const FixedCosts& costs) {
    return sweep_cost_with_halo(dom, grid, demand, costs,
                                halo_cost(dom, grid, demand.face_point_bytes(), costs));
}

double sweep_cost_with_halo(const Domain& dom, const std::array<int, 3>& grid,
                            const GridDemand& demand, const FixedCosts& costs,
                            const HaloCost& halo) {
    if (dom.dims == 3 && demand.plane_pass_levels > 1)
        return plane_sweep_cost(dom, grid, demand, costs, halo);
    const int row = takes_summing_passes(dom, grid, demand.summing_pass_levels)
                        ? demand.summing_pass_levels
                        : 1;
    // A pass of several levels exchanges once; only a summing pass reads back once too.
    const double read_back = demand.sums_residual ? costs.read_back / row : 0.0;
    return halo.messages / row + read_back + halo.bytes;
}

std::array<int, 3> cheapest_grid(const Domain& dom, int nranks,
                                 const std::function<double(const std::array<int, 3>&)>& cost,
                                 int min_points) {
    std::array<int, 3> grid{nranks, 1, 1};  // where no grid fits: decomposition_problem() says why
    double best = std::numeric_limits<double>::infinity();
    const int max_z = dom.dims == 3 ? nranks : 1;
    for (int pz = max_z; pz >= 1; --pz) {
        if (nranks % pz != 0 || pz * min_points > dom.solved[2]) continue;
        for (int py = nranks / pz; py >= 1; --py) {
            if ((nranks / pz) % py != 0 || py * min_points > dom.solved[1]) continue;
            const std::array<int, 3> g{nranks / pz / py, py, pz};
            if (g[0] * min_points > dom.solved[0]) continue;
            const double c = cost(g);
            if (c < best * (1 - 1e-9)) {
                best = c;
                grid = g;
            }
        }
    }
    return grid;
}

std::array<int, 3> choose_process_grid(const Config& cfg, const Domain& dom, int nranks) {
    if (!process_grid_given(cfg)) {
        const GridDemand demand = grid_demand(cfg);
        return cheapest_grid(
            dom, nranks,
            [&](const std::array<int, 3>& g) { return modelled_sweep_cost(dom, g, demand); },
            demand.halo_layers);
    }
    std::array<int, 3> grid{1, 1, 1};
    std::copy(cfg.process_grid.begin(), cfg.process_grid.begin() + dom.dims, grid.begin());
    long fixed = 1;
    for (int d = 0; d < dom.dims; ++d) fixed *= std::max(grid[d], 1);
    // MPI_Dims_create rejects a partial grid that does not divide the rank count; leave the
    // mismatch to decomposition_problem(), which explains it.
    if (nranks % fixed != 0) {
        for (int d = 0; d < dom.dims; ++d) grid[d] = std::max(grid[d], 1);
        return grid;
    }
    const bool complete =
        std::all_of(grid.begin(), grid.begin() + dom.dims, [](int p) { return p > 0; });
    if (!complete) GRIDSIM_MPI_CHECK(MPI_Dims_create(nranks, dom.dims, grid.data()));
    return grid;
}

}  // namespace gridsim
