// Temporal blocking in 3D for wide stars (radius R > 1, constant coefficients): L sweeps in one
// pass, streamed along z. A block of 32 x kWideThreadRows threads holds a footprint of
// 32 kWideColumns columns by kWideThreadRows kWideRows rows (a thread: a group of kWideColumns
// consecutive columns in kWideRows consecutive rows) and writes its middle, L R points in from
// each side (the ring around them is computed redundantly, R points fewer valid per level; a row
// of threads that holds no point a level needs skips that level). Each step moves every level on
// by a plane, level l a step behind level l - 1, the levels from the top down, and then the rows
// of threads that make no point of level L (the others' work is the levels') copy one input plane
// of the footprint into a ring of shared planes (cp.async, kWideAhead planes ahead). Level 1 reads
// the input's planes along z from the ring (and registers, Tile::kLow); a thread keeps, for each of
// its points and each level from 1 to L - 1, the 2R + 1 planes the next level reads along z in
// registers. The x and y neighbours a thread holds come from there, the others from a shared plane,
// a group of columns a load: the input's own slot for level 1, else the level below's centre plane,
// which each thread stores from its registers at the end of the step before. One barrier a step.
// Level L goes to `out`.
//
// Between levels the pass reflects beyond the fixed faces as Backend::reflect does after a sweep
// (wide_reflections.cuh). Points outside `live` keep their value at every level; each point is
// S's point function of the Star every other kernel fills, so `out` is bitwise that of L sweeps
// of apply() and their reflections.
#pragma once

#include <cuda_pipeline_primitives.h>

#include <type_traits>
#include <utility>

#include "kernels/backend.hpp"
#include "kernels/cuda/wide_reflections.cuh"
#include "kernels/fast_divide.hpp"

