// The pieces every walking CUDA kernel shares: where a block sits (BlockPlace), block sums in a
// fixed order, where a walking thread starts, periodic self-wrap, x packs for vector loads, and the
// levels kernels' rotating step loop.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/fast_divide.hpp"
#include "kernels/stencil.hpp"
#include "mesh/box.hpp"

namespace gridsim::cuda {

// The walking kernels' register cap: __launch_bounds__(256 threads, GRIDSIM_WALK_MIN_BLOCKS
// blocks per multiprocessor), 0 = none.
#ifndef GRIDSIM_WALK_MIN_BLOCKS
#define GRIDSIM_WALK_MIN_BLOCKS 0
#endif
#if GRIDSIM_WALK_MIN_BLOCKS > 0
#define GRIDSIM_WALK_BOUNDS __launch_bounds__(256, GRIDSIM_WALK_MIN_BLOCKS)
#else
#define GRIDSIM_WALK_BOUNDS
#endif

// Where a block of a walking kernel sits and which of its threads this is: the hardware's
// indices for a launch over one box, or those a launch over several boxes decodes for each of
// them (stencil_boxes_kernel), so that every box is walked exactly as its own launch would.
struct BlockPlace {
    unsigned bx, by, bz;  // the block's index in its box's grid
    unsigned dx, dy;      // threads per block, x and y
    unsigned tx, ty;      // this thread in the block
    __device__ static BlockPlace hardware() {
        return {blockIdx.x, blockIdx.y,  blockIdx.z, blockDim.x,
                blockDim.y, threadIdx.x, threadIdx.y};
    }
};

// The sum of `v` over the first `lanes` lanes of a warp, in a fixed tree (shuffles down), valid
// in lane 0. Every one of those lanes must call it.
__device__ inline double warp_tree_sum(double v, unsigned lane, unsigned lanes) {
    const unsigned mask = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
    for (unsigned offset = 16; offset > 0; offset /= 2) {
        const double other = __shfl_down_sync(mask, v, offset);
        if (lane + offset < lanes) v += other;
    }
    return v;
}

// The block's sum of `v` over its first `threads` threads (`tid`: the linear index within the
// block) in a fixed order (lanes by warp_tree_sum, then warps in index order), written by thread
// 0 to `*slot`. Every thread of the block must call it; threads from `threads` on add nothing.
__device__ inline void store_place_sum(double v, double* slot, unsigned tid, unsigned threads) {
    __shared__ double warp_sums[32];
    const unsigned lane = tid % 32;
    if (tid < threads) {
        // The last warp may be partial (a block of, say, 3 x 5 threads): only its lanes take
        // part.
        v = warp_tree_sum(v, lane, min(32u, threads - (tid - lane)));
        if (lane == 0) warp_sums[tid / 32] = v;
    }
    __syncthreads();
    if (tid == 0) {
        double sum = 0.0;
        for (unsigned w = 0; w < (threads + 31) / 32; ++w) sum += warp_sums[w];
        *slot = sum;
    }
}

// The hardware block's sum, written to partial[linear block index].
__device__ inline void store_block_sum(double v, double* __restrict__ partial) {
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    store_place_sum(v, partial + blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z),
                    tid, blockDim.x * blockDim.y * blockDim.z);
}

