// CUDA stencil kernels. __global__ appears only in kernels/cuda/: here, the residual fold in
// cuda_backend.cu, reductions.cu and initial.cu. Every variant computes a point through
// stencil_point() of kernels/stencil.hpp, so all give the same bits, and the math is the CPU
// backend's.
//
// The three variants, all for one box of a field (in and out share one FieldExtents):
//  - naive:  neighbours straight from global memory, `Rows` points per thread spaced
//            blockDim.y apart (the reference the others are checked against);
//  - stream: a thread walks `points` consecutive points along the slowest axis (y in 2D, z in
//            3D), carrying the previous, current and next value of that axis in registers, so
//            each value of the walk axis comes from DRAM once; the other neighbours come through
//            L1 from the threads beside it. On boxes wide enough, each thread moves 16 bytes of
//            consecutive x points at once (stencil_stream_vec_kernel);
//  - tiled:  the same walk, with the cross-section (an x row in 2D, an x-y tile with its halo
//            ring in 3D) staged in shared memory, double-buffered: one barrier per step.
// stencil_boxes_kernel walks several boxes (a residual sweep's shell slabs and interior) in one
// launch, each block as the stream kernel's launch of its box would.
// With a `Sum` other than none a kernel also sums stencil_sum_term over its points ((out - in)^2
// for jacobi's residual, in * out for the CG's p . A p), in double, and each block writes one
// partial; the backend later adds the partials in a fixed order.
#pragma once

#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "grid/box.hpp"
#include "kernels/fast_divide.hpp"
#include "kernels/stencil.hpp"
#include "kernels/vector_ops.hpp"

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

namespace gridsim::cuda {

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

template <class T, int Dims, StencilKind Kind, int Rows, StencilSum Sum>
__global__ void stencil_naive_kernel(FieldView<const T> in, FieldView<T> out, Box box,
                                     HeatCoeffs<T> r, double* __restrict__ partial) {
    const int i = box.lo[0] + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    const int j0 = box.lo[1] + static_cast<int>(blockIdx.y * blockDim.y * Rows + threadIdx.y);
    const int k = box.lo[2] + static_cast<int>(blockIdx.z);
    double acc = 0.0;
    if (i < box.hi[0]) {
        T v[Rows];
#pragma unroll
        for (int p = 0; p < Rows; ++p) {
            const int j = j0 + p * static_cast<int>(blockDim.y);
            if (j < box.hi[1]) v[p] = stencil_at<T, Dims, Kind>(in, i, j, k, r);
        }
#pragma unroll
        for (int p = 0; p < Rows; ++p) {
            const int j = j0 + p * static_cast<int>(blockDim.y);
            if (j >= box.hi[1]) continue;
            out(i, j, k) = v[p];
            if constexpr (Sum != StencilSum::none) acc += stencil_sum_term<Sum>(v[p], in(i, j, k));
        }
    }
    if constexpr (Sum != StencilSum::none) store_block_sum(acc, partial);
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

// The stream kernel's walk of one thread (see stencil_stream_kernel), returning its sum.
template <class T, int Dims, StencilKind Kind, int Unroll, StencilSum Sum, bool Wraps>
__device__ __forceinline__ double walk_points(FieldView<const T> in, FieldView<T> out,
                                              const Box& box, const HeatCoeffs<T>& r, int points,
                                              const BlockPlace& at, SelfWrap wrap) {
    const WalkStart<Dims> s(box, points, at);
    const T* __restrict__ src = in.data;
    T* __restrict__ dst = out.data;
    const std::int64_t sy = in.ext.sy;
    const std::int64_t sw = Dims == 3 ? in.ext.sz : sy;  // stride of the walk axis
    double acc = 0.0;
    if (s.owns_point(box) && s.w0 < s.w_end) {
        std::int64_t p = s.first_index(in.ext);
        T below = src[p - sw];
        T centre = src[p];
        T ahead[Unroll];  // values at walk positions w0 + 1 + u, then refilled Unroll further on
#pragma unroll
        for (int u = 0; u < Unroll; ++u) {
            if (s.w0 + u < s.w_end) ahead[u] = src[p + (u + 1) * sw];
        }
        for (int w = s.w0; w < s.w_end; w += Unroll) {
#pragma unroll
            for (int u = 0; u < Unroll; ++u) {
                if (w + u >= s.w_end) break;
                const T above = ahead[u];
                const std::int64_t pu = p + u * sw;
                if (w + u + Unroll < s.w_end) ahead[u] = src[pu + (Unroll + 1) * sw];
                T v;
                if constexpr (Dims == 3) {
                    v = stencil_point<T, 3, Kind>(centre, src[pu - 1], src[pu + 1], src[pu - sy],
                                                  src[pu + sy], below, above, r);
                } else {
                    v = stencil_point<T, 2, Kind>(centre, src[pu - 1], src[pu + 1], below, above,
                                                  centre, centre, r);
                }
                dst[pu] = v;
                if constexpr (Sum != StencilSum::none) acc += stencil_sum_term<Sum>(v, centre);
                below = centre;
                centre = above;
            }
            p += Unroll * sw;
        }
        // After the walk, not inside it: the extra stores in the step raised the registers the
        // loop holds (and so cut the blocks per multiprocessor). The thread reads back what it
        // stored itself.
        if constexpr (Wraps) {
            auto image = [&](int w, int to) {
                const std::int64_t from = s.first_index(in.ext) + (w - s.w0) * sw;
                dst[from + (to - w) * sw] = dst[from];
            };
            store_wrap_images(wrap, s.w0, s.w_end, image);
        }
    }
    return acc;
}

// Register streaming, software-pipelined: ahead[u] holds the walk-axis value `Unroll` points
// ahead of the point that will consume it, and is refilled as soon as it is consumed, so every
// thread keeps `Unroll` independent DRAM loads in flight for its whole walk. ahead[] is indexed
// only by unrolled constants, so it stays in registers.
// Wraps: the kernel takes `wrap` (compiled out where false: the images' indices would stay live
// through the walk, 8 more registers in 3D).
template <class T, int Dims, StencilKind Kind, int Unroll, StencilSum Sum, bool Wraps = false>
__global__ void GRIDSIM_WALK_BOUNDS stencil_stream_kernel(FieldView<const T> in, FieldView<T> out,
                                                          Box box, HeatCoeffs<T> r, int points,
                                                          double* __restrict__ partial,
                                                          SelfWrap wrap) {
    const double acc = walk_points<T, Dims, Kind, Unroll, Sum, Wraps>(in, out, box, r, points,
                                                                      BlockPlace::hardware(), wrap);
    if constexpr (Sum != StencilSum::none) store_block_sum(acc, partial);
}

// V consecutive x points as one 16-byte (or V * sizeof(T)-byte) aligned unit.
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
    T v[V];
};

// x rounded down to a multiple of V (x may be negative: a halo point): where the pack of V
// points holding x starts. Packs start there so that their loads and stores are aligned.
template <int V>
__host__ __device__ constexpr int pack_start(int x) {
    return x - ((x % V) + V) % V;
}

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

// The stream kernel with V consecutive x points per thread, moved as 16-byte vector loads and
// stores: a thread's pack starts at an x index that is a multiple of V (rows are aligned, so
// the address is too). Per pack and step it loads one walk-axis pack, the two y-neighbour packs
// (3D) and the two x neighbours beyond the pack, instead of 3 to 5 scalar loads per point.
// Points of a pack outside the box are read but never written.
// Its walk of one thread (`at`: see BlockPlace), returning the thread's sum.
template <class T, int Dims, StencilKind Kind, int Unroll, int V, StencilSum Sum, bool Wraps>
__device__ __forceinline__ double walk_packs(FieldView<const T> in, FieldView<T> out,
                                             const Box& box, const HeatCoeffs<T>& r, int points,
                                             const BlockPlace& at, SelfWrap wrap,
                                             PackGroups groups) {
    using P = Pack<T, V>;
    const int x0 = pack_start<V>(box.lo[0]);
    const int pack = walk_pack(at.bx, at.dx, at.tx, groups);
    const int i = x0 + V * pack;
    int j = 0;
    int w0 = 0;
    if constexpr (Dims == 3) {
        j = box.lo[1] + static_cast<int>(at.by * at.dy + at.ty);
        w0 = box.lo[2] + static_cast<int>(at.bz) * points;
    } else {
        w0 = box.lo[1] + static_cast<int>(at.by * at.dy + at.ty) * points;
    }
    const int w_end = min(w0 + points, box.hi[Dims - 1]);
    const T* __restrict__ src = in.data;
    T* __restrict__ dst = out.data;
    const std::int64_t sy = in.ext.sy;
    const std::int64_t sw = Dims == 3 ? in.ext.sz : sy;
    double acc = 0.0;
    if (pack >= 0 && i < box.hi[0] && (Dims == 2 || j < box.hi[1]) && w0 < w_end) {
        bool keep[V];
        bool whole = true;
#pragma unroll
        for (int e = 0; e < V; ++e) {
            keep[e] = i + e >= box.lo[0] && i + e < box.hi[0];
            whole = whole && keep[e];
        }
        std::int64_t p = Dims == 3 ? in.ext.index(i, j, w0) : in.ext.index(i, w0, 0);
        auto load = [&](std::int64_t at) { return *reinterpret_cast<const P*>(src + at); };
        P below = load(p - sw);
        P centre = load(p);
        P ahead[Unroll];
#pragma unroll
        for (int u = 0; u < Unroll; ++u) {
            if (w0 + u < w_end) ahead[u] = load(p + (u + 1) * sw);
        }
        for (int w = w0; w < w_end; w += Unroll) {
#pragma unroll
            for (int u = 0; u < Unroll; ++u) {
                if (w + u >= w_end) break;
                const P above = ahead[u];
                const std::int64_t pu = p + u * sw;
                if (w + u + Unroll < w_end) ahead[u] = load(pu + (Unroll + 1) * sw);
                const T left = src[pu - 1];
                const T right = src[pu + V];
                P ym{};
                P yp{};
                if constexpr (Dims == 3) {
                    ym = load(pu - sy);
                    yp = load(pu + sy);
                }
                P v;
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const T xm = e == 0 ? left : centre.v[e - 1];
                    const T xp = e == V - 1 ? right : centre.v[e + 1];
                    if constexpr (Dims == 3) {
                        v.v[e] = stencil_point<T, 3, Kind>(centre.v[e], xm, xp, ym.v[e], yp.v[e],
                                                           below.v[e], above.v[e], r);
                    } else {
                        v.v[e] = stencil_point<T, 2, Kind>(centre.v[e], xm, xp, below.v[e],
                                                           above.v[e], centre.v[e], centre.v[e], r);
                    }
                    if constexpr (Sum != StencilSum::none) {
                        if (keep[e]) acc += stencil_sum_term<Sum>(v.v[e], centre.v[e]);
                    }
                }
                if (whole) {
                    *reinterpret_cast<P*>(dst + pu) = v;
                } else {
#pragma unroll
                    for (int e = 0; e < V; ++e) {
                        if (keep[e]) dst[pu + e] = v.v[e];
                    }
                }
                below = centre;
                centre = above;
            }
            p += Unroll * sw;
        }
        // As in walk_points: the images after the walk, from what this thread stored.
        if constexpr (Wraps) {
            auto image = [&](int w, int to) {
                const std::int64_t from = Dims == 3 ? in.ext.index(i, j, w) : in.ext.index(i, w, 0);
                const std::int64_t dest = from + static_cast<std::int64_t>(to - w) * sw;
                if (whole) {
                    *reinterpret_cast<P*>(dst + dest) = *reinterpret_cast<const P*>(dst + from);
                } else {
#pragma unroll
                    for (int e = 0; e < V; ++e) {
                        if (keep[e]) dst[dest + e] = dst[from + e];
                    }
                }
            };
            store_wrap_images(wrap, w0, w_end, image);
        }
    }
    return acc;
}