namespace gridsim::cuda {

// The footprint: 32 x kWideThreadRows threads, kWideColumns x kWideRows points each; the copies
// run kWideAhead planes ahead of the newest plane level 1 reads.
constexpr int kWideColumns = 2;
constexpr int kWideRows = 2;
constexpr int kWideThreadRows = 16;
constexpr int kWideAhead = 2;
// The stars this pass takes, and its most levels: the registers of a thread hold
// kWideColumns x kWideRows x (levels - 1) x (2R + 1) values and level 1's input planes
// (Tile::kLow), which radius 2 at 2 levels fits (docs/tuning.md, "Wide stars in time blocks").
constexpr int kWideLevelsRadius = 2;
constexpr int kMaxWideLevels3d = 2;

template <class S>
inline constexpr bool kWideLevelsStencil = S::kRadius == kWideLevelsRadius && !kReadsField<S>;
// The most levels of a pass in precision T: float sweeps one by one, its passes having run
// slower than its sweeps wherever measured (docs/tuning.md, "Wide stars in time blocks").
template <class T>
inline constexpr int kWideLevelsMost = sizeof(T) == 8 ? kMaxWideLevels3d : 1;

template <class T, int R, int L>
struct WideLevelsTile {
    static_assert(R % kWideColumns == 0, "wide levels: x neighbours by whole groups of columns");
    static constexpr int kThreads = 32 * kWideThreadRows;
    static constexpr int kX = 32 * kWideColumns;            // footprint columns
    static constexpr int kY = kWideThreadRows * kWideRows;  // footprint rows
    static constexpr int kRing = L * R;
    static constexpr int kStrideX = kX - 2 * kRing;  // columns a tile writes
    static constexpr int kStrideY = kY - 2 * kRing;  // rows a tile writes
    // A shared plane: the footprint's rows and R rows either side that no point writes (the y
    // neighbours of the edge rows, the x neighbours of the corner columns: ring points whatever
    // they read).
    static constexpr int kPad = R;
    static constexpr int kPlane = kX * (kY + 2 * kPad);
    // Footprint point (x, y) in a shared plane.
    __host__ __device__ static constexpr int at(int x, int y) { return (y + kPad) * kX + x; }
    // The thread's rank in its block (a row of threads a warp).
    __device__ static int thread() { return static_cast<int>(threadIdx.y * 32 + threadIdx.x); }
    // Level 1 reads the input's planes z - R .. z + R: the kLow lowest from a thread's registers,
    // the others from the ring, which also holds the kWideAhead planes in flight. Doubles keep
    // none in registers, floats R (more would spill: docs/tuning.md, "Wide stars in time
    // blocks").
    static constexpr int kLow = sizeof(T) > 4 ? 0 : R;
    // The input ring: its slots a power of two, so that a plane's slot is a mask of its index,
    // not a division.
    static constexpr int kSlots = static_cast<int>(pow2_ceil(2 * R - kLow + kWideAhead + 1));
    static constexpr int kCentres = 2 * (L - 1);  // levels 1..L-1, by step parity
    static constexpr std::size_t kPlanesBytes = std::size_t{kSlots + kCentres} * kPlane * sizeof(T);
    // After the planes, each thread's point of the reflections across x and y (centre_ghost),
    // read only where a face is met, so that no register holds it along the walk.
    static constexpr std::size_t kBytes = kPlanesBytes + kThreads * sizeof(CentreGhost);
    static constexpr int kPoints = kWideColumns * kWideRows;  // per thread
    // The rows of threads that make no point of level L, the first and the last half of them,
    // copy the input planes: kCopyRows footprint rows each, columns lane + 32 c of each row.
    static constexpr int kCopyThreadRows = 2 * (L * R / kWideRows);
    static constexpr int kCopyRows = kY / kCopyThreadRows;
    static_assert(kCopyThreadRows > 0 && kY % kCopyThreadRows == 0 &&
                      kCopyRows * kWideColumns <= 32,
                  "wide levels: the copying rows share the footprint's rows, a mask bit a copy");
    // The points beyond the faces across x and y (R - 1 layers each: wide_mirrors_fit) that a
    // footprint can meet, one a thread (centre_ghost).
    static_assert(2 * (R - 1) * (kX + kY) <= kThreads, "wide levels: a ghost point a thread");
    // Whether a thread whose first row is `row` holds a point of level l the tile needs: the rows
    // it writes grown by (L - l) R, [l R, kY - l R) (warp-uniform: a warp is a row of threads).
    __device__ static constexpr bool needs(int l, int row) {
        return row + kWideRows > l * R && row < kY - l * R;
    }
};

// A thread's kWideColumns consecutive columns of a row, as one shared load.
template <class T>
struct alignas(sizeof(T) * kWideColumns) WideGroup {
    T v[kWideColumns];
};

// A thread's points: point k is column k % kWideColumns, row k / kWideColumns of its group; the
// masks hold bit k.
template <class Tile>
struct WidePoints {
    int x, y;             // point 0 in the field
    int row;              // point 0's row in the footprint
    int at;               // point 0 in a shared plane
    unsigned live = 0;    // inside `live` across x and y
    unsigned stores = 0;  // written by the tile
    __device__ int x_of(int k) const { return x + k % kWideColumns; }
    __device__ int y_of(int k) const { return y + k / kWideColumns; }
};

// f(std::integral_constant<int, l>{}) for l = L .. 1 in turn: each level's registers by constant
// indices, each level before the one below moves its window on.
template <int L, class F, int... Ls>
__device__ __forceinline__ void each_level_down(F&& f, std::integer_sequence<int, Ls...> = {}) {
    if constexpr (sizeof...(Ls) == 0) {
        each_level_down<L>(f, std::make_integer_sequence<int, L>{});
    } else {
        (f(std::integral_constant<int, L - Ls>{}), ...);
    }
}

// A thread's points of the footprint at (fx, fy) of a walk over `box`.
template <class Tile>
__device__ __forceinline__ WidePoints<Tile> wide_points(int fx, int fy, const Box& box,
                                                        const Box& live) {
    WidePoints<Tile> pt;
    const int lx = kWideColumns * static_cast<int>(threadIdx.x);
    pt.row = kWideRows * static_cast<int>(threadIdx.y);
    pt.x = fx + lx;
    pt.y = fy + pt.row;
    pt.at = Tile::at(lx, pt.row);
#pragma unroll
    for (int k = 0; k < Tile::kPoints; ++k) {
        const int x = pt.x_of(k);
        const int y = pt.y_of(k);
        const int ly = y - fy;
        const unsigned bit = 1u << k;
        if (x >= live.lo[0] && x < live.hi[0] && y >= live.lo[1] && y < live.hi[1]) pt.live |= bit;
        if (x - fx >= Tile::kRing && x - fx < Tile::kRing + Tile::kStrideX && ly >= Tile::kRing &&
            ly < Tile::kRing + Tile::kStrideY && x < box.hi[0] && y < box.hi[1])
            pt.stores |= bit;
    }
    return pt;
}

// A thread's part of each input plane's copy (WideLevelsTile::kCopyRows): its first row in the
// footprint and the copies within the field's ring, bit j kWideColumns + c for row j, column
// lane + 32 c; none in the rows of threads that make points of level L.
struct WideCopies {
    int row = 0;
    unsigned mask = 0;
};

template <class Tile, int L>
__device__ __forceinline__ WideCopies wide_copies(int fx, int fy, const Box& box) {
    constexpr int kHalf = Tile::kCopyThreadRows / 2;
    constexpr int kLast = kWideThreadRows - kHalf;  // the first of the last kHalf rows
    static_assert(!Tile::needs(L, kWideRows * (kHalf - 1)) && Tile::needs(L, kWideRows * kHalf) &&
                      !Tile::needs(L, kWideRows * kLast) && Tile::needs(L, kWideRows * (kLast - 1)),
                  "wide levels: the first and the last kHalf rows of threads make no point of L");
    const int ty = static_cast<int>(threadIdx.y);
    WideCopies c;
    if (Tile::needs(L, kWideRows * ty)) return c;
    c.row = Tile::kCopyRows * (ty < kHalf ? ty : ty - kLast + kHalf);
#pragma unroll
    for (int k = 0; k < Tile::kCopyRows * kWideColumns; ++k) {
        const int x = fx + static_cast<int>(threadIdx.x) + 32 * (k % kWideColumns);
        const int y = fy + c.row + k / kWideColumns;
        if (x < box.hi[0] + Tile::kRing && y < box.hi[1] + Tile::kRing) c.mask |= 1u << k;
    }
    return c;
}

// A level's values at a thread's points of one plane: S's point function of the Star of x and y
// neighbours and z neighbours from the level below's windows `u` where the thread holds them
// (their middles), else from the shared plane `mid`; the point's own value where it is not live
// (`plane_live`: the plane is).
template <class T, class S, class Tile, int R = S::kRadius>
__device__ __forceinline__ void level_values(const T* mid, const T (&u)[Tile::kPoints][2 * R + 1],
                                             const WidePoints<Tile>& pt, bool plane_live,
                                             const PointCoeffs<S, T>& r,
                                             T (&value)[Tile::kPoints]) {
    constexpr int V = kWideColumns;
    constexpr int Q = kWideRows;
    using Group = WideGroup<T>;
    auto group = [&](int q, int dx) {
        return *reinterpret_cast<const Group*>(mid + pt.at + q * Tile::kX + dx);
    };
    Group above[R], below[R];  // rows -1 - o and Q + o of the thread's columns
#pragma unroll
    for (int o = 0; o < R; ++o) {
        above[o] = group(-1 - o, 0);
        below[o] = group(Q + o, 0);
    }
    auto own = [&](int q, int v) -> T { return u[q * V + v][R]; };
#pragma unroll
    for (int q = 0; q < Q; ++q) {
        T row[V + 2 * R];  // columns -R .. V - 1 + R of the thread's row q
#pragma unroll
        for (int g = 0; g < R / V; ++g) {
            const Group left = group(q, -R + g * V);
            const Group right = group(q, V + g * V);
#pragma unroll
            for (int v = 0; v < V; ++v) {
                row[g * V + v] = left.v[v];
                row[R + V + g * V + v] = right.v[v];
            }
        }
#pragma unroll
        for (int v = 0; v < V; ++v) row[R + v] = own(q, v);
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const int k = q * V + v;
            Star<T, R> star(u[k][R]);
#pragma unroll
            for (int o = 1; o <= R; ++o) {
                star.set(0, -o, row[R + v - o]);
                star.set(0, o, row[R + v + o]);
                star.set(1, -o, q - o >= 0 ? own(q - o, v) : above[o - q - 1].v[v]);
                star.set(1, o, q + o < Q ? own(q + o, v) : below[q + o - Q].v[v]);
                star.set(2, -o, u[k][R - o]);
                star.set(2, o, u[k][R + o]);
            }
            // Every point is made and the dead ones keep their value by a select: no branch a
            // point, whose code would load the weights again each time.
            const T made = S::template point<3>(star, r);
            value[k] = plane_live && (pt.live >> k & 1u) ? made : u[k][R];
        }
    }
}