// Where a walking thread starts: its cross-section point and its chunk [w0, w_end) of the walk
// axis. 3D: thread (x, y) of the block is point (i, j), the block's z index picks the z chunk.
// 2D: the thread row y of the block picks the chunk (dy chunks per block, stacked along y).
template <int Dims>
struct WalkStart {
    int i, j, w0, w_end;
    __device__ WalkStart(const Box& box, int points,
                         const BlockPlace& at = BlockPlace::hardware()) {
        i = box.lo[0] + static_cast<int>(at.bx * at.dx + at.tx);
        if constexpr (Dims == 3) {
            j = box.lo[1] + static_cast<int>(at.by * at.dy + at.ty);
            w0 = box.lo[2] + static_cast<int>(at.bz) * points;
            w_end = min(w0 + points, box.hi[2]);
        } else {
            j = 0;
            w0 = box.lo[1] + static_cast<int>(at.by * at.dy + at.ty) * points;
            w_end = min(w0 + points, box.hi[1]);
        }
    }
    [[nodiscard]] __device__ bool owns_point(const Box& box) const {
        return i < box.hi[0] && (Dims == 2 || j < box.hi[1]);
    }
    [[nodiscard]] __device__ std::int64_t first_index(const FieldExtents& e) const {
        return Dims == 3 ? e.index(i, j, w0) : e.index(i, w0, 0);
    }
};

// A periodic walk axis held by this rank alone, copied into its own halo by the sweep itself:
// the thread that stores a point of the first owned layer (w = 0) also stores it one period on
// (w + n), of the last (w = n - 1) one period back, so the next sweep finds its halo without a
// copy of its own. n = 0: no such axis (or the halo exchange copies it).
struct SelfWrap {
    int n = 0;
};

// SelfWrap's copies for a thread whose walk covers [w0, w_end): image(w, to) stores its point
// of layer w at layer `to` too (one period on from the first layer, back from the last).
template <class Image>
__device__ __forceinline__ void store_wrap_images(SelfWrap wrap, int w0, int w_end, Image&& image) {
    if (wrap.n > 0 && w0 == 0) image(0, wrap.n);
    if (wrap.n > 0 && w0 < wrap.n && wrap.n <= w_end) image(wrap.n - 1, -1);
}

// V consecutive x points as one 16-byte (or V * sizeof(T)-byte) aligned unit.
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
    T v[V];
};

// Which packs the threads along x of a walking launch take. By default x block bx of dx threads
// takes packs [bx dx, + dx) from x0 (pack_start of the box's first column). A 2D jacobi residual
// sweep's launch lays its x blocks (32 threads) out as the summing pass lays out its tiles
// (LevelSums): `warps` blocks to a tile, tiles 32 warps - 2 ring packs apart, the first `ring`
// lanes of a tile's first block and the last `ring` of its last idle (those packs are the
// neighbouring tiles': the pass computes them as its ring there). So each block sums exactly the
// packs one warp of the pass sums, in the same lanes, and the pass needs no warp for its ring.
struct PackGroups {
    int warps = 0;  // 0: packs in block order
    int ring = 0;
    constexpr __host__ __device__ int stride() const { return 32 * warps - 2 * ring; }
    // The x blocks over `packs` packs: up to the one holding the last (later ones would have
    // nothing to walk).
    constexpr int blocks(int packs) const {
        const int tile = (packs - 1) / stride();
        return tile * warps + (packs - 1 - tile * stride() + ring) / 32 + 1;
    }
};
// Thread tx of x block bx's pack (from x0), or -1 for an idle lane.
__device__ inline int walk_pack(unsigned bx, unsigned dx, unsigned tx, PackGroups g) {
    if (g.warps == 0) return static_cast<int>(bx * dx + tx);
    const int tile = static_cast<int>(bx) / g.warps;
    const int w = static_cast<int>(bx) - tile * g.warps;
    const int lane = static_cast<int>(tx);
    if ((w == 0 && lane < g.ring) || (w == g.warps - 1 && lane >= 32 - g.ring)) return -1;
    return tile * g.stride() - g.ring + 32 * w + lane;
}

// Which points of a thread's pack it may load or store (`on`), and the access: one vector load
// or store where every point is on, else one per point (points off load as zero).
template <class T, int V>
struct PackMask {
    bool on[V];
    bool any = false;
    bool all = true;

