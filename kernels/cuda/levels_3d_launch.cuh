// The launch of the 3D levels kernel (temporal blocking in 3D): its tile shape, its most levels
// and the chunks its blocks walk along z.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/launch_shapes.cuh"
#include "kernels/cuda/levels_3d.cuh"
#include "kernels/level_chunks.hpp"

namespace gridsim::cuda {

// The ring of a 32 x 48 tile is 1 - (32 - 2L)(48 - 2L) / (32 * 48) of its points (38% at 4
// levels), so deeper passes would compute more ring than tile.
constexpr int kMaxLevels3d = 4;

// One block of 768 threads per multiprocessor, 2 tile rows per thread: float 2 points per thread
// (a 64 x 48 tile), double 1 (32 x 48); the fastest shape measured (docs/tuning.md, "3D levels
// tile").
constexpr int kRowsPerThread3d = 2;
constexpr int kThreadRows3d = 24;

// Most output planes of one chunk of a tile (level_chunk_rows).
constexpr int kLevelPlanes = 512;

// A 32 V x Rows R tile per block (V points and R rows per thread), z chunks by
// level_chunk_rows, tiles fastest: the blocks of a wave walk the same planes of neighbouring
// tiles, sharing their rings in the L2 cache (docs/tuning.md, "Levels chunks").
template <class T, StencilKind Kind, int Levels, int V, int R, int Rows>
void launch_levels_3d(const HeatCoeffs<T>& r, FieldView<const T> in, FieldView<T> out, const Box& b,
                      const Box& live, int multiprocessors, cudaStream_t s) {
    constexpr int kStrideX = (32 * V - 2 * Levels) / V * V;
    constexpr int kStrideY = Rows * R - 2 * Levels;
    constexpr std::size_t kSmem = LevelsPlanes<T, Levels, V, R, Rows>::kBytes;
    auto kernel = stencil_levels_3d_kernel<T, Kind, Levels, V, R, Rows>;
    static const long long wave = [&] {
        allow_shared(kernel, kSmem);
        return wave_slots(kernel, 32 * Rows, kSmem, multiprocessors);
    }();
    const int x0 = pack_start<V>(b.lo[0] - Levels);
    const unsigned tiles_x = ceil_div(b.hi[0] - (x0 + Levels), kStrideX);
    const unsigned tiles_y = ceil_div(b.hi[1] - b.lo[1], kStrideY);
    const int nz = b.hi[2] - b.lo[2];
    const int planes =
        level_chunk_rows(static_cast<long long>(tiles_x) * tiles_y, nz, Levels, wave, kLevelPlanes);
    const dim3 grid(tiles_x, tiles_y, ceil_div(nz, planes));
    kernel<<<grid, dim3(32, Rows, 1), kSmem, s>>>(in, out, b, live, r, planes);
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
}

// The launch for `levels` (2 to kMaxLevels3d) in the measured tile shape.
template <class T, StencilKind Kind>
void launch_levels_3d(const HeatCoeffs<T>& r, FieldView<const T> in, FieldView<T> out, const Box& b,
                      const Box& live, int levels, int multiprocessors, cudaStream_t s) {
    with_levels<2, kMaxLevels3d>(levels, [&](auto l) {
        launch_levels_3d<T, Kind, decltype(l)::value, sizeof(T) == 4 ? 2 : 1, kRowsPerThread3d,
                         kThreadRows3d>(r, in, out, b, live, multiprocessors, s);
    });
}

}  // namespace gridsim::cuda