// A thread's values of its points on a shared plane, a group of columns a load.
template <class Tile, class T>
__device__ __forceinline__ void wide_load(const T* plane, const WidePoints<Tile>& pt,
                                          T (&v)[Tile::kPoints]) {
#pragma unroll
    for (int q = 0; q < kWideRows; ++q) {
        const auto g = *reinterpret_cast<const WideGroup<T>*>(plane + pt.at + q * Tile::kX);
#pragma unroll
        for (int c = 0; c < kWideColumns; ++c) v[q * kWideColumns + c] = g.v[c];
    }
}

// One block's walk along z: its shared planes, its points, and how each level moves on a plane.
template <class T, class S, int L>
struct WideWalk {
    static constexpr int R = S::kRadius;
    using Tile = WideLevelsTile<T, R, L>;
    static constexpr int C = Tile::kPoints;
    using Window = T[C][2 * R + 1];  // a level's planes z - 2R .. z, z the newest it made
    using Low = T[C][Tile::kLow > 0 ? Tile::kLow : 1];  // the input's planes level 1 keeps

    T* smem;
    const T* from;    // the thread's copy 0 in input plane `first`
    int copy_at;      // the same point in a shared plane
    unsigned copies;  // WideCopies::mask
    T* to;            // point 0 of plane 0 of `out` (the same extents)
    std::int64_t sy, sz;
    PointCoeffs<S, T> r;
    const WideMirrors& m;
    int live_lo, live_hi;  // the live planes
    int fx, fy, z0, z1;
    WidePoints<Tile> pt;
    int first;   // the input plane of step 0
    int inputs;  // input planes first .. z1 - 1 + L R
    WalkFaces faces;

