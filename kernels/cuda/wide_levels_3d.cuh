// Temporal blocking in 3D for wide stars (radius R > 1, constant coefficients): L sweeps in one
// pass, streamed along z. A block of 32 x kWideThreadRows threads holds a footprint of
// kWideColumns x 32 columns by kWideThreadRows x kWideRows rows (a thread: columns lane and
// lane + 32, kWideRows consecutive rows) and writes its middle, L R points in from each side
// (the ring around them is computed redundantly, R points fewer valid per level). Each step
// copies one input plane of the footprint into a ring of shared planes (cp.async, kWideAhead
// planes ahead, each thread its own points) and moves every level on by a plane, level l making
// plane z_in - l R. A thread keeps, for each of its points and each level below L, the 2R + 1
// planes the next level reads along z in registers; the x and y neighbours come from a shared
// plane: the input's own slot for level 1, else the level's centre plane, which each thread
// stores from its registers before a barrier. Level L goes to `out`.
//
// Between levels the pass reflects beyond the fixed faces as Backend::reflect does after a sweep
// (WideMirrors, from HaloExchange::reflections): a face across x or y on the shared centre
// plane after its barrier (and a second barrier), a face across z in each thread's registers as
// the mirrored plane comes in. Points outside `live` keep their value at every level; each point
// is S's point function of the Star every other kernel fills, so `out` is bitwise that of L
// sweeps of apply() and their reflections.
#pragma once

#include <cuda_pipeline_primitives.h>

#include <type_traits>
#include <utility>

#include "kernels/backend.hpp"
#include "kernels/cuda/launch_shapes.cuh"
#include "kernels/cuda/walk_common.cuh"
#include "kernels/level_chunks.hpp"
#include "kernels/levels_3d_tile.hpp"