template <class T, int Dims, StencilKind Kind, int Unroll, int V, StencilSum Sum,
          bool Wraps = false>
__global__ void GRIDSIM_WALK_BOUNDS stencil_stream_vec_kernel(FieldView<const T> in,
                                                              FieldView<T> out, Box box,
                                                              HeatCoeffs<T> r, int points,
                                                              double* __restrict__ partial,
                                                              SelfWrap wrap, PackGroups groups) {
    const double acc = walk_packs<T, Dims, Kind, Unroll, V, Sum, Wraps>(
        in, out, box, r, points, BlockPlace::hardware(), wrap, groups);
    if constexpr (Sum != StencilSum::none) store_block_sum(acc, partial);
}

// Up to kMaxBoxes boxes in one launch (the shell slabs and the interior of a sweep that has no
// transfer to hide), each walked as by its own launch of the stream kernel: block b of the
// one-dimensional grid is block b - first[k] of box k (x fastest), its threads the first
// block[0] x block[1] of the launch's, so every box writes the same points and block partials,
// in the same order, as launches of the boxes one after another would.
constexpr int kMaxBoxes = 7;
struct BoxGrids {
    int count = 0;
    Box box[kMaxBoxes];
    unsigned grid[kMaxBoxes][2];  // blocks along x and y (z: the rest)
    int points[kMaxBoxes];        // walk-axis points per thread
    unsigned block[kMaxBoxes][2];
    unsigned first[kMaxBoxes + 1];
    PackGroups groups[kMaxBoxes];
};

// V > 1: walk_packs, V = 1: walk_points. Block b of the one-dimensional grid finds its box and
// its place in that box's grid.
template <class T, int Dims, StencilKind Kind, int Unroll, int V, StencilSum Sum>
__global__ void GRIDSIM_WALK_BOUNDS stencil_boxes_kernel(FieldView<const T> in, FieldView<T> out,
                                                         BoxGrids g, HeatCoeffs<T> r, SelfWrap wrap,
                                                         double* __restrict__ partial) {
    // The block's box, by constant indices only: a run-time index into the parameter would
    // copy it to local memory in every thread.
    Box box = g.box[0];
    unsigned first = 0;
    unsigned grid_x = g.grid[0][0];
    unsigned grid_y = g.grid[0][1];
    int points = g.points[0];
    PackGroups groups = g.groups[0];
    BlockPlace at;
    at.dx = g.block[0][0];
    at.dy = g.block[0][1];
#pragma unroll
    for (int k = 1; k < kMaxBoxes; ++k) {
        if (k < g.count && blockIdx.x >= g.first[k]) {
            box = g.box[k];
            first = g.first[k];
            grid_x = g.grid[k][0];
            grid_y = g.grid[k][1];
            points = g.points[k];
            groups = g.groups[k];
            at.dx = g.block[k][0];
            at.dy = g.block[k][1];
        }
    }
    const unsigned local = blockIdx.x - first;
    const unsigned row = local / grid_x;  // the block's (y, z) row of its box's grid
    at.bx = local - row * grid_x;
    if constexpr (Dims == 2) {
        at.by = row;  // a 2D box's grid is one block deep
        at.bz = 0;
    } else {
        at.bz = row / grid_y;
        at.by = row - at.bz * grid_y;
    }
    at.tx = threadIdx.x % at.dx;
    at.ty = threadIdx.x / at.dx;
    const unsigned threads = at.dx * at.dy;
    double acc = 0.0;
    if (threadIdx.x < threads) {
        if constexpr (V > 1) {
            acc = walk_packs<T, Dims, Kind, Unroll, V, Sum, true>(in, out, box, r, points, at, wrap,
                                                                  groups);
        } else {
            acc = walk_points<T, Dims, Kind, Unroll, Sum, true>(in, out, box, r, points, at, wrap);
        }
    }
    if constexpr (Sum != StencilSum::none)
        store_place_sum(acc, partial + blockIdx.x, threadIdx.x, threads);
}

