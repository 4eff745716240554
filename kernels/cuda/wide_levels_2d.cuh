// Temporal blocking in 2D for wide stars (radius R > 1, constant coefficients): L sweeps in one
// pass over a tile held in shared memory. A block of 32 x kWide2dThreadRows threads copies a
// footprint of kWide2dX x kWide2dY points of the input into shared memory (cp.async) and makes
// level l of the points l R in from each side, from the level below, into the other of two
// shared tiles; it writes the middle of level L, L R points in from each side, to `out` (the
// ring around it is computed redundantly, R points fewer valid per level). A thread makes
// columns lane + 32 c of a strip of kWide2dY / kWide2dThreadRows rows, walking down each column
// with the 2R + 1 values along y in registers; the x neighbours come from the shared tile. One
// barrier a level.
//
// Between levels the pass reflects beyond the fixed faces as Backend::reflect does after a
// sweep (FaceMoves' mirror entries, in their order, a barrier each): a ghost whose image lies in
// the level's points is 2 u(q) - u(p), q the face's point between them (not live: the input's
// value at every level). Only blocks whose footprint meets a face look at it. Points outside
// `live` keep their value at every level; each point is S's point function of the Star every
// other kernel fills, so `out` is bitwise that of L sweeps of apply() and their reflections.
#pragma once

#include <cuda_pipeline_primitives.h>

#include "kernels/backend.hpp"
#include "kernels/cuda/wide_reflections.cuh"

namespace gridsim::cuda {

// The footprint and the threads that make it.
constexpr int kWide2dX = 64;
constexpr int kWide2dY = 64;
constexpr int kWide2dThreadRows = 8;
// The most levels of a 2D pass of a wide star (docs/tuning.md, "Wide stars in 2D time blocks").
constexpr int kMaxWideLevels2d = 3;

template <class S>
inline constexpr bool kWideLevels2dStencil = (S::kRadius > 1) && !kReadsField<S>;

template <class T, int R, int L>
struct WideTile2d {
    static constexpr int kX = kWide2dX;
    static constexpr int kY = kWide2dY;
    static constexpr int kRing = L * R;
    static constexpr int kStrideX = kX - 2 * kRing;  // columns a tile writes
    static constexpr int kStrideY = kY - 2 * kRing;  // rows a tile writes
    static_assert(kStrideX > 0 && kStrideY > 0, "wide levels 2D: the ring fills the footprint");
    static constexpr int kThreads = 32 * kWide2dThreadRows;
    static constexpr int kColumns = kX / 32;              // a thread's columns, lane + 32 c
    static constexpr int kRows = kY / kWide2dThreadRows;  // a thread's strip of rows
    static constexpr int kPoints = kX * kY;
    static constexpr std::size_t kBytes = std::size_t{2} * kPoints * sizeof(T);
    // Whether v (a column, or a row: k = kX or kY) holds level l's points: [l R, k - l R).
    __device__ static constexpr bool holds(int l, int v, int k) {
        return v >= l * R && v < k - l * R;
    }
};

// The footprint at (fx, fy) of a 2D wide pass, and where its level l lives in shared memory.
template <class T, class S, int L>
struct WideSheet {
    static constexpr int R = S::kRadius;
    using Tile = WideTile2d<T, R, L>;
    T* smem;
    int fx, fy;
    const Box& live;
    __device__ T* tile(int l) const { return smem + (l & 1) * Tile::kPoints; }

    // Level l's column x of the thread's rows from level l - 1 (`src`): into `dst`, or for
    // l = L, the points the tile writes into `to` (point (fx, fy) of `out`, row stride sy).
    __device__ void make_column(int l, int x, int row0, const T* src, T* dst, T* to,
                                std::int64_t sy, int hi_x, int hi_y,
                                const PointCoeffs<S, T>& r) const {
        T w[2 * R + 1];  // rows y - R .. y + R of column x
        auto at = [&](int y) { return src[min(max(y, 0), Tile::kY - 1) * Tile::kX + x]; };
#pragma unroll
        for (int o = 0; o < 2 * R; ++o) w[o + 1] = at(row0 - R + o);
        const int gx = fx + x;
        const bool column_live = gx >= live.lo[0] && gx < live.hi[0];
#pragma unroll
        for (int q = 0; q < Tile::kRows; ++q) {
#pragma unroll
            for (int o = 0; o < 2 * R; ++o) w[o] = w[o + 1];
            const int y = row0 + q;
            w[2 * R] = at(y + R);
            if (!Tile::holds(l, y, Tile::kY)) continue;
            const int gy = fy + y;
            T value = w[R];
            if (column_live && gy >= live.lo[1] && gy < live.hi[1]) {
                const T* row = src + y * Tile::kX + x;
                Star<T, R> star(w[R]);
#pragma unroll
                for (int o = 1; o <= R; ++o) {
                    star.set(0, -o, row[-o]);
                    star.set(0, o, row[o]);
                    star.set(1, -o, w[R - o]);
                    star.set(1, o, w[R + o]);
                }
                value = S::template point<2>(star, r);
            }
            if (l < L) {
                dst[y * Tile::kX + x] = value;
            } else if (x >= Tile::kRing && x < Tile::kRing + Tile::kStrideX && y >= Tile::kRing &&
                       y < Tile::kRing + Tile::kStrideY && gx < hi_x && gy < hi_y) {
                to[y * sy + x] = value;
            }
        }
    }