namespace gridsim::cuda {

// The footprint: 32 x kWideThreadRows threads, kWideColumns x kWideRows points each; the copies
// run kWideAhead planes ahead of the plane the first level reads.
constexpr int kWideColumns = 2;
constexpr int kWideRows = 2;
constexpr int kWideThreadRows = 16;
constexpr int kWideAhead = 2;
// The stars this pass takes, and its most levels: the registers of a thread hold
// kWideColumns x kWideRows x levels x (2R + 1) values, which radius 2 at 2 levels fits
// (docs/tuning.md, "Wide stars in time blocks").
constexpr int kWideLevelsRadius = 2;
constexpr int kMaxWideLevels3d = 2;

template <class S>
inline constexpr bool kWideLevelsStencil = S::kRadius == kWideLevelsRadius && !kReadsField<S>;

// A pass's reflections beyond the fixed faces (FaceMoves' mirror entries): entry f sets the
// points of box[f] from their images through plane[f] along axis[f].
struct WideMirrors {
    static constexpr int kMax = 6;
    int count = 0;
    Box box[kMax];
    int axis[kMax] = {};
    int plane[kMax] = {};
};

template <class T>
WideMirrors wide_mirrors(const FaceMoves<T>& m) {
    WideMirrors w;
    for (int f = 0; f < m.count; ++f) {
        w.box[f] = m.box[f];
        w.axis[f] = m.axis[f];
        w.plane[f] = m.shift[f][m.axis[f]];
    }
    w.count = m.count;
    return w;
}

template <class T, int R, int L>
struct WideLevelsTile {
    static constexpr int kThreads = 32 * kWideThreadRows;
    static constexpr int kX = 32 * kWideColumns;            // footprint columns
    static constexpr int kY = kWideThreadRows * kWideRows;  // footprint rows
    static constexpr int kRing = L * R;
    static constexpr int kStrideX = kX - 2 * kRing;  // columns a tile writes
    static constexpr int kStrideY = kY - 2 * kRing;  // rows a tile writes
    // A shared plane: the footprint's rows and R rows either side that no point writes (the y
    // neighbours of the edge rows, which are ring points whatever they read).
    static constexpr int kPad = R;
    static constexpr int kPlane = kX * (kY + 2 * kPad);
    static constexpr int kSlots = R + kWideAhead + 1;  // the input ring
    static constexpr int kCentres = 2 * (L - 1);       // levels 1..L-1, by step parity
    static constexpr std::size_t kBytes = std::size_t{kSlots + kCentres} * kPlane * sizeof(T);
    static constexpr int kPoints = kWideColumns * kWideRows;  // per thread
};

// A thread's points: point c = column v, row q (c = v kWideRows + q).
template <int C>
struct WidePoints {
    int x[C], y[C];  // in the field
    int at[C];       // in a shared plane
    int from[C];     // from the footprint's corner in a field plane; -1: beyond the field's ring
    bool live[C];    // inside `live` across x and y
    bool stores[C];  // written by the tile
};

// Centre plane `c` of level l - 1 at z = `z`: each x and y reflection whose box holds the plane
// sets its points of the tile from their images (FaceMoves::reflect_point's formula), where the
// images lie in the footprint.
template <class Tile, class T, int C>
__device__ __forceinline__ void reflect_centre(T* c, const WidePoints<C>& pt, const WideMirrors& m,
                                               unsigned faces, int fx, int fy, int z) {
    for (int f = 0; f < m.count; ++f) {
        const Box& b = m.box[f];
        const int a = m.axis[f];
        if (!(faces >> f & 1u) || z < b.lo[2] || z >= b.hi[2]) continue;
#pragma unroll
        for (int k = 0; k < C; ++k) {
            if (pt.x[k] < b.lo[0] || pt.x[k] >= b.hi[0] || pt.y[k] < b.lo[1] || pt.y[k] >= b.hi[1])
                continue;
            const int along = a == 0 ? pt.x[k] - fx : pt.y[k] - fy;
            const int d = m.plane[f] - (a == 0 ? fx : fy) - along;
            const int far = along + 2 * d;
            if (far < 0 || far >= (a == 0 ? Tile::kX : Tile::kY)) continue;
            const int step = a == 0 ? d : d * Tile::kX;
            c[pt.at[k]] = T(2) * c[pt.at[k] + step] - c[pt.at[k] + 2 * step];
        }
    }
}

// Plane `z` of a level has just come into window `w` (its newest, w[2R]): each z reflection
// whose box holds the point's column sets its mirrored plane if the window holds it and its
// images: the new plane itself beyond a face above, or the plane as far below a face below.
// The window's indices stay constants (the faces decide which, then one unrolled loop writes).
template <int R, class T>
__device__ __forceinline__ void reflect_window(T (&w)[2 * R + 1], int x, int y, int z,
                                               const WideMirrors& m, unsigned faces) {
    int above = 0;  // z = q + above, beyond a face q with its box above it
    int below = 0;  // z = q + below, mirroring q - below of a face q with its box below it
    for (int f = 0; f < m.count; ++f) {
        const Box& b = m.box[f];
        const int q = m.plane[f];
        const int o = z - q;
        if (!(faces >> f & 1u) || o < 1 || o >= R) continue;
        if (x < b.lo[0] || x >= b.hi[0] || y < b.lo[1] || y >= b.hi[1]) continue;
        if (b.lo[2] > q && z < b.hi[2]) above = o;
        if (b.lo[2] <= q && q - o >= b.lo[2]) below = o;
    }
#pragma unroll
    for (int o = 1; o < R; ++o) {
        if (above == o) w[2 * R] = T(2) * w[2 * R - o] - w[2 * R - 2 * o];
        if (below == o) w[2 * R - 2 * o] = T(2) * w[2 * R - o] - w[2 * R];
    }
}

// f(std::integral_constant<int, l>{}) for l = 1 .. L in turn: each level's registers by
// constant indices.
template <int L, class F, int... Ls>
__device__ __forceinline__ void each_level(F&& f, std::integer_sequence<int, Ls...> = {}) {
    if constexpr (sizeof...(Ls) == 0) {
        each_level<L>(f, std::make_integer_sequence<int, L>{});
    } else {
        (f(std::integral_constant<int, Ls + 1>{}), ...);
    }
}

// A thread's points of the footprint at (fx, fy) of a walk over `box`.
template <class Tile, int C>
__device__ __forceinline__ WidePoints<C> wide_points(int fx, int fy, const Box& box,
                                                     const Box& live, std::int64_t sy) {
    constexpr int Q = kWideRows;
    WidePoints<C> pt;
#pragma unroll
    for (int v = 0; v < kWideColumns; ++v) {
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            const int k = v * Q + q;
            const int lx = static_cast<int>(threadIdx.x) + 32 * v;
            const int ly = Q * static_cast<int>(threadIdx.y) + q;
            pt.x[k] = fx + lx;
            pt.y[k] = fy + ly;
            pt.at[k] = (ly + Tile::kPad) * Tile::kX + lx;
            const bool in_ring =
                pt.x[k] < box.hi[0] + Tile::kRing && pt.y[k] < box.hi[1] + Tile::kRing;
            pt.from[k] = in_ring ? static_cast<int>(lx + ly * sy) : -1;
            pt.live[k] = pt.x[k] >= live.lo[0] && pt.x[k] < live.hi[0] && pt.y[k] >= live.lo[1] &&
                         pt.y[k] < live.hi[1];
            pt.stores[k] = lx >= Tile::kRing && lx < Tile::kRing + Tile::kStrideX &&
                           ly >= Tile::kRing && ly < Tile::kRing + Tile::kStrideY &&
                           pt.x[k] < box.hi[0] && pt.y[k] < box.hi[1];
        }
    }
    return pt;
}