    // The ring slot of input plane s, any s (the oldest plane a step reads is at most 2R - kLow
    // behind it, fewer than the slots).
    __device__ T* slot(int s) const { return smem + (s & (Tile::kSlots - 1)) * Tile::kPlane; }
    // The thread's point of the reflections across x and y.
    __device__ CentreGhost& ghost() const {
        auto* table = reinterpret_cast<unsigned char*>(smem) + Tile::kPlanesBytes;
        return reinterpret_cast<CentreGhost*>(table)[Tile::thread()];
    }
    // Level l's centre plane (l = 1 .. L - 1) that the level above reads at step s.
    __device__ T* centre(int l, int s) const {
        return smem + (Tile::kSlots + 2 * (l - 1) + (s & 1)) * Tile::kPlane;
    }
    // Input plane s into its slot, kWideAhead steps ahead (one commit a step, copies or not).
    // A copying thread copies columns lane + 32 c of its WideLevelsTile::kCopyRows rows
    // (consecutive lanes, consecutive banks); the others only commit.
    __device__ void copy(int s) const {
        if (s < inputs && copies != 0) {
            const T* plane = from + s * sz;
            T* into = slot(s) + copy_at;
#pragma unroll
            for (int k = 0; k < Tile::kCopyRows * kWideColumns; ++k) {
                const int q = k / kWideColumns;
                const int c = 32 * (k % kWideColumns);
                if (copies >> k & 1u)
                    __pipeline_memcpy_async(into + q * Tile::kX + c, plane + q * sy + c, sizeof(T));
            }
        }
        __pipeline_commit();
    }
    // Level l at step s: plane z from the level below's window `u` and its plane `mid`, into
    // level l's window `w` (l < L, with the z reflections) or `out` (l = L).
    template <int l>
    __device__ void make(int z, const T* mid, const Window& u, Window& w) const {
        T value[C];
        level_values<T, S, Tile>(mid, u, pt, z >= live_lo && z < live_hi, r, value);
#pragma unroll
        for (int k = 0; k < C; ++k) {
            if constexpr (l < L) {
#pragma unroll
                for (int o = 0; o < 2 * R; ++o) w[k][o] = w[k][o + 1];
                w[k][2 * R] = value[k];
                if (z >= faces.along_lo && z < faces.along_hi)
                    reflect_window<R>(w[k], pt.x_of(k), pt.y_of(k), z, m, faces.along);
            } else if ((pt.stores >> k & 1u) && z >= z0 && z < z1) {
                to[z * sz + k / kWideColumns * sy + k % kWideColumns] = value[k];
            }
        }
    }
    // The middles of a level's window `w` into its centre plane `c`, a group of columns a store.
    __device__ void store_centre(T* c, const Window& w) const {
#pragma unroll
        for (int q = 0; q < kWideRows; ++q) {
            WideGroup<T> g;
#pragma unroll
            for (int v = 0; v < kWideColumns; ++v) g.v[v] = w[q * kWideColumns + v][R];
            *reinterpret_cast<WideGroup<T>*>(c + pt.at + q * Tile::kX) = g;
        }
    }
    // Level 1 at step s: the input's planes z - R + kLow .. z + R from the ring, those below
    // from `low`.
    __device__ void first_level(int s, Low& low, Window& w) const {
        constexpr int K = Tile::kLow;
        const int z = first + s - R;
        Window u;
#pragma unroll
        for (int o = K; o <= 2 * R; ++o) {
            T v[C];
            wide_load(slot(s - 2 * R + o), pt, v);
#pragma unroll
            for (int k = 0; k < C; ++k) u[k][o] = v[k];
        }
#pragma unroll
        for (int k = 0; k < C; ++k) {
#pragma unroll
            for (int o = 0; o < K; ++o) u[k][o] = low[k][o];
        }
        make<1>(z, slot(s - R), u, w);
#pragma unroll
        for (int k = 0; k < C; ++k) {
#pragma unroll
            for (int o = 0; o < K; ++o) low[k][o] = u[k][o + 1];
        }
    }
    // Level l > 1 at step s, from the centre plane of level l - 1 stored the step before (its x
    // and y reflections set, and read back into `u`, whose middles the thread's neighbours read).
    template <int l>
    __device__ void upper_level(int s, Window& u, Window& w) const {
        const int z = first + s - (l - 1) - l * R;
        T* c = centre(l - 1, s);
        if (faces.across != 0) {
            reflect_centre(c, ghost(), z);
            __syncthreads();
            T v[C];
            wide_load(c, pt, v);
#pragma unroll
            for (int k = 0; k < C; ++k) u[k][R] = v[k];
        }
        if (Tile::needs(l, pt.row)) make<l>(z, c, u, w);
    }
};