// Shared-memory tiled walk (2.5D in 3D). Tile cell of thread (tx, ty): 3D (ty+1, tx+1) of a
// (bx+2) x (by+2) tile whose ring holds the x and y halo; 2D (ty, tx+1) of by rows of bx+2,
// one row per thread row. Two tiles alternate between steps: a thread that writes tile b at
// step q+2 has passed the barrier of step q+1, so every reader of tile b at step q is done.
// The walk-axis values are pipelined as in the stream kernel (`Unroll` loads ahead), and the
// ring cells an edge thread stages are loaded one step before they are stored, so no load
// latency sits between two barriers. Cells beyond box.hi + 1 are never read, so partial blocks
// load nothing out of bounds.
template <class T, int Dims, StencilKind Kind, int Unroll, StencilSum Sum>
__global__ void GRIDSIM_WALK_BOUNDS stencil_tiled_kernel(FieldView<const T> in, FieldView<T> out,
                                                         Box box, HeatCoeffs<T> r, int points,
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
#pragma unroll
        for (int g = 0; g < kRings; ++g) {
            if (ring[g]) ring_next[g] = src[p + ring_off[g]];
        }
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
                tile[cell] = centre;
#pragma unroll
                for (int g = 0; g < kRings; ++g) {
                    if (ring[g]) tile[cell + ring_cell[g]] = ring_next[g];
                }
                const bool next = w + 1 < s.w_end;
                if (active) {
                    above = ahead[u];
                    if (w + Unroll < s.w_end) ahead[u] = src[p + (Unroll + 1) * sw];
                } else if (next) {
                    above = src[p + sw];  // a cell just past the box: its next value
                }
#pragma unroll
                for (int g = 0; g < kRings; ++g) {
                    if (next && ring[g]) ring_next[g] = src[p + sw + ring_off[g]];
                }
            }
            __syncthreads();
            if (step && active) {
                T v;
                if constexpr (Dims == 3) {
                    v = stencil_point<T, 3, Kind>(centre, tile[cell - 1], tile[cell + 1],
                                                  tile[cell - tw], tile[cell + tw], below, above,
                                                  r);
                } else {
                    v = stencil_point<T, 2, Kind>(centre, tile[cell - 1], tile[cell + 1], below,
                                                  above, centre, centre, r);
                }
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

// Asks L2 to fetch the line at global address `p` (a hint: nothing waits for it).
__device__ __forceinline__ void prefetch_l2(const void* p) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(p)));
}

// A barrier for the first `threads` threads to arrive (whole warps): those of a block whose other
// warps have returned.
__device__ __forceinline__ void sync_warps(int threads) {
    asm volatile("bar.sync 0, %0;" ::"r"(threads) : "memory");
}

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

// Temporal blocking in 2D (Backend::apply_levels): `Levels` sweeps in one pass over memory. A
// block holds a tile of blockDim.x * V columns, V consecutive columns per thread, and writes the
// middle `stride` of them (the Levels columns on each side are computed redundantly, one fewer
// valid per level); it walks a chunk of `rows` output rows along y. Each step loads one input
// row and moves every level on by one row, level j lagging 2j rows behind the input: the three
// rows of level j - 1 that level j reads were made one, two and three steps earlier. A thread
// keeps them for its own columns in registers, and shares its first and last column through a
// ring of three shared rows per level: a row made at step t is read at step t + 2 and
// overwritten at step t + 3, so one barrier per step orders every access. A loaded row (level 0)
// goes into the ring a step after its load, still a step before it is read, so that no thread
// waits at the barrier for its load to arrive (ncu: 10% of the summing pass's stalls). The register
// rows rotate their roles every step (the step body is unrolled three times) instead of being
// copied. Points outside `live` (global Dirichlet points) keep their value at every level; the
// stencil is stencil_point with the stream kernel's arguments, so every point is bitwise the
// same as `Levels` sweeps of apply().
template <class T, int Levels, int V>
struct LevelsTile {
    using Rows = T[Levels][V];  // one value per level and column
    T* ring;                    // [3 slots][Levels][2 sides][blockDim.x + 2]
    int width;                  // blockDim.x + 2
    int tid;

    __device__ T* cell(int slot, int level, int side) const {
        return ring + ((slot * Levels + level) * 2 + side) * width + tid + 1;
    }
};

// kWhole: every row the block's walk reaches and every column of the warp is live, and each of
// its threads sums all its columns or none (levels_2d): no live test, and no sum that looks at
// single columns.
template <class T, StencilKind Kind, int Levels, int V, int Slot, bool kWhole, class Sums>
__device__ __forceinline__ void levels_step(const LevelsTile<T, Levels, V>& tile, int t,
                                            T (&newest)[Levels][V], T (&middle)[Levels][V],
                                            T (&oldest)[Levels][V], const T (&input)[V],
                                            const bool (&column_live)[V], int first,
                                            const Box& live, const HeatCoeffs<T>& r, T (&top)[V],
                                            Sums& sums) {
    // Level j reads level j - 1 of steps t - 1 (newest: the row above), t - 2 (middle: its own
    // row, and the neighbours' from ring slot (Slot + 1) % 3) and t - 3 (oldest: below), and
    // overwrites oldest[j]: going down the levels, nothing reads an entry after it is replaced.
    constexpr int kRead = (Slot + 1) % 3;
#pragma unroll
    for (int j = Levels; j >= 1; --j) {
        const int row = first + t - 2 * j;
        const bool row_live = kWhole || (row >= live.lo[1] && row < live.hi[1]);
        const T left = *(tile.cell(kRead, j - 1, 1) - 1);   // last column of the thread before
        const T right = *(tile.cell(kRead, j - 1, 0) + 1);  // first column of the thread after
        T v[V];
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const T c = middle[j - 1][e];
            const T xm = e == 0 ? left : middle[j - 1][e - 1];
            const T xp = e == V - 1 ? right : middle[j - 1][e + 1];
            v[e] =
                stencil_point<T, 2, Kind>(c, xm, xp, oldest[j - 1][e], newest[j - 1][e], c, c, r);
            if (!(row_live && (kWhole || column_live[e]))) v[e] = c;
        }
        sums.template add<kWhole>(j - 1, row, v, middle[j - 1]);
#pragma unroll
        for (int e = 0; e < V; ++e) {
            if (j == Levels) {
                top[e] = v[e];
            } else {
                oldest[j][e] = v[e];
            }
        }
        if (j < Levels) {
            *tile.cell(Slot, j, 0) = v[0];
            *tile.cell(Slot, j, 1) = v[V - 1];
        }
    }
    // The row loaded at step t - 1 (newest[0], zero before the first step) into its ring slot.
    *tile.cell((Slot + 2) % 3, 0, 0) = newest[0][0];
    *tile.cell((Slot + 2) % 3, 0, 1) = newest[0][V - 1];
#pragma unroll
    for (int e = 0; e < V; ++e) oldest[0][e] = input[e];
}

// A levels kernel that sums nothing.
struct NoLevelSums {
    template <bool kWhole, class T, int V>
    __device__ void add(int /*level*/, int /*row*/, const T (&)[V], const T (&)[V]) {}
};

// What a summing pass (Backend::apply_levels_summing) sums, laid out as the stream kernel's
// summing launches over the same boxes lay out their partials: the boxes are row slabs over the
// same columns [x_lo, x_hi), box b's launch has blocks of 32 packs (from x0 = pack_start(x_lo))
// by block_rows[b] rows, `points[b]` rows per thread, gx blocks across, its partials from
// first[b] on (block (x, y) at first[b] + y * gx + x); a level's partials follow the level
// before's, per_level apart. Rows per thread and per block are powers of two (log2 kept). Box
// 0 is the one with the most rows: the pass's row chunks start on its block rows, so no box
// straddles two chunks. At most kMaxBoxes boxes, as a sweep launches in one go.
struct LevelSumLayout {
    int count = 0;
    int lo[kMaxBoxes];
    int hi[kMaxBoxes];
    int points_log2[kMaxBoxes];
    int block_rows_log2[kMaxBoxes];
    unsigned first[kMaxBoxes];
    int x_lo = 0;
    int x_hi = 0;
    int x0 = 0;
    unsigned gx = 0;
    long long per_level = 0;
    double* partial = nullptr;
};