// The faces of `m` whose boxes meet the footprint at (fx, fy) over planes [lo, hi), by bit f:
// those across x or y, and those across z (most blocks: none).
template <class Tile>
__device__ __forceinline__ void walk_faces(const WideMirrors& m, int fx, int fy, int lo, int hi,
                                           unsigned& across, unsigned& along) {
    across = 0;
    along = 0;
    for (int f = 0; f < m.count; ++f) {
        const Box& b = m.box[f];
        const bool meets = b.lo[0] < fx + Tile::kX && b.hi[0] > fx && b.lo[1] < fy + Tile::kY &&
                           b.hi[1] > fy && b.lo[2] < hi && b.hi[2] > lo;
        if (meets && m.axis[f] == 2) along |= 1u << f;
        if (meets && m.axis[f] != 2) across |= 1u << f;
    }
}

// A level's values at a thread's points of one plane: S's point function of the Star of x and y
// neighbours from the shared plane `mid` and z neighbours from the level below's windows `u`;
// the point's own value where it is not live (`plane_live`: the plane is).
template <class T, class S, class Tile, int C, int R = S::kRadius>
__device__ __forceinline__ void level_values(const T* mid, const T (&u)[C][2 * R + 1],
                                             const WidePoints<C>& pt, bool plane_live,
                                             const AxisCoeffs<T>& r, T (&value)[C]) {
    constexpr int Q = kWideRows;
#pragma unroll
    for (int v = 0; v < kWideColumns; ++v) {
        T col[Q + 2 * R];  // the column's rows -R .. Q - 1 + R
#pragma unroll
        for (int q = 0; q < Q + 2 * R; ++q) col[q] = mid[pt.at[v * Q] + (q - R) * Tile::kX];
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            const int k = v * Q + q;
            value[k] = u[k][R];
            if (!(plane_live && pt.live[k])) continue;
            Star<T, R> star(u[k][R]);
#pragma unroll
            for (int o = 1; o <= R; ++o) {
                star.set(0, -o, mid[pt.at[k] - o]);
                star.set(0, o, mid[pt.at[k] + o]);
                star.set(1, -o, col[q + R - o]);
                star.set(1, o, col[q + R + o]);
                star.set(2, -o, u[k][R - o]);
                star.set(2, o, u[k][R + o]);
            }
            value[k] = S::template point<3>(star, r);
        }
    }
}

