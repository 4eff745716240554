// The stream walk for stars that are not plain (kPlainStar: wider than one point, or reading a
// coefficient field, whose star it reads through L1 at the same index): a thread walks
// `points` consecutive points along the slowest axis (y in 2D, z in 3D) carrying the 2R + 1
// values of that axis around its point in registers, so each of them comes from DRAM once; the
// other axes' neighbours come through L1 from the threads beside it. It fills the same Star the
// naive kernel gathers (stencil_at), so both give the same bits. The stream kernel of plain stars
// (stream_kernels.cuh) keeps its own code.
#pragma once

#include "kernels/cuda/walk_common.cuh"

namespace gridsim::cuda {

// Where the launch's threads start over `box`: a 3D sweep that sums nothing from the 32-byte
// memory sector at or below the box's first column (pack_start), so that each warp's row touches
// the fewest sectors, its threads left of the box idle; a 2D sweep (its float and order 8 sweeps
// slower from a sector: docs/tuning.md, "Stars that are not plain") and a summing sweep (so that
// its blocks, and the sums they make, stay as they were) from the box's first column.
template <class T, int Dims, StencilSum Sum>
__host__ __device__ Box wide_walk_from(Box box) {
    if constexpr (Dims == 3 && Sum == StencilSum::none)
        box.lo[0] = pack_start<kSectorPoints<T>>(box.lo[0]);
    return box;
}

template <class T, int Dims, class S, StencilSum Sum>
__global__ void GRIDSIM_WALK_BOUNDS stencil_wide_stream_kernel(FieldView<const T> in,
                                                               FieldView<T> out, Box box,
                                                               PointCoeffs<S, T> r, int points,
                                                               double* __restrict__ partial) {
    constexpr int R = S::kRadius;
    constexpr int kWalk = Dims - 1;  // the walk axis
    const WalkStart<Dims> s(wide_walk_from<T, Dims, Sum>(box), points);
    double acc = 0.0;
    if (s.i >= box.lo[0] && s.owns_point(box) && s.w0 < s.w_end) {
        const T* __restrict__ src = in.data;
        T* __restrict__ dst = out.data;
        const std::int64_t stride[3] = {1, in.ext.sy, in.ext.sz};
        const std::int64_t sw = stride[kWalk];
        std::int64_t p = s.first_index(in.ext);
        T q[2 * R + 1];  // the walk axis at offsets -R..R from the point
#pragma unroll
        for (int o = 0; o < 2 * R; ++o) q[o] = src[p + (o - R) * sw];
#pragma unroll 2
        for (int w = s.w0; w < s.w_end; ++w) {
            q[2 * R] = src[p + R * sw];
            Star<T, R> star(q[R]);
#pragma unroll
            for (int o = 1; o <= R; ++o) {
                star.set(kWalk, -o, q[R - o]);
                star.set(kWalk, o, q[R + o]);
#pragma unroll
                for (int d = 0; d < kWalk; ++d) {
                    star.set(d, -o, src[p - o * stride[d]]);
                    star.set(d, o, src[p + o * stride[d]]);
                }
            }
            const T v = apply_point<T, Dims, S>(star, p, stride, r);
            dst[p] = v;
            if constexpr (Sum != StencilSum::none) acc += stencil_sum_term<Sum>(v, q[R]);
#pragma unroll
            for (int o = 0; o < 2 * R; ++o) q[o] = q[o + 1];
            p += sw;
        }
    }
    if constexpr (Sum != StencilSum::none) store_block_sum(acc, partial);
}

}  // namespace gridsim::cuda