// Where row `r` sits in the layout: summed or not, whether it ends a thread's rows and a block's,
// and the partial slot of its block row (add the block's x index).
struct RowPlace {
    bool summed = false;
    bool chunk_end = false;
    bool block_end = false;
    unsigned slot = 0;
};

// Where row `r` sits: the boxes in turn, in an unrolled loop, so that every index into the
// kernel parameter is a constant (a run-time one would copy it to local memory).
__device__ inline RowPlace place_row(const LevelSumLayout& s, int r) {
    RowPlace p;
#pragma unroll
    for (int k = 0; k < kMaxBoxes; ++k) {
        if (p.summed || k >= s.count || r < s.lo[k] || r >= s.hi[k]) continue;
        const int rel = r - s.lo[k];
        const bool last = r == s.hi[k] - 1;
        const int points = 1 << s.points_log2[k];
        const int block_rows = 1 << s.block_rows_log2[k];
        p.summed = true;
        p.chunk_end = last || (rel & (points - 1)) == points - 1;
        p.block_end = last || (rel & (block_rows - 1)) == block_rows - 1;
        p.slot = s.first[k] + static_cast<unsigned>(rel >> s.block_rows_log2[k]) * s.gx;
    }
    return p;
}

// Where the rows of a block of a summing pass sit in the layout, one word per row of its walk (zero
// outside the rows it owns): bit 0 summed within a thread's rows, bit 1 summed at the end of a
// thread's rows, bit 2 the end of a stream block's rows, the rest the partial slot of the block
// row (place_row, looked up once per block instead of once per level and step).
__device__ __forceinline__ unsigned row_word(const RowPlace& p) {
    if (!p.summed) return 0u;
    return (p.slot << 3) | (p.block_end ? 4u : 0u) | (p.chunk_end ? 2u : 1u);
}

// A summing pass's tile: sum_pass_warps warps of 32 packs, 8 in float and 4 in double, laid out
// as PackGroups with a ring of ceil(kMaxLevels2d / V) packs on each side (the ring is as wide
// for every k, so that a residual sweep's blocks, which are laid out alike, sum the same packs
// whatever k a later pass takes). The ring's packs used to be threads of a warp of their own,
// which computed every level as the others do for a few columns: 1 / 9 of a float pass's stencil
// instructions and 1 / 5 of a double pass's; without it float passes ran 1.15 x and double ones
// 1.12 x faster at 16384^2. With 8 warps to a tile float passes ran 3-8% faster than with 4 at
// 4096^2-16384^2; double ones did not, with that warp or without it (16384^2 at 4 levels 602
// against 581 us per sweep, 3 levels 742 against 593; one H200, the git history of
// docs/performance.md).
constexpr int kMaxLevels2d = 8;
template <class T>
constexpr int sum_pass_warps() {
    return sizeof(T) == 4 ? 8 : 4;
}
template <class T>
constexpr int sum_pass_threads() {
    return 32 * sum_pass_warps<T>();
}
// A summing pass's tiles are as wide as the residual sweep's blocks lay them out, so a row's last
// tile may reach far past the box: at 4096^2 float, 1024 packs in tiles of 252 left 7 of the
// fifth tile's 8 warps nothing to do, and the pass ran 1.17 x slower than with tiles of 256.
// A float pass trims that tile: its idle warps leave (levels_2d); keeping them in the loop, each
// step's work behind a branch, made every pass 1.15 x slower. And its grid is (chunks, tiles):
// the GPU hands blocks out x fastest, so the last tile's blocks come after all the others
// instead of stacking full blocks on some multiprocessors (4096^2: 256 full blocks and 64 last
// ones, three to a multiprocessor: 35.7 us per sweep against 32.0), and the blocks running at
// once walk neighbouring chunks of a tile (16384^2: 352.8 us against 362.7 with the full tiles'
// blocks handed out tile fastest). A double pass's tiles are narrower (120 packs), its last one
// at most 1 / 18 of a row from 4096^2 on, and it ran faster untrimmed in the (tiles, chunks)
// grid: 16384^2 at 4 levels 570.5 against 581.3 us (one H200, the git history of
// docs/performance.md).
template <class T>
constexpr bool sum_pass_trims() {
    return sizeof(T) == 4;
}
// The rows a summing pass's chunks need before its warps take the whole-warp copy of the loop
// (levels_2d; 0: never). Float only, and chunks of at least 48 rows: the double 4-level pass ran
// 1.09 x slower at 4096^2 with both copies, and a float pass of 16-row chunks (2048^2) 1.11 x,
// two ranks sharing a GPU at 2048^2 and 4096^2 (8-32 rows) 1.2 x (one H200, the git history of
// docs/performance.md).
template <class T>
constexpr int sum_pass_whole_rows() {
    return sizeof(T) == 4 ? 48 : 0;
}
template <class T>
constexpr PackGroups sum_pass_groups() {
    constexpr int kV = 16 / static_cast<int>(sizeof(T));
    return {sum_pass_warps<T>(), (kMaxLevels2d + kV - 1) / kV};
}

// The sums of a summing pass, for a block whose warps hold the packs of PackGroups blocks in order
// (warp w: the packs stream block group + w sums, its ring lanes adding nothing). Each thread
// adds a level's terms over its own columns row by row, as the stream kernel's thread does over
// its `points` rows; where those rows end, the warp adds its threads' sums in store_place_sum's
// tree and lane 0 adds that to the level's block sum (in shared memory: warps in order, as
// store_place_sum adds them), which it stores as the partial where the stream block's rows end.
// The rows of a level reach those ends at the same step in every thread of the block, so the
// tree's shuffles are never divergent. A column outside the summed ones adds an exact zero (the
// sums are never -0), which leaves the sum's bits as skipping it would.
// Float: (double)now - (double)before, the stream kernel's change, is the float difference
// converted once wherever that difference is exact (|now - before| no larger than either, so
// Sterbenz's lemma holds, or both zero), which every point of a warp's level usually is: the
// conversions (16 per cycle and multiprocessor) were what the pass spent most on. The running
// sums live in shared memory: in registers, 8 levels took 195 per thread, and two blocks of 5
// warps fit a multiprocessor only at 168 (3 warps of a sub-partition share 16384).
template <class T, int Levels, int V>
struct LevelSums {
    static constexpr int kSumWarps = sum_pass_warps<T>();
    static constexpr int kSumThreads = sum_pass_threads<T>();
    // The rows of the block's walk that a level can reach, before y0 and after y1 (levels_2d).
    static constexpr int kRowsBefore = 3 * Levels;
    static constexpr int kRowsAfter = 2 * Levels;
    // Shared memory after the tile's ring: block_sums, then acc, then the row words.
    static constexpr int kSharedDoubles = Levels * (kSumWarps + kSumThreads);
    const LevelSumLayout& layout;
    double* block_sums;     // [Levels][kSumWarps], shared
    const unsigned* words;  // row_word of the walk's rows from row0 (0: not summed), shared
    double* acc;            // this thread's running sum of level l at acc[l * kSumThreads], shared
    int group;              // the stream block (x) of this thread's warp
    int row0;               // the walk's first row, y0 - kRowsBefore
    unsigned warp, lane;
    bool keep[V];  // columns summed: this tile's stored ones within the layout's

