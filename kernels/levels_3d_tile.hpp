// The 3D levels pass's tile (temporal blocking along z), in plain C++: the CUDA launch and the
// host's cost model (src/parallel/plane_pass_model.hpp) count its tiles with the same functions.
#pragma once

namespace gridsim {

// The ring of a 32 x 48 tile is 1 - (32 - 2L)(48 - 2L) / (32 * 48) of its points (38% at 4
// levels), so deeper passes would compute more ring than tile.
constexpr int kMaxLevels3d = 4;

// One block of 768 threads per multiprocessor, 2 tile rows per thread: float 2 points per lane
// (a 64 x 48 tile), double 1 (32 x 48); the fastest shape measured (docs/tuning.md, "3D levels
// tile").
constexpr int kRowsPerThread3d = 2;
constexpr int kThreadRows3d = 24;

// A stencil that reads a coefficient field: 512 threads (a 32 x 32 tile in double), so that each
// thread has the registers for its window of the field's planes (up to 128), and at most this
// many levels: with 3 the faces-first kernel spills (docs/tuning.md, "Density conduction in time
// blocks").
constexpr int kFieldThreadRows3d = 16;
constexpr int kMaxFieldLevels3d = 2;

// Most output planes of one chunk of a tile (level_chunk_rows).
constexpr int kLevelPlanes = 512;

// Consecutive x points a lane of the tile holds, by the bytes of a value.
constexpr int levels_3d_lane_points(int value_bytes) { return value_bytes == 4 ? 2 : 1; }

// Points a tile of `levels` levels writes: along x a multiple of the lane's V points (tiles start
// on a multiple of V, aligned loads), along y every row but the ring's.
constexpr int levels_3d_stride_x(int lane_points, int levels) {
    return (32 * lane_points - 2 * levels) / lane_points * lane_points;
}
constexpr int levels_3d_stride_y(int levels, int thread_rows = kThreadRows3d) {
    return thread_rows * kRowsPerThread3d - 2 * levels;
}

// The first point of a pass's first tile along x, for a box from `lo`: lo less the ring, rounded
// down to a multiple of the lane's points.
constexpr int levels_3d_first_x(int lo, int lane_points, int levels) {
    const int x = lo - levels;
    return x - ((x % lane_points) + lane_points) % lane_points;
}

// The tiles of a pass over a box's points [lo, hi) along x, and along y.
constexpr long long levels_3d_tiles_x(int lo, int hi, int lane_points, int levels) {
    const long long stride = levels_3d_stride_x(lane_points, levels);
    return (hi - (levels_3d_first_x(lo, lane_points, levels) + levels) + stride - 1) / stride;
}
constexpr long long levels_3d_tiles_y(int lo, int hi, int levels, int thread_rows = kThreadRows3d) {
    const long long stride = levels_3d_stride_y(levels, thread_rows);
    return (hi - lo + stride - 1) / stride;
}

}  // namespace gridsim