// The tiles of a wide pass of L levels over a box's points [lo, hi) along x, and along y.
template <class T, int R, int L>
__host__ __device__ constexpr long long wide_levels_tiles(int lo, int hi, int axis) {
    using Tile = WideLevelsTile<T, R, L>;
    const long long stride = axis == 0 ? Tile::kStrideX : Tile::kStrideY;
    return (hi - lo + stride - 1) / stride;
}

// A tile of a wide pass, along x and along y.
struct WideTile {
    int x, y;
};

// The tile of block `b` of a chunk's nx x ny: the tiles at the box's sides first (rows 0 and
// ny - 1, then columns 0 and nx - 1 of the rows between), where a block may reflect beyond a
// fixed face and take longest, then the others row by row, so that a pass ends on its quickest
// blocks.
__host__ __device__ constexpr WideTile wide_tile_of(int b, int nx, int ny) {
    if (nx <= 2 || ny <= 2) return {b % nx, b / nx};
    if (b < 2 * nx) return {b % nx, b < nx ? 0 : ny - 1};
    b -= 2 * nx;
    if (b < 2 * (ny - 2)) return {b % 2 == 0 ? 0 : nx - 1, 1 + b / 2};
    b -= 2 * (ny - 2);
    return {1 + b % (nx - 2), 1 + b / (nx - 2)};
}

