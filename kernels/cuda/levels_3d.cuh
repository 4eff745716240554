// Temporal blocking in 3D: the levels kernel.
#pragma once

#include <cuda_pipeline_primitives.h>

#include "kernels/block_order.hpp"
#include "kernels/cuda/block_signals.cuh"
#include "kernels/cuda/walk_common.cuh"
#include "kernels/halo_arrivals.hpp"
#include "kernels/levels_3d_tile.hpp"

namespace gridsim::cuda {

// Temporal blocking in 3D: `Levels` sweeps in one pass, streamed along z as the 2D kernel
// streams along y. A block of 32 x Rows threads holds a 32 V x Rows R x-y tile, V consecutive x
// points and R consecutive tile rows per thread, and writes its middle points, Levels in from
// each side (the ring around them is computed redundantly, one point fewer valid per level); it
// walks a chunk of `planes` output planes along z, upwards (or, in a faces-first pass, downwards
// where that stores its face planes first). Each step loads one input plane and moves
// every level on by one plane, level j lagging 2j planes behind the input, so that the three
// planes of level j - 1 that level j reads were made one, two and three steps earlier. A thread
// keeps its own points of those planes in registers (rotating roles, as in 2D); the x neighbours
// beyond its V points come from the lanes beside it (shuffles: the warp's end lanes are the
// tile's x ring, which goes invalid anyway), the y neighbours between its own R rows from its
// registers, and those beyond them through a ring of three shared planes per level (one barrier
// per step, the 2D argument), where each thread stores only its first and last row. Shared-memory
// and shuffle instructions are what bound the kernel (ncu: the L1 pipes, with one point per
// thread), so V points per thread share one shuffle per side and one 8- or 16-byte shared access
// per neighbour row, and R rows per thread halve (R = 2) the shared loads per point. A step's
// work is short next to a DRAM load, and the barrier made every step wait for its own input:
// each thread copies its input points into shared memory two steps ahead (cp.async; its own
// points only, so no barrier guards them; float at 2 levels went from 0.41 to 0.58 of the copy
// rate, double did not move). Every shared address is the thread's cell plus a constant and the
// global ones move by one plane per step (the first version spent most of its instructions on
// index arithmetic). Points outside `live` keep their value at every level; each point is
// stencil_point with the stream kernel's arguments (a stencil that reads a field: its point
// function with the same two stars as the wide stream kernel's), so `out` is bitwise that of
// `Levels` sweeps of apply().
//
// A stencil that reads a coefficient field (Field: kReadsField) also copies each step's plane of
// it ahead, as the input's, into a ring of kFieldSlots planes of all R rows after the input
// planes: level j reads the field's planes either side of its own, which lags 2 j behind the
// input, so the ring holds the 2 Levels + 1 planes the levels read and the two on their way.
// A thread keeps its own points of those planes in registers (FieldWindow); the rest of every
// field star comes from the lanes beside it and the ring's rows beyond its own.
template <class T, int Levels, int V, int R, int Rows, bool Field = false>
struct LevelsPlanes {
    // Only a thread's first and last rows are read by other threads, so a level plane holds
    // those (kEdges rows per thread); an input plane holds all R rows.
    static constexpr int kEdges = R > 1 ? 2 : 1;
    static constexpr int kPlane = 32 * Rows * kEdges;  // packs of V points in a level plane
    static constexpr int kInputPlane = 32 * Rows * R;
    static constexpr int kFieldSlots = Field ? 2 * Levels + 4 : 0;
    static constexpr std::size_t kBytes =
        (3 * Levels * kPlane + (3 + kFieldSlots) * kInputPlane) * V * sizeof(T);
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
    // The field's plane of walk step `step` (from -kFieldSlots on).
    __device__ P* field(int step) const {
        const unsigned slot = static_cast<unsigned>(step + kFieldSlots) % kFieldSlots;
        return in_cell + (3 + static_cast<int>(slot)) * kInputPlane;
    }
    // Whether row q of a thread is kept in the level planes, and where, from its first row's.
    __device__ static constexpr bool kept(int q) { return q == 0 || q == R - 1; }
    __device__ static constexpr int edge(int q) { return q == 0 ? 0 : 32 * (kEdges - 1); }
};

// What one thread of a tile holds for a whole walk: its first pack's x and row, which packs it
// loads and stores, which of its points are live, and its neighbour rows' offsets in the level
// planes (the field's planes too).
template <class T, int V, int R>
struct TileThread3d {
    int i = 0;
    int j0 = 0;
    bool loads[R];
    PackMask<T, V> stores[R];
    bool column_live[R * V];
    int down = 0;
    int up = 0;
};

// A thread's own points of the coefficient field in the 2 Levels + 1 planes its levels read
// (window plane i: walk step s - 2 Levels - 1 + i at step s), moved on a plane every step from
// the field's ring in shared memory, so that the centre and the z neighbours of every level's
// field star come from registers; x neighbours beyond its pack come from the lanes beside it,
// y neighbours beyond its rows from the ring. NoFieldWindow: a stencil that reads none.
template <class T, int Levels, int V, int R>
struct FieldWindow {
    static constexpr int kPlanes = 2 * Levels + 1;
    T w[kPlanes][R * V];