    // One shared load and, on the usual row (summed within a thread's rows), one test per level:
    // a row outside [y0, y1) has a zero word (comparing the row with y0 and y1 took more
    // instructions, SASS). kWhole (levels_step): a thread that sums none of its columns (the
    // ring's) adds their terms all the same, and its sum counts as zero where the warp adds its
    // threads' sums: the bits of adding nothing, without a select per column and level.
    template <bool kWhole>
    __device__ void add(int level, int row, const T (&now)[V], const T (&before)[V]) {
        const unsigned word = words[row - row0];
        double a = acc[level * kSumThreads];
        if ((word & 1u) != 0) {  // the usual row: one test
            add_terms<kWhole>(a, now, before);
            acc[level * kSumThreads] = a;
            return;
        }
        if ((word & 2u) == 0) return;
        add_terms<kWhole>(a, now, before);
        const double w = warp_tree_sum(kWhole && !keep[0] ? 0.0 : a, lane, 32);
        if (lane == 0) {
            double& b = block_sums[level * kSumWarps + warp];
            b += w;
            if ((word & 4u) != 0) {
                if (group >= 0 && group < static_cast<int>(layout.gx))
                    layout.partial[level * layout.per_level + (word >> 3) + group] = b;
                b = 0.0;
            }
        }
        acc[level * kSumThreads] = 0.0;
    }

    template <bool kWhole>
    __device__ void add_terms(double& a, const T (&now)[V], const T (&before)[V]) const {
        if constexpr (std::is_same_v<T, float>) {
            // d is exact where |d| <= min(|now|, |before|): then now and before have one sign
            // and lie within a factor 2 of each other (Sterbenz's lemma), or both are zero; a
            // rounded |d| cannot reach that bound from above (past twice the smaller value the
            // next float is two of its ulps on). One of them zero and the other not fails the
            // test and takes the path below: the same bits. In bitwise operators: short-circuit
            // ones compiled into a branch (and its convergence barrier) per column. A column
            // not summed has d = 0, which passes unless now and before are NaN, and then the
            // path below adds nothing for it.
            float d[V];
            bool exact = true;
#pragma unroll
            for (int e = 0; e < V; ++e) {
                d[e] = kWhole || keep[e] ? now[e] - before[e] : 0.0f;
                exact = exact & (fabsf(d[e]) <= fminf(fabsf(now[e]), fabsf(before[e])));
            }
            if (__all_sync(0xffffffffu, exact)) {
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const double x = d[e];
                    a = fma(x, x, a);
                }
                return;
            }
        }
#pragma unroll
        for (int e = 0; e < V; ++e) {
            if (kWhole || keep[e]) a += stencil_sum_term<StencilSum::change>(now[e], before[e]);
        }
    }
};

// The rows [y0, y1) that block y of `blocks` along y of a 2D levels launch over `box` owns:
// [anchor + y * rows, + rows), the first from box.lo[1] and the last to box.hi[1].
struct RowRange {
    int y0, y1;
};
__host__ __device__ inline RowRange level_block_rows(int y, int blocks, const Box& box, int anchor,
                                                     int rows) {
    return {y == 0 ? box.lo[1] : anchor + y * rows,
            y + 1 == blocks ? box.hi[1] : anchor + (y + 1) * rows};
}

// `lead`: columns of the tile before the stored ones (its left ring). Rows: level_block_rows.
// Summing (Sum = change): the tile is sum_pass_groups' (LevelSums); `group0`: the stream block of
// tile 0's first warp.
template <class T, StencilKind Kind, int Levels, int V, StencilSum Sum>
__device__ __forceinline__ void levels_2d(FieldView<const T> in, FieldView<T> out, const Box& box,
                                          const Box& live, const HeatCoeffs<T>& r, int x0,
                                          int stride, int lead, int row_anchor, int rows,
                                          const LevelSumLayout& sum_layout, int group0) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    constexpr bool kSums = Sum != StencilSum::none;
    constexpr bool kTrims = kSums && sum_pass_trims<T>();
    // A summing pass's block size is a constant, and so are its ring cells' offsets: from
    // blockDim.x they took integer multiplies at every access (SASS; the float pass ran 1.07 x
    // faster without them).
    const int threads = kSums ? sum_pass_threads<T>() : static_cast<int>(blockDim.x);
    LevelsTile<T, Levels, V> tile{reinterpret_cast<T*>(smem_raw), threads + 2,
                                  static_cast<int>(threadIdx.x)};
    // The block's tile and row chunk: (x, y) of the grid (tiles, chunks), but (y, x) of a float
    // summing pass's grid (chunks, tiles; sum_pass_trims).
    const int tile_index = static_cast<int>(kTrims ? blockIdx.y : blockIdx.x);
    const int chunk = static_cast<int>(kTrims ? blockIdx.x : blockIdx.y);
    const int chunks = static_cast<int>(kTrims ? gridDim.x : gridDim.y);
    const int tile_x = x0 + tile_index * stride;  // the tile's first column
    const int c0 = tile_x + V * tile.tid;         // this thread's first
    const RowRange own = level_block_rows(chunk, chunks, box, row_anchor, rows);
    const int y0 = own.y0;
    const int y1 = own.y1;
    const int first = y0 - Levels;  // the input row of step 0
    PackMask<T, V> loads;
    PackMask<T, V> stores;
    bool column_live[V];
