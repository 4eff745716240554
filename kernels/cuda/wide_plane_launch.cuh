// The plane walk's launch (wide_plane_kernel.cuh holds the kernel, which a host compiler also
// builds: tests/unit/test_plane_walk_on_host.cpp).
#pragma once

#include "kernels/cuda/launch_shapes.cuh"
#include "kernels/cuda/wide_plane_kernel.cuh"
#include "kernels/level_chunks.hpp"
#include "kernels/levels_3d_tile.hpp"

namespace gridsim::cuda {

// The fewest planes of a box the plane walk takes for a star of radius `radius`.
constexpr int plane_walk_planes(int radius) { return 4 * radius; }
// Whether the plane walk takes `b` for a star of radius `radius`: at least a tile wide and tall
// and plane_walk_planes deep (docs/tuning.md, "Wide stars in 3D").
inline bool plane_walk_takes(const Box& b, int radius) {
    return b.hi[0] - b.lo[0] >= kPlaneTileX && b.hi[1] - b.lo[1] >= kPlaneTileY &&
           b.hi[2] - b.lo[2] >= plane_walk_planes(radius);
}

// The plane walk over `b`: a block per tile and chunk of planes, tiles fastest (neighbouring
// tiles' rings meet in the L2 cache), the chunks cut as the levels kernels cut theirs.
template <class T, class S>
void launch_wide_planes(FieldView<const T> in, FieldView<T> out, const Box& b,
                        const AxisCoeffs<T>& r, int multiprocessors, cudaStream_t s) {
    using Tile = PlaneTile<T, S::kRadius>;
    auto kernel = stencil_wide_plane_kernel<T, S>;
    static const long long wave = [&] {
        allow_shared(kernel, Tile::kBytes);
        return wave_slots(kernel, Tile::kThreads, Tile::kBytes, multiprocessors);
    }();
    const unsigned tiles_x = ceil_div(b.hi[0] - pack_start<kSectorPoints<T>>(b.lo[0]), Tile::kX);
    const unsigned tiles_y = ceil_div(b.hi[1] - b.lo[1], Tile::kY);
    const int nz = b.hi[2] - b.lo[2];
    const int planes = level_chunk_rows(static_cast<long long>(tiles_x) * tiles_y, nz, S::kRadius,
                                        wave, kLevelPlanes);
    const dim3 grid(tiles_x, tiles_y, ceil_div(nz, planes));
    kernel<<<grid, dim3(32, kPlaneThreadRows, 1), Tile::kBytes, s>>>(in, out, b,
                                                                     point_coeffs<S, 3>(r), planes);
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gridsim::cuda
