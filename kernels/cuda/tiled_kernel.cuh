// The tiled variant (shared-memory tiles, see stream_kernels.cuh for the three variants).
#pragma once

#include "kernels/cuda/walk_common.cuh"

namespace gridsim::cuda {

// A point of the tiled walk: its star of radius R, x (and 3D: y) neighbours from the tile
// (`cell`, rows `tw` apart), walk-axis neighbours from the thread's window (`win[R]` the point),
// through apply_point (a coefficient field's star from memory at the point's index `at`).
template <class T, int Dims, class S>
__device__ __forceinline__ T tile_point(const T* tile, int cell, int tw,
                                        const T (&win)[2 * S::kRadius + 1], std::int64_t at,
                                        const std::int64_t (&stride)[3],
                                        const PointCoeffs<S, T>& r) {
    constexpr int R = S::kRadius;
    constexpr int kWalk = Dims - 1;
    Star<T, R> u(win[R]);
#pragma unroll
    for (int o = 1; o <= R; ++o) {
        u.set(0, -o, tile[cell - o]);
        u.set(0, o, tile[cell + o]);
        if constexpr (Dims == 3) {
            u.set(1, -o, tile[cell - o * tw]);
            u.set(1, o, tile[cell + o * tw]);
        }
        u.set(kWalk, -o, win[R - o]);
        u.set(kWalk, o, win[R + o]);
    }
    return apply_point<T, Dims, S>(u, at, stride, r);
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

// Whether the tiled walk takes a launch of blocks bx x by for a star of radius R: each ring of
// the tile is staged by the R threads (3D: rows) beside it, so the block is at least R wide
// (3D: and R rows).
__host__ __device__ constexpr bool tiled_walk_takes(int bx, int by, int dims, int radius) {
    return bx >= radius && (dims == 2 || by >= radius);
}

// Shared-memory tiled walk (2.5D in 3D), any radius R. Tile cell of thread (tx, ty): 3D (ty+R,
// tx+R) of a (bx+2R) x (by+2R) tile whose ring holds the x and y halo; 2D (ty, tx+R) of by rows
// of bx+2R, one row per thread row. The R threads (3D: rows) at each side of the block stage the
// ring cells R beyond them. Two tiles alternate between steps: a thread that writes tile b at
// step q+2 has passed the barrier of step q+1, so every reader of tile b at step q is done.
// The walk axis's 2R + 1 values around the point are a window in registers, its newest value
// pipelined as in the stream kernel (`Unroll` loads ahead), and the ring cells an edge thread
// stages are loaded one step before they are stored, so no load latency sits between two
// barriers. Cells R or more beyond box.hi are never read, so partial blocks load nothing out
// of bounds.
template <class T, int Dims, class S, int Unroll, StencilSum Sum>
__global__ void GRIDSIM_WALK_BOUNDS stencil_tiled_kernel(FieldView<const T> in, FieldView<T> out,
                                                         Box box, PointCoeffs<S, T> r, int points,
                                                         double* __restrict__ partial) {
    constexpr int R = S::kRadius;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* const tiles = reinterpret_cast<T*>(smem_raw);
    const WalkStart<Dims> s(box, points);
    const T* __restrict__ src = in.data;
    T* __restrict__ dst = out.data;
    const std::int64_t sy = in.ext.sy;
    const std::int64_t sw = Dims == 3 ? in.ext.sz : sy;
    const std::int64_t stride[3] = {1, sy, in.ext.sz};
    const int tx = static_cast<int>(threadIdx.x);
    const int ty = static_cast<int>(threadIdx.y);
    const int bx = static_cast<int>(blockDim.x);
    const int by = static_cast<int>(blockDim.y);
    const int tw = bx + 2 * R;
    const int tile_size = Dims == 3 ? tw * (by + 2 * R) : tw * by;
    const int cell = Dims == 3 ? (ty + R) * tw + tx + R : ty * tw + tx + R;

    const bool active = s.owns_point(box);
    // This thread's cell is a neighbour of an updated point (it lies less than R past the box).
    const bool loads = s.i < box.hi[0] + R && (Dims == 2 || s.j < box.hi[1] + R);
    // Ring cells this thread stages besides its own, in fixed slots: x low, x high (the first
    // and last R threads of a row), y low, y high (3D: the first and last R rows). A thread of a
    // block at most 2R threads wide holds both x slots.
    constexpr int kRings = Dims == 3 ? 4 : 2;
    const bool ring[4] = {loads && tx < R, loads && tx >= bx - R && s.i < box.hi[0],
                          Dims == 3 && loads && ty < R,
                          Dims == 3 && loads && ty >= by - R && s.j < box.hi[1]};
    const int ring_cell[4] = {-R, R, -R * tw, R * tw};
    const std::int64_t ring_off[4] = {-R, R, -R * sy, R * sy};
    std::int64_t p = loads ? s.first_index(in.ext) : 0;
    T win[2 * R + 1] = {};     // the walk axis at offsets -R..R from the point (an inactive
                               // thread keeps its own value only, win[R])
    T ahead[Unroll];           // ahead[u]: offset R of step u (mod Unroll)
    T ring_next[kRings] = {};  // ring values of the next step
    if (loads && s.w0 < s.w_end) {
#pragma unroll
        for (int o = 0; o < 2 * R; ++o) {
            if (o == R || active) win[o] = src[p + (o - R) * sw];
        }
#pragma unroll
        for (int u = 0; u < Unroll; ++u) {
            if (active && s.w0 + u < s.w_end) ahead[u] = src[p + (u + R) * sw];
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
            if (step && loads) {
                stage_cells<T, kRings>(tile, cell, win[R], ring_next, ring, ring_cell);
                const bool next = w + 1 < s.w_end;
                if (active) {
                    win[2 * R] = ahead[u];
                    if (w + Unroll < s.w_end) ahead[u] = src[p + (Unroll + R) * sw];
                } else if (next) {
                    win[R + 1] = src[p + sw];  // a cell just past the box: its next value
                }
                load_ring<T, kRings>(ring_next, ring, next, src + p + sw, ring_off);
            }
            __syncthreads();
            if (step && active) {
                const T v = tile_point<T, Dims, S>(tile, cell, tw, win, p, stride, r);
                dst[p] = v;
                if constexpr (Sum != StencilSum::none) acc += stencil_sum_term<Sum>(v, win[R]);
            }
#pragma unroll
            for (int o = 0; o < 2 * R; ++o) win[o] = win[o + 1];
            p += sw;
        }
    }
    if constexpr (Sum != StencilSum::none) store_block_sum(acc, partial);
}

}  // namespace gridsim::cuda
