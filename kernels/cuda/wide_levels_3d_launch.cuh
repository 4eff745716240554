// The wide levels kernel's launch (wide_levels_3d.cuh holds the kernel, which a host compiler
// also builds: tests/unit/test_wide_levels_on_host.cpp).
#pragma once

#include <stdexcept>

#include "kernels/cuda/launch_shapes.cuh"
#include "kernels/cuda/wide_levels_3d.cuh"
#include "kernels/level_chunks.hpp"
#include "kernels/levels_3d_tile.hpp"

namespace gridsim::cuda {

// A block per tile and chunk of planes, tiles fastest (neighbouring tiles' rings meet in the L2
// cache; the tiles at the box's sides first, wide_tile_of), the chunks cut as the other levels
// kernels cut theirs.
template <class T, class S, int L>
void launch_wide_levels_3d(const AxisCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                           const Box& b, const Box& live, const FaceMoves<T>& reflections,
                           int multiprocessors, cudaStream_t s) {
    using Tile = WideLevelsTile<T, S::kRadius, L>;
    auto kernel = stencil_wide_levels_3d_kernel<T, S, L>;
    static const long long wave = [&] {
        allow_shared(kernel, Tile::kBytes);
        return wave_slots(kernel, Tile::kThreads, Tile::kBytes, multiprocessors);
    }();
    const auto tiles_x =
        static_cast<unsigned>(wide_levels_tiles<T, S::kRadius, L>(b.lo[0], b.hi[0], 0));
    const auto tiles_y =
        static_cast<unsigned>(wide_levels_tiles<T, S::kRadius, L>(b.lo[1], b.hi[1], 1));
    const int nz = b.hi[2] - b.lo[2];
    // A chunk's fill is 2 L R + L - 1 steps; level_chunk_rows counts 3 per level of radius 1.
    const int planes = level_chunk_rows(static_cast<long long>(tiles_x) * tiles_y, nz,
                                        (2 * Tile::kRing + L + 1) / 3, wave, kLevelPlanes);
    const WideMirrors m = wide_mirrors(reflections);
    if (!wide_mirrors_fit(m, S::kRadius - 1))
        throw std::logic_error("wide levels pass: a fixed face's layers wider than R - 1");
    const dim3 grid(tiles_x * tiles_y, 1, ceil_div(nz, planes));
    kernel<<<grid, dim3(32, kWideThreadRows, 1), Tile::kBytes, s>>>(
        in, out, b, live, point_coeffs<S, 3>(r), planes, m);
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gridsim::cuda
