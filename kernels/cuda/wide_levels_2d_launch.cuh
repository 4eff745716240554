// The 2D wide levels kernel's launch (wide_levels_2d.cuh holds the kernel, which a host compiler
// also builds: tests/unit/test_wide_levels_2d_on_host.cpp).
#pragma once

#include "kernels/cuda/launch_shapes.cuh"
#include "kernels/cuda/wide_levels_2d.cuh"

namespace gridsim::cuda {

// A block per tile, tiles along x fastest.
template <class T, class S, int L>
void launch_wide_levels_2d(const AxisCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                           const Box& b, const Box& live, const FaceMoves<T>& reflections,
                           cudaStream_t s) {
    using Tile = WideTile2d<T, S::kRadius, L>;
    auto kernel = stencil_wide_levels_2d_kernel<T, S, L>;
    static const bool allowed = allow_shared(kernel, Tile::kBytes);
    (void)allowed;
    const dim3 grid(
        static_cast<unsigned>(wide_levels_2d_tiles<T, S::kRadius, L>(b.lo[0], b.hi[0], 0)),
        static_cast<unsigned>(wide_levels_2d_tiles<T, S::kRadius, L>(b.lo[1], b.hi[1], 1)));
    kernel<<<grid, dim3(32, kWide2dThreadRows, 1), Tile::kBytes, s>>>(
        in, out, b, live, point_coeffs<S, 2>(r), wide_mirrors(reflections));
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gridsim::cuda