    // The ghosts of mirror f in level l's points whose images are there too, shared out among
    // the block's threads (a barrier follows).
    __device__ void reflect(int l, const WideMirrors& m, int f, T* u) const {
        const Box& b = m.box[f];
        const int x0 = max(b.lo[0] - fx, l * R), x1 = min(b.hi[0] - fx, Tile::kX - l * R);
        const int y0 = max(b.lo[1] - fy, l * R), y1 = min(b.hi[1] - fy, Tile::kY - l * R);
        const int nx = x1 - x0;
        if (nx <= 0 || y1 <= y0) return;
        const int a = m.axis[f];
        const int q = m.plane[f] - (a == 0 ? fx : fy);
        const int thread = static_cast<int>(threadIdx.y * 32 + threadIdx.x);
        for (int i = thread; i < nx * (y1 - y0); i += Tile::kThreads) {
            const int x = x0 + i % nx;
            const int y = y0 + i / nx;
            const int along = a == 0 ? x : y;
            const int image = 2 * q - along;
            if (!Tile::holds(l, image, a == 0 ? Tile::kX : Tile::kY)) continue;
            const int step = a == 0 ? 1 : Tile::kX;
            const int g = y * Tile::kX + x;
            u[g] = T(2) * u[g + (q - along) * step] - u[g + (image - along) * step];
        }
    }
};

// Tile (blockIdx.x, blockIdx.y) of a pass of L levels over `box`.
template <class T, class S, int L>
__global__ void __launch_bounds__(32 * kWide2dThreadRows, 2)
    stencil_wide_levels_2d_kernel(FieldView<const T> in, FieldView<T> out, Box box, Box live,
                                  PointCoeffs<S, T> r, WideMirrors m) {
    using Sheet = WideSheet<T, S, L>;
    using Tile = typename Sheet::Tile;
    static_assert(kWideLevels2dStencil<S>, "wide levels: wide stars, no field");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int fx = box.lo[0] - Tile::kRing + static_cast<int>(blockIdx.x) * Tile::kStrideX;
    const int fy = box.lo[1] - Tile::kRing + static_cast<int>(blockIdx.y) * Tile::kStrideY;
    const Sheet sheet{reinterpret_cast<T*>(smem_raw), fx, fy, live};
    const int lane = static_cast<int>(threadIdx.x);
    const int row0 = static_cast<int>(threadIdx.y) * Tile::kRows;
    const FieldExtents& e = in.ext;
    // The input's footprint within the field's ring of the box, into level 0's tile.
    T* input = sheet.tile(0);
    for (int q = 0; q < Tile::kRows; ++q) {
        const int y = row0 + q;
        if (fy + y >= box.hi[1] + Tile::kRing) break;
#pragma unroll
        for (int c = 0; c < Tile::kColumns; ++c) {
            const int x = lane + 32 * c;
            if (fx + x < box.hi[0] + Tile::kRing)
                __pipeline_memcpy_async(input + y * Tile::kX + x,
                                        in.data + e.index(fx + x, fy + y, 0), sizeof(T));
        }
    }
    __pipeline_commit();
    unsigned faces = 0;  // by bit f: the mirrors whose boxes meet the footprint
    for (int f = 0; f < m.count; ++f) {
        const Box& b = m.box[f];
        if (b.lo[0] < fx + Tile::kX && b.hi[0] > fx && b.lo[1] < fy + Tile::kY && b.hi[1] > fy)
            faces |= 1u << f;
    }
    T* to = out.data + e.index(fx, fy, 0);
    __pipeline_wait_prior(0);
    __syncthreads();
#pragma unroll 1
    for (int l = 1; l <= L; ++l) {
        const T* src = sheet.tile(l - 1);
        T* dst = sheet.tile(l);
#pragma unroll
        for (int c = 0; c < Tile::kColumns; ++c) {
            const int x = lane + 32 * c;
            if (!Tile::holds(l, x, Tile::kX)) continue;
            sheet.make_column(l, x, row0, src, dst, to, e.sy, box.hi[0], box.hi[1], r);
        }
        if (l == L) break;
        __syncthreads();
        for (int f = 0; f < m.count; ++f) {
            if (!(faces >> f & 1u)) continue;
            sheet.reflect(l, m, f, dst);
            __syncthreads();
        }
    }
}

// The tiles of a 2D wide pass of L levels over a box's points [lo, hi) along x (axis 0) or y.
template <class T, int R, int L>
constexpr long long wide_levels_2d_tiles(int lo, int hi, int axis) {
    using Tile = WideTile2d<T, R, L>;
    const long long stride = axis == 0 ? Tile::kStrideX : Tile::kStrideY;
    return (hi - lo + stride - 1) / stride;
}

}  // namespace gridsim::cuda