#pragma unroll
    for (int e = 0; e < V; ++e) {
        const int c = c0 + e;
        loads.set(e, c >= box.lo[0] - Levels && c < box.hi[0] + Levels);
        stores.set(
            e, c >= tile_x + lead && c < tile_x + lead + stride && c >= box.lo[0] && c < box.hi[0]);
        column_live[e] = c >= live.lo[0] && c < live.hi[0];
    }
    using Summing = LevelSums<T, Levels, V>;
    using Sums = std::conditional_t<kSums, Summing, NoLevelSums>;
    double* block_sums =
        reinterpret_cast<double*>(smem_raw + 3 * Levels * 2 * (threads + 2) * sizeof(T));
    double* sum_acc = block_sums + Levels * Summing::kSumWarps;  // [Levels][kSumThreads]
    unsigned* words = reinterpret_cast<unsigned*>(block_sums + Summing::kSharedDoubles);
    Sums sums = [&] {
        if constexpr (kSums) {
            Summing s{sum_layout, block_sums, words, sum_acc + threadIdx.x};
            s.warp = threadIdx.x / 32;
            s.lane = threadIdx.x % 32;
            s.group = group0 + tile_index * Summing::kSumWarps + static_cast<int>(s.warp);
            s.row0 = y0 - Summing::kRowsBefore;
#pragma unroll
            for (int e = 0; e < V; ++e) {  // the summed boxes lie within the pass's box
                const int c = c0 + e;
                s.keep[e] = stores.on[e] && c >= sum_layout.x_lo && c < sum_layout.x_hi;
            }
#pragma unroll
            for (int l = 0; l < Levels; ++l) s.acc[l * Summing::kSumThreads] = 0.0;
            return s;
        } else {
            return NoLevelSums{};
        }
    }();
    const std::int64_t sy = in.ext.sy;
    const std::int64_t column = in.ext.index(c0, 0, 0);
    if (tile.tid < 6 * Levels) {  // the ring's edge cells, read only for columns never stored
        tile.ring[tile.tid * tile.width] = T(0);
        tile.ring[tile.tid * tile.width + tile.width - 1] = T(0);
    }
    // Trimmed (sum_pass_trims): the warps with no column the levels read ([lo - Levels, hi +
    // Levels)) leave after setting up (their ring cells, which the warps beside them read, hold
    // zeros), and the others' barriers count only them.
    bool works = true;
    int working = threads;  // the threads of the warps that work
    if constexpr (kTrims) {
        constexpr int kSpan = 32 * V;  // a warp's columns
        const int lo = box.lo[0] - Levels - tile_x;
        const int hi = box.hi[0] + Levels - tile_x;
        const int first_warp = lo <= 0 ? 0 : lo / kSpan;
        const int last_warp = min(threads / 32 - 1, (hi - 1) / kSpan);
        const int warp = static_cast<int>(threadIdx.x) / 32;
        works = warp >= first_warp && warp <= last_warp;
        working = 32 * (last_warp - first_warp + 1);
        if (!works) {
            for (int slot = 0; slot < 3; ++slot) {
                for (int l = 0; l < Levels; ++l) {
                    *tile.cell(slot, l, 0) = T(0);
                    *tile.cell(slot, l, 1) = T(0);
                }
            }
        }
    }
    if constexpr (kSums) {
        if (threadIdx.x < Levels * Summing::kSumWarps) block_sums[threadIdx.x] = 0.0;
        for (int row = sums.row0 + static_cast<int>(threadIdx.x); row < y1 + Summing::kRowsAfter;
             row += threads) {
            words[row - sums.row0] =
                row >= y0 && row < y1 ? row_word(place_row(sum_layout, row)) : 0u;
        }
    }
    __syncthreads();
    const int steps = (y1 - y0) + 3 * Levels;
    // A row is used a step after its load, which under load was not always long enough (ncu:
    // the pass's threads waited on it): the load also asks L2 for the row kAhead steps on.
    constexpr int kAhead = 2;
    const std::int64_t ahead = kAhead * sy;
    // The offset of row `row` in this thread's column. A summing pass keeps the rows it loads
    // and stores from step to step, one row further each call (a row's 64-bit offset took 7
    // instructions, SASS); the plain passes ran 5% faster computing it afresh.
    std::int64_t load_at = column + first * sy;                  // step 0's row
    std::int64_t store_at = column + (first - 2 * Levels) * sy;  // step 0's top level row
    auto offset = [&](std::int64_t& kept, int row) {
        if constexpr (kSums) {
            const std::int64_t at = kept;
            kept += sy;
            return at;
        } else {
            return column + row * sy;
        }
    };
    auto load = [&](int t, T(&v)[V]) {
        const int row = first + t;
        const std::int64_t at = offset(load_at, row);
        if (loads.all && row + kAhead < y1 + Levels) prefetch_l2(in.data + at + ahead);
        if (row < y1 + Levels) {
            loads.load(in.data + at, v);
        } else {
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = T(0);
        }
    };
    auto store = [&](int t, const T(&v)[V]) {
        const int row = first + t - 2 * Levels;
        const std::int64_t at = offset(store_at, row);
        if (stores.any && row >= y0 && row < y1) stores.store(out.data + at, v);
    };
    // A summing pass's loop in two copies (sum_pass_whole_rows): kWhole (levels_step) for a warp
    // whose walk's rows and columns are all live and whose threads each sum all their columns or
    // none (every warp but those at the domain's boundary or a box's x edge), so that its steps
    // test no point.
    auto walk = [&](auto whole) {
        constexpr bool kWhole = decltype(whole)::value;
        // Step t + Slot with the register rows in the roles that step gives them; its ring slot
        // is (t + Slot) % 3 = Slot, t staying a multiple of 3 at the top of the loop.
        auto step = [&](auto slot, int t, T(&newest)[Levels][V], T(&middle)[Levels][V],
                        T(&oldest)[Levels][V]) {
            constexpr int kSlot = decltype(slot)::value;
            T input[V];
            T top[V];
            load(t + kSlot, input);
            levels_step<T, Kind, Levels, V, kSlot, kWhole>(tile, t + kSlot, newest, middle, oldest,
                                                           input, column_live, first, live, r, top,
                                                           sums);
            store(t + kSlot, top);
            if constexpr (kTrims) {
                sync_warps(working);
            } else {
                __syncthreads();
            }
        };
        rotating_steps<T, Levels, V>(steps, step);
    };
    if (!works) return;
    if constexpr (kSums && sum_pass_whole_rows<T>() > 0) {
        // The walk's rows: level j makes rows first + t - 2 j for t in [0, steps).
        bool whole_warp = y0 - 3 * Levels >= live.lo[1] && y1 + 2 * Levels - 3 < live.hi[1];
#pragma unroll
        for (int e = 0; e < V; ++e)
            whole_warp = whole_warp && column_live[e] && sums.keep[e] == sums.keep[0];
        // A summing pass's blocks are whole warps.
        if (rows >= sum_pass_whole_rows<T>() && __all_sync(0xffffffffu, whole_warp)) {
            walk(std::true_type{});
            return;
        }
    }
    walk(std::false_type{});
}

template <class T, StencilKind Kind, int Levels, int V>
__global__ void stencil_levels_2d_kernel(FieldView<const T> in, FieldView<T> out, Box box, Box live,
                                         HeatCoeffs<T> r, int x0, int stride, int lead,
                                         int row_anchor, int rows) {
    levels_2d<T, Kind, Levels, V, StencilSum::none>(in, out, box, live, r, x0, stride, lead,
                                                    row_anchor, rows, LevelSumLayout{}, 0);
}

// The summing pass: sum_pass_threads threads. Its sums make it bound by instruction issue,
// waiting on each level's chain of dependent double adds, so warps to switch between are what it
// runs short of: the register cap sum_pass_blocks gives each (precision, levels) the most blocks
// per multiprocessor that spill nothing and were measured fastest (one H200, jacobi 2D with the
// residual every sweep; the git history of docs/performance.md). Measured with a warp more per
// block (the ring's): float 2 levels 3 blocks (70 registers), 3 and 4 levels 2 (85; 3 blocks at 72
// were 7% faster at 16384^2 and 8-10% slower at 4096^2 and 8192^2), more levels 1 (8 levels need
// about 200 registers); double 2 levels 6 blocks at 64 registers (4096^2 1.10 x faster than 2), 3
// levels 4 (at most 96 registers: uncapped the kernel took 102, which fits 3 blocks, and ran 1.25 x
// slower), more levels 2. Without that warp the same caps give float 2 and 3 levels 3 blocks
// (72 and 80 registers; 4 levels spill at 80 and keep 2 blocks) and double 2 levels 8 (62),
// 3 levels 5 (89), 4 levels 4 (at most 128 registers: uncapped the kernel took 139, which fits
// 3 blocks, and ran 1.14 x slower at 16384^2).
template <class T, int Levels>
constexpr int sum_pass_blocks() {
    if constexpr (sizeof(T) == 8)
        return Levels == 2 ? 8 : (Levels == 3 ? 5 : (Levels == 4 ? 4 : 2));
    if constexpr (Levels == 2) return 4;
    if constexpr (Levels == 3) return 3;
    if constexpr (Levels == 4) return 2;
    return 1;
}
template <class T, int Levels, int V>
__global__ void __launch_bounds__(sum_pass_threads<T>(), (sum_pass_blocks<T, Levels>()))
    stencil_levels_2d_sum_kernel(FieldView<const T> in, FieldView<T> out, Box box, Box live,
                                 HeatCoeffs<T> r, int x0, int stride, int lead, int row_anchor,
                                 int rows, LevelSumLayout sum_layout, int group0) {
    levels_2d<T, StencilKind::jacobi, Levels, V, StencilSum::change>(
        in, out, box, live, r, x0, stride, lead, row_anchor, rows, sum_layout, group0);
}

