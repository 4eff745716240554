// The launch of the naive kernel (parallel.kernel = "naive"): one point per thread in each of
// `points` rows, the reference the tuned kernels are measured against.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/launch_shapes.cuh"
#include "kernels/cuda/stream_kernels.cuh"
#include "kernels/device_runtime.hpp"

namespace gridsim::cuda {

// cfg.block_x x cfg.block_y threads (narrowed for thin boxes), cfg.points rows per thread, one
// z plane per grid layer; a summing launch takes one partial per block from
// partial_slots(blocks).
template <class T, int Dims, class S, StencilSum Sum, class PartialSlots>
void launch_naive(FieldView<const T> in, FieldView<T> out, const Box& b, const AxisCoeffs<T>& r,
                  const LaunchConfig& cfg, PartialSlots&& partial_slots, cudaStream_t s) {
    const int nx = b.hi[0] - b.lo[0];
    const int ny = b.hi[1] - b.lo[1];
    const dim3 block = fit_block(cfg.block_x, cfg.block_y, nx, ny);
    const dim3 grid(ceil_div(nx, block.x), ceil_div(ny, block.y * cfg.points), b.hi[2] - b.lo[2]);
    double* partial = Sum != StencilSum::none
                          ? partial_slots(static_cast<long long>(grid.x) * grid.y * grid.z)
                          : nullptr;
    const PointCoeffs<S, T> k = point_coeffs<S, Dims>(r);
    switch (cfg.points) {
        case 1:
            stencil_naive_kernel<T, Dims, S, 1, Sum><<<grid, block, 0, s>>>(in, out, b, k, partial);
            break;
        case 2:
            stencil_naive_kernel<T, Dims, S, 2, Sum><<<grid, block, 0, s>>>(in, out, b, k, partial);
            break;
        case 4:
            stencil_naive_kernel<T, Dims, S, 4, Sum><<<grid, block, 0, s>>>(in, out, b, k, partial);
            break;
        default:
            stencil_naive_kernel<T, Dims, S, 8, Sum><<<grid, block, 0, s>>>(in, out, b, k, partial);
            break;
    }
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gridsim::cuda