    __device__ FieldWindow() {
#pragma unroll
        for (int i = 0; i < kPlanes; ++i)
#pragma unroll
            for (int k = 0; k < R * V; ++k) w[i][k] = T(0);
    }
    // The oldest plane goes; the thread's points of `plane` (its first row's pack) come in.
    __device__ __forceinline__ void advance(const Pack<T, V>* plane) {
#pragma unroll
        for (int i = 0; i + 1 < kPlanes; ++i)
#pragma unroll
            for (int k = 0; k < R * V; ++k) w[i][k] = w[i + 1][k];
#pragma unroll
        for (int q = 0; q < R; ++q) {
            const Pack<T, V> p = plane[32 * q];
#pragma unroll
            for (int e = 0; e < V; ++e) w[kPlanes - 1][q * V + e] = p.v[e];
        }
    }
};
struct NoFieldWindow {};

// The field's stars of a level's points: `c` the thread's points of the level's plane, `zm` and
// `zp` of the planes below and above it (window rows), `plane` that plane in the ring.
template <class T, int V, int R>
struct FieldStars {
    const T (&c)[R * V];
    const T (&zm)[R * V];
    const T (&zp)[R * V];
    Pack<T, V> below, above;  // the rows beyond the thread's first and last

    __device__ FieldStars(const T (&centre)[R * V], const T (&lower)[R * V],
                          const T (&upper)[R * V], const Pack<T, V>* plane,
                          const TileThread3d<T, V, R>& th)
        : c(centre),
          zm(lower),
          zp(upper),
          below(plane[th.down]),
          above(plane[32 * (R - 1) + th.up]) {}
    // Point e of row q, its x neighbours beyond the pack (`left`, `right`) shuffled by the caller.
    __device__ Star<T> at(int q, int e, T left, T right) const {
        const int k = q * V + e;
        return Star<T>(c[k], e == 0 ? left : c[k - 1], e == V - 1 ? right : c[k + 1],
                       q == 0 ? below.v[e] : c[k - V], q == R - 1 ? above.v[e] : c[k + V], zm[k],
                       zp[k]);
    }
    // The last (first) point of row q of the lane before (after), or this lane's at the warp's
    // ends (ring points).
    __device__ T left(int q) const { return __shfl_up_sync(0xffffffffu, c[q * V + V - 1], 1); }
    __device__ T right(int q) const { return __shfl_down_sync(0xffffffffu, c[q * V], 1); }
};
struct NoFieldStars {};

// Level j's field stars at step s (window plane 2 Levels + 1 - 2 j), where S reads a field.
template <class T, class S, int Levels, int V, int R, int Dir, class Window, class Tile>
__device__ __forceinline__ auto level_field_stars(const Window& fw, const Tile& tile, int s, int j,
                                                  const TileThread3d<T, V, R>& th) {
    if constexpr (kReadsField<S>) {
        const int b = 2 * Levels + 1 - 2 * j;
        return FieldStars<T, V, R>(fw.w[b], fw.w[b - Dir], fw.w[b + Dir], tile.field(s - 2 * j),
                                   th);
    } else {
        return NoFieldStars{};
    }
}

// One step of a walk along z, upwards (Dir 1) or downwards (Dir -1): every level moves on by a
// plane, level j at plane z_in - 2 j Dir (walk step s - 2 j); the planes made before are the
// ones below it going up, above it going down, so that each point reads its true z neighbours
// whichever way the walk goes (and so has the same bits).
template <class T, class S, int Levels, int V, int R, int Rows, int Slot, int Dir, class Window>
__device__ __forceinline__ void levels_step_3d(
    const LevelsPlanes<T, Levels, V, R, Rows, kReadsField<S>>& tile, int z_in, int s,
    T (&newest)[Levels][R * V], T (&middle)[Levels][R * V], T (&oldest)[Levels][R * V],
    const Pack<T, V> (&input)[R], const TileThread3d<T, V, R>& th, const Window& fw,
    const Box& live, const AxisCoeffs<T>& r, Pack<T, V> (&top)[R]) {
    using Tile = LevelsPlanes<T, Levels, V, R, Rows, kReadsField<S>>;
    constexpr int kRead = (Slot + 1) % 3;  // the slot written two steps ago
#pragma unroll
    for (int j = Levels; j >= 1; --j) {
        const int z = z_in - 2 * Dir * j;
        const bool plane_live = z >= live.lo[2] && z < live.hi[2];
        const T(&c)[R * V] = middle[j - 1];  // row q's point e at q * V + e
        const Pack<T, V>* mid = tile.plane(kRead, j - 1);
        const Pack<T, V> below = mid[th.down];  // the row before the thread's first
        const Pack<T, V> above = mid[Tile::edge(R - 1) + th.up];  // the row after its last
        const auto stars = level_field_stars<T, S, Levels, V, R, Dir>(fw, tile, s, j, th);
        Pack<T, V> v[R];
#pragma unroll
        for (int q = 0; q < R; ++q) {
            const T left = __shfl_up_sync(0xffffffffu, c[q * V + V - 1], 1);
            const T right = __shfl_down_sync(0xffffffffu, c[q * V], 1);
            T field_left{}, field_right{};
            if constexpr (kReadsField<S>) {
                field_left = stars.left(q);
                field_right = stars.right(q);
            }
#pragma unroll
            for (int e = 0; e < V; ++e) {
                const int at = q * V + e;
                const T xm = e == 0 ? left : c[at - 1];
                const T xp = e == V - 1 ? right : c[at + 1];
                const T ym = q == 0 ? below.v[e] : c[at - V];
                const T yp = q == R - 1 ? above.v[e] : c[at + V];
                const T zm = Dir > 0 ? oldest[j - 1][at] : newest[j - 1][at];
                const T zp = Dir > 0 ? newest[j - 1][at] : oldest[j - 1][at];
                if constexpr (kReadsField<S>) {
                    v[q].v[e] = S::template point<3>(Star<T>(c[at], xm, xp, ym, yp, zm, zp),
                                                     stars.at(q, e, field_left, field_right), r);
                } else {
                    v[q].v[e] = stencil_point<T, 3, S>(c[at], xm, xp, ym, yp, zm, zp, r);
                }
                if (!(plane_live && th.column_live[at])) v[q].v[e] = c[at];
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

// Which of a thread's R rows of packs (x from i, y from j0, the tile's rows from row0) it loads,
// which points it stores (inside the tile's stride and the box) and which are live.
template <class T, int Levels, int V, int R, int StrideX, int StrideY>
__device__ __forceinline__ void levels_3d_masks(const Box& box, const Box& live, int i, int j0,
                                                int row0, int tile_x, bool (&loads)[R],
                                                PackMask<T, V> (&stores)[R],
                                                bool (&column_live)[R * V]) {
#pragma unroll
    for (int q = 0; q < R; ++q) {
        const int j = j0 + q;
        loads[q] = i < box.hi[0] + Levels && j < box.hi[1] + Levels;
        const bool row_stores = row0 + q >= Levels && row0 + q < Levels + StrideY && j < box.hi[1];
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const int c = i + e;
            stores[q].set(e, row_stores && c >= tile_x + Levels && c < tile_x + Levels + StrideX &&
                                 c >= box.lo[0] && c < box.hi[0]);
            column_live[q * V + e] =
                c >= live.lo[0] && c < live.hi[0] && j >= live.lo[1] && j < live.hi[1];
        }
    }
}

// What a block's walk signals or waits for: nothing; soon after storing plane `plane` it tells
// `done` (tell_stored: a faces-first pass); or before loading input plane `plane`, the first
// halo plane on its way, it waits until `arrival` has landed (a pipelined pass; `waits` false:
// its chunk reads no halo that is on its way).
enum class WalkSignal { none, tells, waits };
struct WalkSignals {
    int plane = ChunkWalk::kNoSignal;
    unsigned* done = nullptr;
    ArrivalWait arrival;
    bool waits = false;
};

// A block's walk of its chunk [z0, z1) along z, upwards (Dir 1) or downwards (Dir -1): each
// step loads one input plane, moves every level on by a plane and stores the top level's plane
// once it lies in the chunk, signalling as `Signal` and `sig` say.
template <class T, class S, int Levels, int V, int R, int Rows, int Dir, WalkSignal Signal>
__device__ __forceinline__ void walk_chunk_3d(
    const LevelsPlanes<T, Levels, V, R, Rows, kReadsField<S>>& tile, FieldView<const T> in,
    FieldView<T> out, const Box& live, const AxisCoeffs<T>& r, const TileThread3d<T, V, R>& th,
    int z0, int z1, const WalkSignals& sig) {
    using P = Pack<T, V>;
    const std::int64_t sy = in.ext.sy;
    const std::int64_t sz = Dir * in.ext.sz;                    // a plane on along the walk
    const int first = Dir > 0 ? z0 - Levels : z1 - 1 + Levels;  // the input plane of step 0
    // Dereferenced only where `loads` (load) and `stores` (store).
    const T* load_at = in.data + in.ext.index(th.i, th.j0, first);
    const T* field_at = r.field + in.ext.index(th.i, th.j0, first);  // with kReadsField<S>
    T* store_at = out.data + in.ext.index(th.i, th.j0, first - 2 * Dir * Levels);
    const int steps = (z1 - z0) + 3 * Levels;
    const int load_steps = (z1 - z0) + 2 * Levels;
    // Step s's input packs into input slot s % 3, one copy group per step (empty past the box).
    auto prefetch = [&](int s, int slot) {
#pragma unroll
        for (int q = 0; q < R; ++q) {
            if (th.loads[q] && s < load_steps) {
                __pipeline_memcpy_async(tile.input(slot) + 32 * q, load_at + q * sy, sizeof(P));
                if constexpr (kReadsField<S>)
                    __pipeline_memcpy_async(tile.field(s) + 32 * q, field_at + q * sy, sizeof(P));
            }
        }
        __pipeline_commit();
        load_at += sz;
        if constexpr (kReadsField<S>) field_at += sz;
    };
    prefetch(0, 0);
    prefetch(1, 1);
    __syncthreads();
    std::conditional_t<kReadsField<S>, FieldWindow<T, Levels, V, R>, NoFieldWindow> fw;
    auto step = [&](auto slot, int t, T(&newest)[Levels][R * V], T(&middle)[Levels][R * V],
                    T(&oldest)[Levels][R * V]) {
        constexpr int kSlot = decltype(slot)::value;
        const int s = t + kSlot;
        __pipeline_wait_prior(1);  // step s's group is complete, s + 1's may not be
        P input[R];
#pragma unroll
        for (int q = 0; q < R; ++q)
            input[q] = th.loads[q] && s < load_steps ? tile.input(kSlot)[32 * q] : P{};
        prefetch(s + 2, (kSlot + 2) % 3);  // the slot read one step ago
        // The field's plane of step s - 1 (the thread's own copy, complete a step ago).
        if constexpr (kReadsField<S>) fw.advance(tile.field(s - 1));
        P top[R];
        levels_step_3d<T, S, Levels, V, R, Rows, kSlot, Dir>(
            tile, first + Dir * s, s, newest, middle, oldest, input, th, fw, live, r, top);
        const int z_out = first + Dir * (s - 2 * Levels);
        if (z_out >= z0 && z_out < z1) {
#pragma unroll
            for (int q = 0; q < R; ++q)
                if (th.stores[q].any) th.stores[q].store(store_at + q * sy, top[q].v);
        }
        store_at += sz;
        __syncthreads();
    };
    if constexpr (Signal == WalkSignal::tells) {
        // Plane sig.plane is stored in step s_tell; the block tells after the three steps
        // that hold it (rotating_steps' pause), at most two planes later.
        const int s_tell = Dir * (sig.plane - first) + 2 * Levels;
        const bool tells = sig.plane != ChunkWalk::kNoSignal;
        rotating_steps<T, Levels, R * V>(steps, step, tells ? (s_tell / 3 + 1) * 3 : 0, [&] {
            if (tells) tell_stored(sig.done);
        });
    } else if constexpr (Signal == WalkSignal::waits) {
        // Input plane sig.plane is loaded in step s_wait, its copy issued two steps before; the
        // block waits before the three steps that issue it (at most two planes early), or
        // before its first loads.
        const int s_wait = Dir * (sig.plane - first);
        rotating_steps<T, Levels, R * V>(steps, step, s_wait < 2 ? 0 : (s_wait - 2) / 3 * 3, [&] {
            if (sig.waits) wait_for_arrival(sig.arrival);
        });
    } else {
        rotating_steps<T, Levels, R * V>(steps, step);
    }
}

// walk_chunk_3d downwards where `down`, else upwards.
template <class T, class S, int Levels, int V, int R, int Rows, WalkSignal Signal>
__device__ __forceinline__ void walk_chunk_either_way(
    bool down, const LevelsPlanes<T, Levels, V, R, Rows, kReadsField<S>>& tile,
    FieldView<const T> in, FieldView<T> out, const Box& live, const AxisCoeffs<T>& r,
    const TileThread3d<T, V, R>& th, int z0, int z1, const WalkSignals& sig) {
    if (down) {
        walk_chunk_3d<T, S, Levels, V, R, Rows, -1, Signal>(tile, in, out, live, r, th, z0, z1,
                                                            sig);
    } else {
        walk_chunk_3d<T, S, Levels, V, R, Rows, 1, Signal>(tile, in, out, live, r, th, z0, z1, sig);
    }
}

// How a levels launch's blocks walk: every chunk upwards in the grid's order (plain); block
// blockIdx.x of `order` (a one-dimensional launch), each face block walking its chunk as
// order.walk says and adding one to *faces_done once it has stored its face points
// (faces_first); or in the grid's order, each block whose chunk reads a halo of `arrivals` walking
// towards it and waiting for it to land first (pipelined: pipelined_walk). One kernel each, so
// that the plain pass's code is its own.
enum class LevelsOrder { plain, faces_first, pipelined };

template <class T, class S, int Levels, int V, int R, int Rows, LevelsOrder Order>
__global__ void __launch_bounds__(32 * Rows, 1)
    stencil_levels_3d_kernel(FieldView<const T> in, FieldView<T> out, Box box, Box live,
                             AxisCoeffs<T> r, int planes, BlockOrder order, unsigned* faces_done,
                             HaloArrivals arrivals) {
    using P = Pack<T, V>;
    using Tile = LevelsPlanes<T, Levels, V, R, Rows, kReadsField<S>>;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    // Points a tile writes: along x a multiple of V (tiles start on a multiple of V, aligned
    // loads), along y every row but the ring's.
    constexpr int kStrideX = levels_3d_stride_x(V, Levels);
    constexpr int kStrideY = Rows * R - 2 * Levels;
    const int tx = static_cast<int>(threadIdx.x);
    const int row0 = R * static_cast<int>(threadIdx.y);  // the thread's first tile row
    const Tile tile(reinterpret_cast<P*>(smem_raw), tx, static_cast<int>(threadIdx.y));
    int block[3] = {static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y),
                    static_cast<int>(blockIdx.z)};  // tile x, tile y, chunk
    if constexpr (Order == LevelsOrder::faces_first) order.block(blockIdx.x, block);
    const int x0 = levels_3d_first_x(box.lo[0], V, Levels);  // the first tile's first point
    const int tile_x = x0 + block[0] * kStrideX;
    TileThread3d<T, V, R> th;
    th.i = tile_x + V * tx;
    th.j0 = box.lo[1] - Levels + block[1] * kStrideY + row0;
    const int z0 = box.lo[2] + block[2] * planes;
    const int z1 = min(z0 + planes, box.hi[2]);
    // A pack with a point a level reads is loaded whole (row padding and the field's slack
    // hold the rest; those points only feed the ring).
    levels_3d_masks<T, Levels, V, R, kStrideX, kStrideY>(box, live, th.i, th.j0, row0, tile_x,
                                                         th.loads, th.stores, th.column_live);
    // The tile's first and last rows read their own row as the missing y neighbour: they are
    // ring points, invalid after the first level whatever they read.
    th.down = threadIdx.y > 0 ? -32 : 0;
    th.up = static_cast<int>(threadIdx.y) < Rows - 1 ? 32 : 0;
    // The level planes start at zero (the first steps' reads of planes not yet made); the input
    // slots are read only where a copy filled them.
    for (int c = 0; c < 3 * Levels; ++c) {
#pragma unroll
        for (int q = 0; q < Tile::kEdges; ++q) tile.cell[c * Tile::kPlane + 32 * q] = P{};
    }
    if constexpr (Order == LevelsOrder::faces_first) {
        const ChunkWalk w = order.walk(block[0], block[1], z0, z1);
        WalkSignals sig;
        sig.plane = w.signal_after;
        sig.done = faces_done;
        walk_chunk_either_way<T, S, Levels, V, R, Rows, WalkSignal::tells>(
            w.down, tile, in, out, live, r, th, z0, z1, sig);
    } else if constexpr (Order == LevelsOrder::pipelined) {
        const PipelinedWalk w = pipelined_walk(arrivals, z0, z1, Levels);
        if (w.both) __trap();  // the launch makes no such chunk
        WalkSignals sig;
        sig.plane = w.wait_plane;
        sig.waits = w.any_wait();
        if (sig.waits) {
            sig.arrival = {arrivals.ready[w.face], *arrivals.base[w.face] + arrivals.pass};
        }
        walk_chunk_either_way<T, S, Levels, V, R, Rows, WalkSignal::waits>(
            w.down, tile, in, out, live, r, th, z0, z1, sig);
    } else {
        walk_chunk_3d<T, S, Levels, V, R, Rows, 1, WalkSignal::none>(tile, in, out, live, r, th, z0,
                                                                     z1, {});
    }
}

}  // namespace gridsim::cuda