// Chunk `blockIdx.z` (of `planes` planes from box.lo[2]) of tile wide_tile_of(blockIdx.x) of the
// box's tiles.
template <class T, class S, int L>
__global__ void __launch_bounds__(32 * kWideThreadRows, 1)
    stencil_wide_levels_3d_kernel(FieldView<const T> in, FieldView<T> out, Box box, Box live,
                                  PointCoeffs<S, T> r, int planes, WideMirrors m) {
    using Walk = WideWalk<T, S, L>;
    using Tile = typename Walk::Tile;
    constexpr int R = S::kRadius;
    static_assert(R > 1 && !kReadsField<S>, "wide levels: wide stars of constant coefficients");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const WideTile tile =
        wide_tile_of(static_cast<int>(blockIdx.x),
                     static_cast<int>(wide_levels_tiles<T, R, L>(box.lo[0], box.hi[0], 0)),
                     static_cast<int>(wide_levels_tiles<T, R, L>(box.lo[1], box.hi[1], 1)));
    const int fx = box.lo[0] - Tile::kRing + tile.x * Tile::kStrideX;
    const int fy = box.lo[1] - Tile::kRing + tile.y * Tile::kStrideY;
    const int z0 = box.lo[2] + static_cast<int>(blockIdx.z) * planes;
    const int z1 = min(z0 + planes, box.hi[2]);
    const WidePoints<Tile> pt = wide_points<Tile>(fx, fy, box, live);
    const WideCopies copies = wide_copies<Tile, L>(fx, fy, box);
    const int first = z0 - Tile::kRing;
    const FieldExtents& e = in.ext;
    Walk walk{reinterpret_cast<T*>(smem_raw),
              in.data + e.index(fx + static_cast<int>(threadIdx.x), fy + copies.row, first),
              (copies.row + Tile::kPad) * Tile::kX + static_cast<int>(threadIdx.x),
              copies.mask,
              out.data + e.index(pt.x, pt.y, 0),
              e.sy,
              e.sz,
              r,
              m,
              live.lo[2],
              live.hi[2],
              fx,
              fy,
              z0,
              z1,
              pt,
              first,
              (z1 - z0) + 2 * Tile::kRing};
#pragma unroll
    for (int s = 0; s < kWideAhead; ++s) walk.copy(s);
    walk.faces = walk_faces<Tile, R>(m, fx, fy, walk.first - Tile::kRing - (L - 1),
                                     walk.first + walk.inputs);
    if (walk.faces.across != 0)
        walk.ghost() = centre_ghost<Tile>(m, walk.faces.across, fx, fy, Tile::thread());
    typename Walk::Window w[L] = {};        // w[l - 1]: level l's (l < L)
    typename Walk::Low low = {};            // the input's planes z - R .. z - R + kLow - 1
    const int steps = walk.inputs + L - 1;  // level L lags level 1 by L - 1 steps
    for (int s = 0; s < steps; ++s) {
        __pipeline_wait_prior(kWideAhead - 1);  // this thread's copies of plane s landed
        __syncthreads();  // everyone's, the centres of step s - 1, everyone past step s - 1
        // Each level from the top reads the level below's window before that moves on.
        each_level_down<L>([&](auto level) {
            constexpr int l = decltype(level)::value;
            if constexpr (l == 1) {
                if (Tile::needs(1, walk.pt.row)) walk.first_level(s, low, w[0]);
            } else {
                walk.template upper_level<l>(s, w[l - 2], w[l - 1]);
            }
        });
        // The copies go last, so that the copying rows reach a reflection step's barrier first.
        walk.copy(s + kWideAhead);
#pragma unroll
        for (int l = 1; l < L; ++l) walk.store_centre(walk.centre(l, s + 1), w[l - 1]);
    }
}

}  // namespace gridsim::cuda
