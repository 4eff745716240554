// The 3D levels pass's tile (temporal blocking along z), in plain C++ so that the host's cost
// model (src/parallel/plane_pass_model.hpp) counts the tiles the CUDA launch makes.
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

// Most output planes of one chunk of a tile (level_chunk_rows).
constexpr int kLevelPlanes = 512;

// Consecutive x points a lane of the tile holds, by the bytes of a value.
constexpr int levels_3d_lane_points(int value_bytes) { return value_bytes == 4 ? 2 : 1; }

// Points a tile of `levels` levels writes: along x a multiple of the lane's V points (tiles start
// on a multiple of V, aligned loads), along y every row but the ring's.
constexpr int levels_3d_stride_x(int lane_points, int levels) {
    return (32 * lane_points - 2 * levels) / lane_points * lane_points;
}
constexpr int levels_3d_stride_y(int levels) {
    return kThreadRows3d * kRowsPerThread3d - 2 * levels;
}

}  // namespace gridsim
