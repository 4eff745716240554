// CUDA stencil kernels (the only place __global__ appears, with reductions.cu). Every variant
// computes a point through stencil_point() of kernels/stencil.hpp, so naive and tiled give the
// same bits, and the math is the CPU backend's.
#pragma once

#include <cuda_runtime.h>

#include "grid/box.hpp"
#include "kernels/stencil.hpp"

namespace gridsim::cuda {

// Naive: neighbours straight from global memory (through L1/L2), no staging. With Rows = 1 it
// is one thread per point. With Rows > 1 a thread updates Rows points of one column, blockDim.y
// apart (so a warp's accesses stay coalesced), computing all before storing any: the loads of
// all its points are in flight together. A memory-bound kernel needs that many bytes in flight,
// and one 4-byte point per thread is too few to cover DRAM latency (docs/performance.md).
template <class T, int Dims, StencilKind Kind, int Rows>
__global__ void stencil_naive_kernel(FieldView<const T> in, FieldView<T> out, Box box,
                                     HeatCoeffs<T> r) {
    const int i = box.lo[0] + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    const int j0 = box.lo[1] + static_cast<int>(blockIdx.y * blockDim.y * Rows + threadIdx.y);
    const int k = box.lo[2] + static_cast<int>(blockIdx.z);
    if (i >= box.hi[0]) return;
    T v[Rows];
#pragma unroll
    for (int p = 0; p < Rows; ++p) {
        const int j = j0 + p * static_cast<int>(blockDim.y);
        if (j < box.hi[1]) v[p] = stencil_at<T, Dims, Kind>(in, i, j, k, r);
    }
#pragma unroll
    for (int p = 0; p < Rows; ++p) {
        const int j = j0 + p * static_cast<int>(blockDim.y);
        if (j < box.hi[1]) out(i, j, k) = v[p];
    }
}

// Tiled: a block stages its (bx+2) x (by+2) tile of one x-y plane (points plus the x/y halo
// ring) in shared memory, so each value is read from global memory once per plane instead of
// up to five times. In 3D the block marches along z through `zchunk` planes, keeping the
// point's z-neighbours in registers (below, centre, above) and reading one new plane per step.
// Tile cells beyond box.hi + 1 are never read, so partial blocks load nothing out of bounds.
template <class T, int Dims, StencilKind Kind>
__global__ void stencil_tiled_kernel(FieldView<const T> in, FieldView<T> out, Box box,
                                     HeatCoeffs<T> r, int zchunk) {
    extern __shared__ unsigned char smem_raw[];
    T* tile = reinterpret_cast<T*>(smem_raw);
    const int tw = static_cast<int>(blockDim.x) + 2;
    const int tx = static_cast<int>(threadIdx.x);
    const int ty = static_cast<int>(threadIdx.y);
    const int i = box.lo[0] + static_cast<int>(blockIdx.x * blockDim.x) + tx;
    const int j = box.lo[1] + static_cast<int>(blockIdx.y * blockDim.y) + ty;
    const bool active = i < box.hi[0] && j < box.hi[1];
    const bool loads = i <= box.hi[0] && j <= box.hi[1];  // own tile cell is needed by a neighbour
    // The block's last column/row also loads the ring cell beyond it, if that is still needed.
    const bool last_x = loads && tx == static_cast<int>(blockDim.x) - 1 && i + 1 <= box.hi[0];
    const bool last_y = loads && ty == static_cast<int>(blockDim.y) - 1 && j + 1 <= box.hi[1];
    T* cell = tile + (ty + 1) * tw + (tx + 1);

    const int k_begin = Dims == 3 ? box.lo[2] + static_cast<int>(blockIdx.z) * zchunk : box.lo[2];
    const int k_end = Dims == 3 ? min(k_begin + zchunk, box.hi[2]) : box.lo[2] + 1;
    T below{}, centre{}, above{};
    if (active) {
        centre = in(i, j, k_begin);
        if constexpr (Dims == 3) below = in(i, j, k_begin - 1);
    }
    for (int k = k_begin; k < k_end; ++k) {
        if constexpr (Dims == 3) {
            if (active) above = in(i, j, k + 1);  // issued early: in flight during the barrier
        }
        __syncthreads();  // the previous plane's readers are done with the tile
        if (loads) cell[0] = active ? centre : in(i, j, k);
        if (loads && tx == 0) cell[-1] = in(i - 1, j, k);
        if (last_x) cell[1] = in(i + 1, j, k);
        if (loads && ty == 0) cell[-tw] = in(i, j - 1, k);
        if (last_y) cell[tw] = in(i, j + 1, k);
        __syncthreads();
        if (active) {
            out(i, j, k) = stencil_point<T, Dims, Kind>(centre, cell[-1], cell[1], cell[-tw],
                                                        cell[tw], below, above, r);
        }
        below = centre;
        centre = above;
    }
}

// Box <-> contiguous buffer (x fastest), one thread per element, grid-stride.
template <class T>
__global__ void pack_kernel(FieldView<const T> u, Box b, T* __restrict__ dst, long long n) {
    const int nx = b.hi[0] - b.lo[0];
    const int ny = b.hi[1] - b.lo[1];
    for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < n;
         t += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long row = t / nx;
        dst[t] = u(b.lo[0] + static_cast<int>(t % nx), b.lo[1] + static_cast<int>(row % ny),
                   b.lo[2] + static_cast<int>(row / ny));
    }
}

template <class T>
__global__ void unpack_kernel(const T* __restrict__ src, FieldView<T> u, Box b, long long n) {
    const int nx = b.hi[0] - b.lo[0];
    const int ny = b.hi[1] - b.lo[1];
    for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < n;
         t += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long row = t / nx;
        u(b.lo[0] + static_cast<int>(t % nx), b.lo[1] + static_cast<int>(row % ny),
          b.lo[2] + static_cast<int>(row / ny)) = src[t];
    }
}

}  // namespace gridsim::cuda
