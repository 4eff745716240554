// The automatic process grid: a deterministic model of the fixed costs one sweep pays on the
// busiest rank of each factorisation of the rank count (messages per face, their bytes, the
// read-back of a residual, and how many sweeps share them where a pass can take several), in 3D
// with time blocking also of the pass's own time on that rank's block (plane_pass_model.hpp), and
// the search for its cheapest grid. A function of problem, grid and ranks only: the same deck on
// the same ranks always gets the same grid, and so the same bits (docs/tuning.md, "Process
// grid"). No MPI here, so every rule is unit-tested with costs of the test's own.
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "config/config.hpp"
#include "mesh/domain.hpp"

namespace gridsim {

// A GPU node's fixed costs as a step's time beyond its pass's own sees them (an exchange partly
// hidden behind the interior): fitted to the multi-GPU 3D runs of docs/tuning.md, "Process grid",
// in ratios to each other that rank the 2D grids as measured.
struct FixedCosts {
    double message = 4e-6;    // seconds per message: launch, pack, handshake, latency
    double packing = 8e-6;    // seconds an x face adds (packed from strided memory and unpacked)
    double bandwidth = 5e11;  // bytes per second of a face's transfer
    double sector = 32.0;     // bytes the memory system moves at least
    double read_back = 4e-6;  // seconds per residual: its read-back and all-reduce
};

// What the problem asks of each pass. From the problem alone, never from the keys that choose how
// the sweeps run (time block, overlap, graphs, transport), the residual's cadence or the backend:
// those change no bits, and a grid that followed them would change the residual's (its sums
// follow the ranks' blocks).
struct GridDemand {
    int value_bytes = 8;
    // Halo layers a sweep reads (the stencil's radius): a face sends this many per exchange, and
    // a rank holds at least this many points per axis.
    int halo_layers = 1;
    // Bytes of a face point per exchange.
    [[nodiscard]] int face_point_bytes() const { return value_bytes * halo_layers; }
    // The problem's sweeps may each sum a residual (jacobi): modelled as a read-back and
    // all-reduce per pass, as with a residual every sweep.
    bool sums_residual = false;
    // Sweeps a summing pass takes in 2D (a residual every sweep, k sweeps and k residuals per
    // exchange and read-back), which it can wherever every rank takes the pass's halos. 1: no
    // such pass.
    int summing_pass_levels = 1;
    // The most sweeps a plain pass takes in 3D (time blocking: k sweeps per exchange), which it
    // can only where every rank's x-y cross-section holds kLevels3dMinCrossSection points: the
    // CUDA pass streams one x-y tile per block along z, so a z split keeps its blocks and an x or
    // y split divides them. The model takes the fastest k from 2 to these, each with its pass's
    // time on the block. 1: no such pass (2D, the implicit scheme: its CG exchanges every
    // operator).
    int plane_pass_levels = 1;
};

// The levels the model credits a summing pass with: the most the time-block trial tries
// (Tuner::kSummingMostLevels).
constexpr int kModelSummingLevels = 4;

// The smallest x-y cross-section (points per rank) on which a 3D pass of several levels runs:
// below it too few blocks fill the GPU, so the time block is 1 (Tuner, docs/tuning.md).
constexpr std::int64_t kLevels3dMinCrossSection = 128 * 128;

GridDemand grid_demand(const Config& cfg);

// Subdomains of at most this many points per GPU ran slower on 2 GPUs than the whole grid on one
// with default settings, where the fixed costs of a step outweigh the halved work (docs/tuning.md,
// "Ranks used"; 2D: jacobi float with the residual every sweep, 3D: heat double).
constexpr std::int64_t kSlowerPerGpuPoints2d = std::int64_t{1} << 21;
constexpr std::int64_t kSlowerPerGpuPoints3d = std::int64_t{1} << 17;
// kSlowerPerGpuPoints2d or kSlowerPerGpuPoints3d by dimension.
constexpr std::int64_t slower_per_gpu_points(int dims) {
    return dims == 2 ? kSlowerPerGpuPoints2d : kSlowerPerGpuPoints3d;
}

// The ranks a process grid holds (unused axes are 1).
constexpr int grid_ranks(const std::array<int, 3>& grid) { return grid[0] * grid[1] * grid[2]; }

// Whether the deck gives the process grid, whole or in part (some axis non-zero).
bool process_grid_given(const Config& cfg);

// Points in the x-y cross-section of the smallest block of `grid`.
std::int64_t smallest_cross_section(const Domain& dom, const std::array<int, 3>& grid);

// Points of the largest block of `grid` (the first blocks take the remainder points).
std::int64_t largest_block_points(const Domain& dom, const std::array<int, 3>& grid);

// Whether the largest block of a grid of several ranks is at most the measured size below which
// more GPUs were slower (kSlowerPerGpuPoints2d/3d).
bool below_paying_size(const Domain& dom, const std::array<int, 3>& grid);

// How many of the `launched` ranks a run uses: parallel.ranks_used where set (ConfigError where
// it asks for more than were launched); every rank where
// the deck gives the process grid or the run is not on GPUs (`on_gpus` false); else every rank
// unless the automatic grid's largest block would be at or below the measured crossover
// (below_paying_size), and then the most ranks whose blocks hold more points than it on
// average, or one. A function of problem, grid and ranks; the ranks beyond it wait idle for the
// run's exit code.
int ranks_to_use(const Config& cfg, const Domain& dom, int launched, bool on_gpus);

// Modelled seconds per sweep that the busiest rank of `grid` spends: per face it sends (one or two
// per split axis) a message plus the face's bytes over the bandwidth, where an x face (one point
// per row) also pays its packing and counts a whole sector per point, the traffic its packing
// really causes; with a residual its read-back; the messages and read-back shared by a summing
// pass's levels where the grid lets the pass take them (every rank as deep as the pass's halos).
// With a 3D pass in demand, also the sweep's own time on the rank's block, at the fastest k: a
// pass of k levels (plane_pass_model.hpp) sharing the messages where every rank keeps the pass's
// cross-section and halos, else one sweep per pass.
double modelled_sweep_cost(const Domain& dom, const std::array<int, 3>& grid,
                           const GridDemand& demand, const FixedCosts& costs = {});

// A rank's halo exchange per sweep: its messages (once per exchange, however deep) and its bytes
// (per layer: a k-deep exchange every k sweeps moves one layer per sweep), in seconds.
struct HaloCost {
    double messages = 0.0;
    double bytes = 0.0;
};

// The points per axis of the largest block of `grid` (the first blocks take the remainder).
std::array<long long, 3> largest_block(const Domain& dom, const std::array<int, 3>& grid);

// Points of a face across axis `d` of a block of `block` points.
long long face_points(const Domain& dom, const std::array<long long, 3>& block, int d);

// One face across axis `d` of a block of `block` points: a message of `message` seconds (an x
// face also pays its packing) and its bytes at `bandwidth` (an x face counting a whole sector per
// point, the traffic its packing causes).
HaloCost face_cost(const Domain& dom, const std::array<long long, 3>& block, int d, int value_bytes,
                   double message, double bandwidth, const FixedCosts& costs);

// modelled_sweep_cost with the rank's halo exchange given: the messages shared by a pass's levels
// where the grid lets the pass take several, the bytes and a residual's read-back every sweep,
// and a 3D pass's own time.
double sweep_cost_with_halo(const Domain& dom, const std::array<int, 3>& grid,
                            const GridDemand& demand, const FixedCosts& costs,
                            const HaloCost& halo);

// The factorisation of `nranks` with the lowest cost(grid) among those that leave each rank at
// least `min_points` points per axis; among equal costs the one with the larger factors on the
// slower axes (z, then y), whose faces are contiguous rows. {nranks, 1, 1} where none fits
// (decomposition_problem() says why).
std::array<int, 3> cheapest_grid(const Domain& dom, int nranks,
                                 const std::function<double(const std::array<int, 3>&)>& cost,
                                 int min_points = 1);

// The process grid for `nranks`: the deck's choice where given (non-zero; a partial choice is
// completed by MPI_Dims_create), else the cheapest under modelled_sweep_cost.
std::array<int, 3> choose_process_grid(const Config& cfg, const Domain& dom, int nranks);

}  // namespace gridsim