    __device__ void set(int e, bool value) {
        on[e] = value;
        any = any || value;
        all = all && value;
    }
    __device__ void load(const T* p, T (&v)[V]) const {
        if (all) {
            const Pack<T, V> pk = *reinterpret_cast<const Pack<T, V>*>(p);
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = pk.v[e];
        } else {
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = on[e] ? p[e] : T(0);
        }
    }
    __device__ void store(T* p, const T (&v)[V]) const {
        if (all) {
            Pack<T, V> pk;
#pragma unroll
            for (int e = 0; e < V; ++e) pk.v[e] = v[e];
            *reinterpret_cast<Pack<T, V>*>(p) = pk;
        } else {
#pragma unroll
            for (int e = 0; e < V; ++e)
                if (on[e]) p[e] = v[e];
        }
    }
};

// Asks L2 to fetch the line at global address `p` (a hint: nothing waits for it).
__device__ __forceinline__ void prefetch_l2(const void* p) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(p)));
}

// A barrier for the first `threads` threads to arrive (whole warps): those of a block whose other
// warps have returned.
__device__ __forceinline__ void sync_warps(int threads) {
    asm volatile("bar.sync 0, %0;" ::"r"(threads) : "memory");
}

// The three register rows of every level of a levels kernel's step loop (rotating_steps).
template <class T, int Levels, int V>
struct RotatingRows {
    T h0[Levels][V];
    T h1[Levels][V];
    T h2[Levels][V];

    __device__ __forceinline__ RotatingRows() {
#pragma unroll
        for (int l = 0; l < Levels; ++l)
#pragma unroll
            for (int e = 0; e < V; ++e) h0[l][e] = h1[l][e] = h2[l][e] = T(0);
    }
    // Steps t, t + 1 and t + 2 (t a multiple of 3), those below `steps`.
    template <class Step>
    __device__ __forceinline__ void three_steps(int t, int steps, Step& step) {
        step(std::integral_constant<int, 0>{}, t, h0, h1, h2);
        if (t + 1 >= steps) return;
        step(std::integral_constant<int, 1>{}, t, h2, h0, h1);
        if (t + 2 >= steps) return;
        step(std::integral_constant<int, 2>{}, t, h1, h2, h0);
    }
};

// The levels kernels' step loop: step(slot, t, newest, middle, oldest) runs step t + slot with
// the three register rows of every level (a thread's V points of three consecutive rows or
// planes, zero before the first step) in the roles that step gives them. The roles rotate every
// step instead of the rows being copied, so the body is unrolled three times (slot 0, 1, 2 at
// the same t, a multiple of 3).
template <class T, int Levels, int V, class Step>
__device__ __forceinline__ void rotating_steps(int steps, Step& step) {
    T h0[Levels][V];
    T h1[Levels][V];
    T h2[Levels][V];
#pragma unroll
    for (int l = 0; l < Levels; ++l)
#pragma unroll
        for (int e = 0; e < V; ++e) h0[l][e] = h1[l][e] = h2[l][e] = T(0);
    for (int t = 0; t < steps; t += 3) {
        step(std::integral_constant<int, 0>{}, t, h0, h1, h2);
        if (t + 1 >= steps) break;
        step(std::integral_constant<int, 1>{}, t, h2, h0, h1);
        if (t + 2 >= steps) break;
        step(std::integral_constant<int, 2>{}, t, h1, h2, h0);
    }
}

// The same steps, with `between()` called once after the steps below `pause` (a multiple of 3;
// after the last step where pause >= steps): outside the loop, so that no step tests for it (a
// test in every step slows the 3D levels kernel). A loop of its own, so that the plain one above
// keeps its code (docs/tuning.md, "Faces-first kernel").
template <class T, int Levels, int V, class Step, class Between>
__device__ __forceinline__ void rotating_steps(int steps, Step& step, int pause,
                                               Between&& between) {
    RotatingRows<T, Levels, V> rows;
    int t = 0;
    for (; t < steps && t < pause; t += 3) rows.three_steps(t, steps, step);
    between();
    for (; t < steps; t += 3) rows.three_steps(t, steps, step);
}

}  // namespace gridsim::cuda
