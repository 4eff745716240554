// The modelled time of a 3D sweep on one rank's block, by how the CUDA 3D pass (temporal blocking
// along z) cuts the block into tiles, chunks and waves of blocks. A deterministic function of the
// block, the value's bytes and the levels: part of the process grid's cost model.
#pragma once

#include <array>

namespace gridsim {

// What the model assumes of the device, measured on one H200 (docs/tuning.md, "Process grid"):
// multiprocessors (one block of the pass each), the device copy bandwidth, and the cost of a step
// of a block (one plane of its tile through every level) in planes of that tile moved at a
// multiprocessor's share of the copy bandwidth: `base` plus `per_level` per level, times
// `float_factor` in single precision (two points per lane).
struct PlanePassCosts {
    int multiprocessors = 132;
    double copy_bandwidth = 4.15e12;  // bytes per second, read plus written
    double base = 0.5;
    double per_level = 0.235;
    double float_factor = 1.15;
};

// How the pass cuts a block: tiles of the x-y cross-section, planes per chunk, blocks (tiles x
// chunks), waves of `multiprocessors` blocks, and the steps of the busiest multiprocessor (waves x
// (planes + 3 x levels), each block filling its levels' pipeline).
struct PlanePassShape {
    long long tiles = 0;
    int planes = 0;
    long long blocks = 0;
    long long waves = 0;
    long long steps = 0;
};
PlanePassShape plane_pass_shape(const std::array<long long, 3>& block, int value_bytes, int levels,
                                const PlanePassCosts& costs = {});

// Seconds per sweep of a pass of `levels` levels (2 to kMaxLevels3d) over a block of
// nx x ny x nz points: its tiles' chunks in waves of `multiprocessors` blocks, each block stepping
// its chunk's planes plus 3 x levels to fill, each step at the modelled step cost, over `levels`.
double modelled_plane_pass_seconds(const std::array<long long, 3>& block, int value_bytes,
                                   int levels, const PlanePassCosts& costs = {});

// Seconds per sweep of one sweep per pass (no time blocking): the block's values read and written
// once at the copy bandwidth.
double modelled_single_sweep_seconds(const std::array<long long, 3>& block, int value_bytes,
                                     const PlanePassCosts& costs = {});

}  // namespace gridsim
