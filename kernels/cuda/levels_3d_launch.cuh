// The launch of the 3D levels kernel (temporal blocking in 3D): its tile shape, its most levels
// and the chunks its blocks walk along z.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/launch_shapes.cuh"
#include "kernels/cuda/levels_3d.cuh"
#include "kernels/level_chunks.hpp"
#include "kernels/levels_3d_tile.hpp"

namespace gridsim::cuda {

// A 32 V x Rows R tile per block (V points and R rows per thread), z chunks by
// level_chunk_rows, tiles fastest: the blocks of a wave walk the same planes of neighbouring
// tiles, sharing their rings in the L2 cache (docs/tuning.md, "Levels chunks").
template <class T, StencilKind Kind, int Levels, int V, int R, int Rows>
void launch_levels_3d(const HeatCoeffs<T>& r, FieldView<const T> in, FieldView<T> out, const Box& b,
                      const Box& live, int multiprocessors, cudaStream_t s) {
    static_assert(Rows == kThreadRows3d && R == kRowsPerThread3d, "the tile of levels_3d_tile.hpp");
    constexpr std::size_t kSmem = LevelsPlanes<T, Levels, V, R, Rows>::kBytes;
    auto kernel = stencil_levels_3d_kernel<T, Kind, Levels, V, R, Rows>;
    static const long long wave = [&] {
        allow_shared(kernel, kSmem);
        return wave_slots(kernel, 32 * Rows, kSmem, multiprocessors);
    }();
    const auto tiles_x = static_cast<unsigned>(levels_3d_tiles_x(b.lo[0], b.hi[0], V, Levels));
    const auto tiles_y = static_cast<unsigned>(levels_3d_tiles_y(b.lo[1], b.hi[1], Levels));
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
        launch_levels_3d<T, Kind, decltype(l)::value, levels_3d_lane_points(sizeof(T)),
                         kRowsPerThread3d, kThreadRows3d>(r, in, out, b, live, multiprocessors, s);
    });
}

}  // namespace gridsim::cuda