// Chunk `blockIdx.z` (of `planes` planes from box.lo[2]) of tile (blockIdx.x, blockIdx.y).
template <class T, class S, int L>
__global__ void __launch_bounds__(32 * kWideThreadRows, 1)
    stencil_wide_levels_3d_kernel(FieldView<const T> in, FieldView<T> out, Box box, Box live,
                                  AxisCoeffs<T> r, int planes, WideMirrors m) {
    constexpr int R = S::kRadius;
    using Tile = WideLevelsTile<T, R, L>;
    constexpr int C = Tile::kPoints;
    static_assert(R > 1 && !kReadsField<S>, "wide levels: wide stars of constant coefficients");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* const smem = reinterpret_cast<T*>(smem_raw);
    const int fx = box.lo[0] - Tile::kRing + static_cast<int>(blockIdx.x) * Tile::kStrideX;
    const int fy = box.lo[1] - Tile::kRing + static_cast<int>(blockIdx.y) * Tile::kStrideY;
    const int z0 = box.lo[2] + static_cast<int>(blockIdx.z) * planes;
    const int z1 = min(z0 + planes, box.hi[2]);
    const FieldExtents& e = in.ext;
    const WidePoints<C> pt = wide_points<Tile, C>(fx, fy, box, live, e.sy);
    const int first = z0 - Tile::kRing;             // the input plane of step 0
    const int steps = (z1 - z0) + 2 * Tile::kRing;  // input planes first .. z1 - 1 + L R
    auto slot = [&](int s) {
        return smem + ((s % Tile::kSlots) + Tile::kSlots) % Tile::kSlots * Tile::kPlane;
    };
    auto copy = [&](int s) {
        if (s < steps) {
            const T* plane = in.data + e.index(fx, fy, first + s);
            T* to = slot(s);
#pragma unroll
            for (int k = 0; k < C; ++k)
                if (pt.from[k] >= 0)
                    __pipeline_memcpy_async(to + pt.at[k], plane + pt.from[k], sizeof(T));
        }
        __pipeline_commit();
    };
#pragma unroll
    for (int s = 0; s < kWideAhead; ++s) copy(s);
    unsigned across = 0;
    unsigned along = 0;
    walk_faces<Tile>(m, fx, fy, first - 2 * R, first + steps, across, along);
    T w[L][C][2 * R + 1] = {};  // level l's planes z - 2R .. z, z the newest it made
    for (int s = 0; s < steps; ++s) {
        __pipeline_wait_prior(kWideAhead - 1);  // this thread's copies of plane s landed
        __syncthreads();                        // everyone's, and everyone is past step s - 1
        copy(s + kWideAhead);
        const T* newest = slot(s);
#pragma unroll
        for (int k = 0; k < C; ++k) {
#pragma unroll
            for (int o = 0; o < 2 * R; ++o) w[0][k][o] = w[0][k][o + 1];
            w[0][k][2 * R] = newest[pt.at[k]];
        }
        each_level<L>([&](auto level) {
            constexpr int l = decltype(level)::value;
            const int z = first + s - l * R;  // the plane level l makes
            const T* mid = slot(s - R);       // level l - 1 at z, across x and y
            if (l > 1) {
                T* centre = smem + (Tile::kSlots + 2 * (l - 2) + (s & 1)) * Tile::kPlane;
#pragma unroll
                for (int k = 0; k < C; ++k) centre[pt.at[k]] = w[l - 1][k][R];
                __syncthreads();
                if (across != 0) {
                    reflect_centre<Tile>(centre, pt, m, across, fx, fy, z);
                    __syncthreads();
                }
                mid = centre;
            }
            T value[C];
            level_values<T, S, Tile, C>(mid, w[l - 1], pt, z >= live.lo[2] && z < live.hi[2], r,
                                        value);
#pragma unroll
            for (int k = 0; k < C; ++k) {
                if (l < L) {
#pragma unroll
                    for (int o = 0; o < 2 * R; ++o) w[l][k][o] = w[l][k][o + 1];
                    w[l][k][2 * R] = value[k];
                    if (along != 0) reflect_window<R>(w[l][k], pt.x[k], pt.y[k], z, m, along);
                } else if (pt.stores[k] && z >= z0 && z < z1) {
                    out.data[e.index(pt.x[k], pt.y[k], z)] = value[k];
                }
            }
        });
    }
}

// The tiles of a wide pass of L levels over a box's points [lo, hi) along x, and along y.
template <class T, int R, int L>
constexpr long long wide_levels_tiles(int lo, int hi, int axis) {
    using Tile = WideLevelsTile<T, R, L>;
    const long long stride = axis == 0 ? Tile::kStrideX : Tile::kStrideY;
    return (hi - lo + stride - 1) / stride;
}

// A block per tile and chunk of planes, tiles fastest (neighbouring tiles' rings meet in the L2
// cache), the chunks cut as the other levels kernels cut theirs.
template <class T, class S, int L>
void launch_wide_levels_3d(const AxisCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                           const Box& b, const Box& live, const FaceMoves<T>& reflections,
                           int multiprocessors, cudaStream_t s) {
    using Tile = WideLevelsTile<T, S::kRadius, L>;
    auto kernel = stencil_wide_levels_3d_kernel<T, S, L>;
    static const long long wave = [&] {
        allow_shared(kernel, Tile::kBytes);
        return wave_slots(kernel, Tile::kThreads, Tile::kBytes, multiprocessors);
    }();
    const auto tiles_x =
        static_cast<unsigned>(wide_levels_tiles<T, S::kRadius, L>(b.lo[0], b.hi[0], 0));
    const auto tiles_y =
        static_cast<unsigned>(wide_levels_tiles<T, S::kRadius, L>(b.lo[1], b.hi[1], 1));
    const int nz = b.hi[2] - b.lo[2];
    // A chunk's fill is 2 L R steps; level_chunk_rows counts 3 per level of radius 1.
    const int planes = level_chunk_rows(static_cast<long long>(tiles_x) * tiles_y, nz,
                                        (2 * Tile::kRing + 2) / 3, wave, kLevelPlanes);
    const dim3 grid(tiles_x, tiles_y, ceil_div(nz, planes));
    kernel<<<grid, dim3(32, kWideThreadRows, 1), Tile::kBytes, s>>>(in, out, b, live, r, planes,
                                                                    wide_mirrors(reflections));
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gridsim::cuda