// Temporal blocking in 3D: `Levels` sweeps in one pass, streamed along z as the 2D kernel
// streams along y. A block of 32 x Rows threads holds a 32 V x Rows R x-y tile, V consecutive x
// points and R consecutive tile rows per thread, and writes its middle points, Levels in from
// each side (the ring around them is computed redundantly, one point fewer valid per level); it
// walks a chunk of `planes` output planes along z. Each step loads one input plane and moves
// every level on by one plane, level j lagging 2j planes behind the input, so that the three
// planes of level j - 1 that level j reads were made one, two and three steps earlier. A thread
// keeps its own points of those planes in registers (rotating roles, as in 2D); the x neighbours
// beyond its V points come from the lanes beside it (shuffles: the warp's end lanes are the
// tile's x ring, which goes invalid anyway), the y neighbours between its own R rows from its
// registers, and those beyond them through a ring of three shared planes per level (one barrier
// per step, the 2D argument), where each thread stores only its first and last row. Shared-memory
// and shuffle instructions are what bound the kernel (ncu: L1 pipes ~80% busy with one point per
// thread), so V points per thread share one shuffle per side and one 8- or 16-byte shared access
// per neighbour row, and R rows per thread halve (R = 2) the shared loads per point. A step's
// work is short next to a DRAM load, and the barrier made every step wait for its own input:
// each thread copies its input points into shared memory two steps ahead (cp.async; its own
// points only, so no barrier guards them; float at 2 levels went from 0.41 to 0.58 of the copy
// rate, double did not move). Every shared address is the thread's cell plus a constant and the
// global ones move by one plane per step (the first version spent most of its instructions on
// index arithmetic). Points outside `live` keep their value at every level; each point is
// stencil_point with the stream kernel's arguments, so `out` is bitwise that of `Levels` sweeps
// of apply().
template <class T, int Levels, int V, int R, int Rows>
struct LevelsPlanes {
    // Only a thread's first and last rows are read by other threads, so a level plane holds
    // those (kEdges rows per thread); an input plane holds all R rows.
    static constexpr int kEdges = R > 1 ? 2 : 1;
    static constexpr int kPlane = 32 * Rows * kEdges;  // packs of V points in a level plane
    static constexpr int kInputPlane = 32 * Rows * R;
    static constexpr std::size_t kBytes = (3 * Levels * kPlane + 3 * kInputPlane) * V * sizeof(T);
    using P = Pack<T, V>;
    P* cell;     // this thread's first row in [3 slots][Levels] level planes
    P* in_cell;  // and in the [3 slots] input planes after them

    __device__ LevelsPlanes(P* smem, int tx, int ty)
        : cell(smem + kEdges * ty * 32 + tx),
          in_cell(smem + 3 * Levels * kPlane + R * ty * 32 + tx) {}
    __device__ P* plane(int slot, int level) const {
        return cell + (slot * Levels + level) * kPlane;
    }
    __device__ P* input(int slot) const { return in_cell + slot * kInputPlane; }
    // Whether row q of a thread is kept in the level planes, and where, from its first row's.
    __device__ static constexpr bool kept(int q) { return q == 0 || q == R - 1; }
    __device__ static constexpr int edge(int q) { return q == 0 ? 0 : 32 * (kEdges - 1); }
};

template <class T, StencilKind Kind, int Levels, int V, int R, int Rows, int Slot>
__device__ __forceinline__ void levels_step_3d(
    const LevelsPlanes<T, Levels, V, R, Rows>& tile, int z_in, T (&newest)[Levels][R * V],
    T (&middle)[Levels][R * V], T (&oldest)[Levels][R * V], const Pack<T, V> (&input)[R],
    const bool (&column_live)[R * V], const Box& live, int down, int up, const HeatCoeffs<T>& r,
    Pack<T, V> (&top)[R]) {
    using Tile = LevelsPlanes<T, Levels, V, R, Rows>;
    constexpr int kRead = (Slot + 1) % 3;  // the slot written two steps ago
#pragma unroll
    for (int j = Levels; j >= 1; --j) {
        const int z = z_in - 2 * j;
        const bool plane_live = z >= live.lo[2] && z < live.hi[2];
        const T(&c)[R * V] = middle[j - 1];  // row q's point e at q * V + e
        const Pack<T, V>* mid = tile.plane(kRead, j - 1);
        const Pack<T, V> below = mid[down];                    // the row before the thread's first
        const Pack<T, V> above = mid[Tile::edge(R - 1) + up];  // the row after its last
        Pack<T, V> v[R];
#pragma unroll
        for (int q = 0; q < R; ++q) {
            const T left = __shfl_up_sync(0xffffffffu, c[q * V + V - 1], 1);
            const T right = __shfl_down_sync(0xffffffffu, c[q * V], 1);
#pragma unroll
            for (int e = 0; e < V; ++e) {
                const int at = q * V + e;
                const T xm = e == 0 ? left : c[at - 1];
                const T xp = e == V - 1 ? right : c[at + 1];
                const T ym = q == 0 ? below.v[e] : c[at - V];
                const T yp = q == R - 1 ? above.v[e] : c[at + V];
                v[q].v[e] = stencil_point<T, 3, Kind>(c[at], xm, xp, ym, yp, oldest[j - 1][at],
                                                      newest[j - 1][at], r);
                if (!(plane_live && column_live[at])) v[q].v[e] = c[at];
            }
        }
        if (j == Levels) {
#pragma unroll
            for (int q = 0; q < R; ++q) top[q] = v[q];
        } else {
#pragma unroll
            for (int q = 0; q < R; ++q) {
#pragma unroll
                for (int e = 0; e < V; ++e) oldest[j][q * V + e] = v[q].v[e];
                if (Tile::kept(q)) tile.plane(Slot, j)[Tile::edge(q)] = v[q];
            }
        }
    }
#pragma unroll
    for (int q = 0; q < R; ++q) {
#pragma unroll
        for (int e = 0; e < V; ++e) oldest[0][q * V + e] = input[q].v[e];
        if (Tile::kept(q)) tile.plane(Slot, 0)[Tile::edge(q)] = input[q];
    }
}

template <class T, StencilKind Kind, int Levels, int V, int R, int Rows>
__global__ void __launch_bounds__(32 * Rows, 1)
    stencil_levels_3d_kernel(FieldView<const T> in, FieldView<T> out, Box box, Box live,
                             HeatCoeffs<T> r, int planes) {
    using P = Pack<T, V>;
    using Tile = LevelsPlanes<T, Levels, V, R, Rows>;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    // Points a tile writes: along x a multiple of V (tiles start on a multiple of V, aligned
    // loads), along y every row but the ring's.
    constexpr int kStrideX = (32 * V - 2 * Levels) / V * V;
    constexpr int kStrideY = Rows * R - 2 * Levels;
    const int tx = static_cast<int>(threadIdx.x);
    const int row0 = R * static_cast<int>(threadIdx.y);  // the thread's first tile row
    const Tile tile(reinterpret_cast<P*>(smem_raw), tx, static_cast<int>(threadIdx.y));
    const int x0 = pack_start<V>(box.lo[0] - Levels);  // the first tile's first point
    const int tile_x = x0 + static_cast<int>(blockIdx.x) * kStrideX;
    const int i = tile_x + V * tx;
    const int j0 = box.lo[1] - Levels + static_cast<int>(blockIdx.y) * kStrideY + row0;
    const int z0 = box.lo[2] + static_cast<int>(blockIdx.z) * planes;
    const int z1 = min(z0 + planes, box.hi[2]);
    const int first = z0 - Levels;  // the input plane of step 0
    // A pack with a point a level reads is loaded whole (row padding and the field's slack
    // hold the rest; those points only feed the ring).
    bool loads[R];
    PackMask<T, V> stores[R];
    bool column_live[R * V];
#pragma unroll
    for (int q = 0; q < R; ++q) {
        const int j = j0 + q;
        loads[q] = i < box.hi[0] + Levels && j < box.hi[1] + Levels;
        const bool row_stores = row0 + q >= Levels && row0 + q < Levels + kStrideY && j < box.hi[1];
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const int c = i + e;
            stores[q].set(e, row_stores && c >= tile_x + Levels && c < tile_x + Levels + kStrideX &&
                                 c >= box.lo[0] && c < box.hi[0]);
            column_live[q * V + e] =
                c >= live.lo[0] && c < live.hi[0] && j >= live.lo[1] && j < live.hi[1];
        }
    }
    // The tile's first and last rows read their own row as the missing y neighbour: they are
    // ring points, invalid after the first level whatever they read.
    const int down = threadIdx.y > 0 ? -32 : 0;
    const int up = static_cast<int>(threadIdx.y) < Rows - 1 ? 32 : 0;
    const std::int64_t sy = in.ext.sy;
    const std::int64_t sz = in.ext.sz;
    // Dereferenced only where `loads` (load) and `stores` (store).
    const T* load_at = in.data + in.ext.index(i, j0, first);
    T* store_at = out.data + in.ext.index(i, j0, first - 2 * Levels);
    // The level planes start at zero (the first steps' reads of planes not yet made); the input
    // slots are read only where a copy filled them.
    for (int c = 0; c < 3 * Levels; ++c) {
#pragma unroll
        for (int q = 0; q < Tile::kEdges; ++q) tile.cell[c * Tile::kPlane + 32 * q] = P{};
    }
    const int steps = (z1 - z0) + 3 * Levels;
    const int load_steps = (z1 + Levels) - first;
    // Step s's input packs into input slot s % 3, one copy group per step (empty past the box).
    auto prefetch = [&](int s, int slot) {
#pragma unroll
        for (int q = 0; q < R; ++q) {
            if (loads[q] && s < load_steps)
                __pipeline_memcpy_async(tile.input(slot) + 32 * q, load_at + q * sy, sizeof(P));
        }
        __pipeline_commit();
        load_at += sz;
    };
    prefetch(0, 0);
    prefetch(1, 1);
    __syncthreads();
    auto step = [&](auto slot, int t, T(&newest)[Levels][R * V], T(&middle)[Levels][R * V],
                    T(&oldest)[Levels][R * V]) {
        constexpr int kSlot = decltype(slot)::value;
        const int s = t + kSlot;
        __pipeline_wait_prior(1);  // step s's group is complete, s + 1's may not be
        P input[R];
#pragma unroll
        for (int q = 0; q < R; ++q)
            input[q] = loads[q] && s < load_steps ? tile.input(kSlot)[32 * q] : P{};
        prefetch(s + 2, (kSlot + 2) % 3);  // the slot read one step ago
        P top[R];
        levels_step_3d<T, Kind, Levels, V, R, Rows, kSlot>(
            tile, first + s, newest, middle, oldest, input, column_live, live, down, up, r, top);
        const int z_out = first + s - 2 * Levels;
        if (z_out >= z0 && z_out < z1) {
#pragma unroll
            for (int q = 0; q < R; ++q)
                if (stores[q].any) stores[q].store(store_at + q * sy, top[q].v);
        }
        store_at += sz;
        __syncthreads();
    };
    rotating_steps<T, Levels, R * V>(steps, step);
}

