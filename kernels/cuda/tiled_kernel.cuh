// The tiled variant (shared-memory tiles, see stream_kernels.cuh for the three variants).
#pragma once

#include "kernels/cuda/walk_common.cuh"

namespace gridsim::cuda {

// A point of the tiled walk: its x (and 3D: y) neighbours from the tile, its walk-axis
// neighbours from registers; a stencil that reads a coefficient field gathers the field's star
// from memory at the point's index `at` (strides 1, sy, sz), as the wide stream kernel does.
template <class T, int Dims, class S>
__device__ __forceinline__ T tile_point(const T* tile, int cell, int tw, T centre, T below, T above,
                                        const AxisCoeffs<T>& r, [[maybe_unused]] std::int64_t at,
                                        [[maybe_unused]] std::int64_t sy,
                                        [[maybe_unused]] std::int64_t sz) {
    if constexpr (kReadsField<S>) {
        const std::int64_t stride[3] = {1, sy, sz};
        const Star<T> u = Dims == 3 ? Star<T>(centre, tile[cell - 1], tile[cell + 1],
                                              tile[cell - tw], tile[cell + tw], below, above)
                                    : Star<T>(centre, tile[cell - 1], tile[cell + 1], below, above,
                                              centre, centre);
        return apply_point<T, Dims, S>(u, at, stride, r);
    } else if constexpr (Dims == 3) {
        return stencil_point<T, 3, S>(centre, tile[cell - 1], tile[cell + 1], tile[cell - tw],
                                      tile[cell + tw], below, above, r);
    } else {
        return stencil_point<T, 2, S>(centre, tile[cell - 1], tile[cell + 1], below, above, centre,
                                      centre, r);
    }
}

// This thread's cell and the ring cells it stages, into the step's tile.
template <class T, int Rings>
__device__ __forceinline__ void stage_cells(T* tile, int cell, T centre, const T (&values)[Rings],
                                            const bool (&ring)[4], const int (&ring_cell)[4]) {
    tile[cell] = centre;
#pragma unroll
    for (int g = 0; g < Rings; ++g) {
        if (ring[g]) tile[cell + ring_cell[g]] = values[g];
    }
}

// The ring values this thread stages (ring[g]), read at `at` + ring_off[g] where `when`.
template <class T, int Rings>
__device__ __forceinline__ void load_ring(T (&values)[Rings], const bool (&ring)[4], bool when,
                                          const T* __restrict__ at,
                                          const std::int64_t (&ring_off)[4]) {
#pragma unroll
    for (int g = 0; g < Rings; ++g) {
        if (when && ring[g]) values[g] = at[ring_off[g]];
    }
}

// Shared-memory tiled walk (2.5D in 3D). Tile cell of thread (tx, ty): 3D (ty+1, tx+1) of a
// (bx+2) x (by+2) tile whose ring holds the x and y halo; 2D (ty, tx+1) of by rows of bx+2,
// one row per thread row. Two tiles alternate between steps: a thread that writes tile b at
// step q+2 has passed the barrier of step q+1, so every reader of tile b at step q is done.
// The walk-axis values are pipelined as in the stream kernel (`Unroll` loads ahead), and the
// ring cells an edge thread stages are loaded one step before they are stored, so no load
// latency sits between two barriers. Cells beyond box.hi + 1 are never read, so partial blocks
// load nothing out of bounds.
template <class T, int Dims, class S, int Unroll, StencilSum Sum>
__global__ void GRIDSIM_WALK_BOUNDS stencil_tiled_kernel(FieldView<const T> in, FieldView<T> out,
                                                         Box box, AxisCoeffs<T> r, int points,
                                                         double* __restrict__ partial) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* const tiles = reinterpret_cast<T*>(smem_raw);
    const WalkStart<Dims> s(box, points);
    const T* __restrict__ src = in.data;
    T* __restrict__ dst = out.data;
    const std::int64_t sy = in.ext.sy;
    const std::int64_t sw = Dims == 3 ? in.ext.sz : sy;
    const int tx = static_cast<int>(threadIdx.x);
    const int ty = static_cast<int>(threadIdx.y);
    const int bx = static_cast<int>(blockDim.x);
    const int tw = bx + 2;
    const int tile_size =
        Dims == 3 ? tw * (static_cast<int>(blockDim.y) + 2) : tw * static_cast<int>(blockDim.y);
    const int cell = Dims == 3 ? (ty + 1) * tw + tx + 1 : ty * tw + tx + 1;

    const bool active = s.owns_point(box);
    // This thread's cell is a neighbour of an updated point (it lies at most one past the box).
    const bool loads = s.i <= box.hi[0] && (Dims == 2 || s.j <= box.hi[1]);
    // Ring cells this thread stages besides its own, in fixed slots: x low, x high (first and
    // last thread of a row), y low, y high (3D: first and last row). A thread of a block one
    // thread wide holds both x slots.
    constexpr int kRings = Dims == 3 ? 4 : 2;
    const int by = static_cast<int>(blockDim.y);
    const bool ring[4] = {loads && tx == 0, loads && tx == bx - 1 && s.i + 1 <= box.hi[0],
                          Dims == 3 && loads && ty == 0,
                          Dims == 3 && loads && ty == by - 1 && s.j + 1 <= box.hi[1]};
    const int ring_cell[4] = {-1, 1, -tw, tw};
    const std::int64_t ring_off[4] = {-1, 1, -sy, sy};
    std::int64_t p = loads ? s.first_index(in.ext) : 0;
    T below{};
    T centre{};
    T ahead[Unroll];
    T ring_next[kRings] = {};  // ring values of the next step
    if (loads && s.w0 < s.w_end) {
        if (active) below = src[p - sw];
        centre = src[p];
#pragma unroll
        for (int u = 0; u < Unroll; ++u) {
            if (active && s.w0 + u < s.w_end) ahead[u] = src[p + (u + 1) * sw];
        }
        load_ring<T, kRings>(ring_next, ring, true, src + p, ring_off);
    }
    double acc = 0.0;
    // Same trip count for the whole block (every thread reaches every barrier).
    for (int q0 = 0; q0 < points; q0 += Unroll) {
#pragma unroll
        for (int u = 0; u < Unroll; ++u) {
            const int q = q0 + u;
            if (q >= points) break;
            const int w = s.w0 + q;
            const bool step = w < s.w_end;
            T* const tile = tiles + (q & 1) * tile_size;
            T above{};
            if (step && loads) {
                stage_cells<T, kRings>(tile, cell, centre, ring_next, ring, ring_cell);
                const bool next = w + 1 < s.w_end;
                if (active) {
                    above = ahead[u];
                    if (w + Unroll < s.w_end) ahead[u] = src[p + (Unroll + 1) * sw];
                } else if (next) {
                    above = src[p + sw];  // a cell just past the box: its next value
                }
                load_ring<T, kRings>(ring_next, ring, next, src + p + sw, ring_off);
            }
            __syncthreads();
            if (step && active) {
                const T v = tile_point<T, Dims, S>(tile, cell, tw, centre, below, above, r, p, sy,
                                                   in.ext.sz);
                dst[p] = v;
                if constexpr (Sum != StencilSum::none) acc += stencil_sum_term<Sum>(v, centre);
            }
            below = centre;
            centre = above;
            p += sw;
        }
    }
    if constexpr (Sum != StencilSum::none) store_block_sum(acc, partial);
}

}  // namespace gridsim::cuda
