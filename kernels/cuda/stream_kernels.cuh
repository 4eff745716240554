// CUDA stencil kernels. __global__ appears only in kernels/cuda/. Every variant computes a point
// through stencil_point() of kernels/stencil.hpp, so all give the same bits, and the math is the
// CPU backend's.
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
//            ring in 3D, as wide as the star's radius) staged in shared memory,
//            double-buffered: one barrier per step; it takes any stencil (tiled_kernel.cuh).
// stencil_boxes_kernel walks several boxes (a residual sweep's shell slabs and interior) in one
// launch, each block as the stream kernel's launch of its box would.
// With a `Sum` other than none a kernel also sums stencil_sum_term over its points ((out - in)^2
// for jacobi's residual, in * out for the CG's p . A p), in double, and each block writes one
// partial; the backend later adds the partials in a fixed order.
#pragma once

#include "kernels/cuda/walk_common.cuh"

namespace gridsim::cuda {

template <class T, int Dims, class S, int Rows, StencilSum Sum>
__global__ void stencil_naive_kernel(FieldView<const T> in, FieldView<T> out, Box box,
                                     PointCoeffs<S, T> r, double* __restrict__ partial) {
    const int i = box.lo[0] + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    const int j0 = box.lo[1] + static_cast<int>(blockIdx.y * blockDim.y * Rows + threadIdx.y);
    const int k = box.lo[2] + static_cast<int>(blockIdx.z);
    double acc = 0.0;
    if (i < box.hi[0]) {
        T v[Rows];
#pragma unroll
        for (int p = 0; p < Rows; ++p) {
            const int j = j0 + p * static_cast<int>(blockDim.y);
            if (j < box.hi[1]) v[p] = stencil_at<T, Dims, S>(in, i, j, k, r);
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

// The stream kernel's walk of one thread (see stencil_stream_kernel), returning its sum.
template <class T, int Dims, class S, int Unroll, StencilSum Sum, bool Wraps>
__device__ __forceinline__ double walk_points(FieldView<const T> in, FieldView<T> out,
                                              const Box& box, const AxisCoeffs<T>& r, int points,
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
                    v = stencil_point<T, 3, S>(centre, src[pu - 1], src[pu + 1], src[pu - sy],
                                               src[pu + sy], below, above, r);
                } else {
                    v = stencil_point<T, 2, S>(centre, src[pu - 1], src[pu + 1], below, above,
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
template <class T, int Dims, class S, int Unroll, StencilSum Sum, bool Wraps = false>
__global__ void GRIDSIM_WALK_BOUNDS stencil_stream_kernel(FieldView<const T> in, FieldView<T> out,
                                                          Box box, AxisCoeffs<T> r, int points,
                                                          double* __restrict__ partial,
                                                          SelfWrap wrap) {
    const double acc = walk_points<T, Dims, S, Unroll, Sum, Wraps>(in, out, box, r, points,
                                                                   BlockPlace::hardware(), wrap);
    if constexpr (Sum != StencilSum::none) store_block_sum(acc, partial);
}

// One pack's stencil from its centre, the x neighbours beyond it (left, right), the packs beside
// it along y (3D: ym, yp) and along the walk axis (below, above); the kept points' sum terms are
// added to acc.
template <class T, int Dims, class S, int V, StencilSum Sum>
__device__ __forceinline__ Pack<T, V> stencil_pack(const Pack<T, V>& centre, T left, T right,
                                                   const Pack<T, V>& ym, const Pack<T, V>& yp,
                                                   const Pack<T, V>& below, const Pack<T, V>& above,
                                                   const AxisCoeffs<T>& r, const bool (&keep)[V],
                                                   double& acc) {
    Pack<T, V> v;
#pragma unroll
    for (int e = 0; e < V; ++e) {
        const T xm = e == 0 ? left : centre.v[e - 1];
        const T xp = e == V - 1 ? right : centre.v[e + 1];
        if constexpr (Dims == 3) {
            v.v[e] = stencil_point<T, 3, S>(centre.v[e], xm, xp, ym.v[e], yp.v[e], below.v[e],
                                            above.v[e], r);
        } else {
            v.v[e] = stencil_point<T, 2, S>(centre.v[e], xm, xp, below.v[e], above.v[e],
                                            centre.v[e], centre.v[e], r);
        }
        if constexpr (Sum != StencilSum::none) {
            if (keep[e]) acc += stencil_sum_term<Sum>(v.v[e], centre.v[e]);
        }
    }
    return v;
}

// A pack's kept points: one vector store where the whole pack is kept (`whole`).
template <class T, int V>
__device__ __forceinline__ void store_pack(T* at, const Pack<T, V>& v, const bool (&keep)[V],
                                           bool whole) {
    if (whole) {
        *reinterpret_cast<Pack<T, V>*>(at) = v;
    } else {
#pragma unroll
        for (int e = 0; e < V; ++e) {
            if (keep[e]) at[e] = v.v[e];
        }
    }
}

// The stream kernel with V consecutive x points per thread, moved as 16-byte vector loads and
// stores: a thread's pack starts at an x index that is a multiple of V (rows are aligned, so
// the address is too). Per pack and step it loads one walk-axis pack, the two y-neighbour packs
// (3D) and the two x neighbours beyond the pack, instead of 3 to 5 scalar loads per point.
// Points of a pack outside the box are read but never written.
// Its walk of one thread (`at`: see BlockPlace), returning the thread's sum.
template <class T, int Dims, class S, int Unroll, int V, StencilSum Sum, bool Wraps>
__device__ __forceinline__ double walk_packs(FieldView<const T> in, FieldView<T> out,
                                             const Box& box, const AxisCoeffs<T>& r, int points,
                                             const BlockPlace& at, SelfWrap wrap,
                                             PackGroups groups) {
    using P = Pack<T, V>;
    const int x0 = pack_start<V>(box.lo[0]);
    const int pack = walk_pack(at.bx, at.dx, at.tx, groups);
    const int i = x0 + V * pack;
    const int row = static_cast<int>(at.by * at.dy + at.ty);  // 3D: y; 2D: its walk
    const int j = Dims == 3 ? box.lo[1] + row : 0;
    const int w0 =
        Dims == 3 ? box.lo[2] + static_cast<int>(at.bz) * points : box.lo[1] + row * points;
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
                const P v = stencil_pack<T, Dims, S, V, Sum>(centre, left, right, ym, yp, below,
                                                             above, r, keep, acc);
                store_pack(dst + pu, v, keep, whole);
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

template <class T, int Dims, class S, int Unroll, int V, StencilSum Sum, bool Wraps = false>
__global__ void GRIDSIM_WALK_BOUNDS stencil_stream_vec_kernel(FieldView<const T> in,
                                                              FieldView<T> out, Box box,
                                                              AxisCoeffs<T> r, int points,
                                                              double* __restrict__ partial,
                                                              SelfWrap wrap, PackGroups groups) {
    const double acc = walk_packs<T, Dims, S, Unroll, V, Sum, Wraps>(
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
template <class T, int Dims, class S, int Unroll, int V, StencilSum Sum>
__global__ void GRIDSIM_WALK_BOUNDS stencil_boxes_kernel(FieldView<const T> in, FieldView<T> out,
                                                         BoxGrids g, AxisCoeffs<T> r, SelfWrap wrap,
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
            acc = walk_packs<T, Dims, S, Unroll, V, Sum, true>(in, out, box, r, points, at, wrap,
                                                               groups);
        } else {
            acc = walk_points<T, Dims, S, Unroll, Sum, true>(in, out, box, r, points, at, wrap);
        }
    }
    if constexpr (Sum != StencilSum::none)
        store_place_sum(acc, partial + blockIdx.x, threadIdx.x, threads);
}

}  // namespace gridsim::cuda