// One thread per point of a box, grid-stride; op(t, i, j, k) gets the point's position t in the
// box (x fastest) and its indices. Copies between a box and a contiguous buffer, and fills.
template <class Op>
__global__ void box_kernel(Box b, long long n, Op op) {
    const int nx = b.hi[0] - b.lo[0];
    const int ny = b.hi[1] - b.lo[1];
    for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < n;
         t += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long row = t / nx;
        op(t, b.lo[0] + static_cast<int>(t % nx), b.lo[1] + static_cast<int>(row % ny),
           b.lo[2] + static_cast<int>(row / ny));
    }
}

// The faces of a faces_kernel launch in its one index range: where each face's points start
// (at[count] and every entry after it: the total), and its x and y extents as divisors.
struct FaceLayout {
    long long at[FaceMoves<float>::kMaxFaces + 1];
    FastDivide nx[FaceMoves<float>::kMaxFaces];
    FastDivide ny[FaceMoves<float>::kMaxFaces];
};

// Threads of a faces_kernel block, and the registers they may use: 128 threads at 32 registers
// fit in what a multiprocessor has left beside a block of the 3D levels kernel (768 threads at
// 80 registers leave 4096), so that a move issued while an interior pass fills the GPU runs
// beside it instead of waiting until one of the pass's blocks ends: two ranks sharing one H200,
// heat 512^3 at k = 3, 352-356 us per step against 368-374 with 256-thread blocks
// (the git history of docs/performance.md, "Halo moves beside a pass"). A 2D levels pass (3 blocks
// of 128 threads at 168 registers per multiprocessor) leaves 1024, too few for any move.
constexpr int kFaceThreads = 128;
constexpr int kFaceBlocksPerSm = 16;  // 65536 registers / (128 x 16): 32 per thread

// Every face of `m` in one launch, grid-stride: thread t finds its face by the running point
// counts, then its point in that face's box (x fastest), and calls op(m, face, position in the
// face, i, j, k). The counts are read at constant indices only: indexed by run-time values (the
// face found so far, the face count) they were copied to local memory in every thread, whose stores
// kept L2 busy (a pair of 3 x 518 x 518 double faces took 27 us against 12 now;
// the git history of docs/performance.md, "Halo moves"). The divisions by the face's extents are
// FastDivide's; a position within a face is below 2^31 (launch_faces checks).
template <class T, class Op>
__global__ void __launch_bounds__(kFaceThreads, kFaceBlocksPerSm)
    faces_kernel(FaceMoves<T> m, FaceLayout layout, Op op) {
    const long long n = layout.at[FaceMoves<T>::kMaxFaces];
    for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < n;
         t += static_cast<long long>(gridDim.x) * blockDim.x) {
        int f = 0;
        long long first = 0;
#pragma unroll
        for (int g = 1; g < FaceMoves<T>::kMaxFaces; ++g) {
            if (t >= layout.at[g]) {
                f = g;
                first = layout.at[g];
            }
        }
        const Box b = m.box[f];
        const auto local = static_cast<unsigned>(t - first);
        const FastDivide nx = layout.nx[f];
        const FastDivide ny = layout.ny[f];
        const unsigned row = nx.quotient(local);
        const unsigned plane = ny.quotient(row);
        op(m, f, local, b.lo[0] + static_cast<int>(local - row * nx.divisor()),
           b.lo[1] + static_cast<int>(row - plane * ny.divisor()),
           b.lo[2] + static_cast<int>(plane));
    }
}

template <class T>
struct PackFaces {  // box -> buffer
    FieldView<const T> u;
    __device__ void operator()(const FaceMoves<T>& m, int f, long long t, int i, int j,
                               int k) const {
        m.buf[f][t] = u(i, j, k);
    }
};

template <class T>
struct UnpackFaces {  // buffer -> box
    FieldView<T> u;
    __device__ void operator()(const FaceMoves<T>& m, int f, long long t, int i, int j,
                               int k) const {
        u(i, j, k) = m.buf[f][t];
    }
};

template <class T>
struct WrapFaces {  // box <- the points shift away in the same field
    FieldView<T> u;
    __device__ void operator()(const FaceMoves<T>& m, int f, long long, int i, int j, int k) const {
        u(i, j, k) = u(i + m.shift[f][0], j + m.shift[f][1], k + m.shift[f][2]);
    }
};

template <class T>
struct FillOp {
    FieldView<T> u;
    T value;
    __device__ void operator()(long long, int i, int j, int k) const { u(i, j, k) = value; }
};

// p = z + b p over a box: blockIdx.y strides over the box's rows (one division per row, not per
// point), each thread takes Points points of its row blockDim.x apart and loads all of them
// before it stores any. (One thread per point with 64-bit index arithmetic per point reached 64%
// of DRAM peak in ncu, against 83% for cuBLAS axpy.)
template <class T, int Points>
__global__ void xpay_kernel(FieldView<const T> z, T b, FieldView<T> p, Box box) {
    const int ny = box.hi[1] - box.lo[1];
    const int rows = ny * (box.hi[2] - box.lo[2]);
    const int first = box.lo[0] + static_cast<int>(blockIdx.x * Points * blockDim.x + threadIdx.x);
    for (int row = static_cast<int>(blockIdx.y); row < rows; row += static_cast<int>(gridDim.y)) {
        const int j = box.lo[1] + row % ny;
        const int k = box.lo[2] + row / ny;
        T zv[Points];
        T pv[Points];
#pragma unroll
        for (int u = 0; u < Points; ++u) {
            const int i = first + u * static_cast<int>(blockDim.x);
            if (i < box.hi[0]) {
                zv[u] = z(i, j, k);
                pv[u] = p(i, j, k);
            }
        }
#pragma unroll
        for (int u = 0; u < Points; ++u) {
            const int i = first + u * static_cast<int>(blockDim.x);
            if (i < box.hi[0]) p(i, j, k) = xpay_value(zv[u], b, pv[u]);
        }
    }
}

}  // namespace gridsim::cuda
