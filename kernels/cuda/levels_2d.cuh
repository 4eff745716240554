// Temporal blocking in 2D: the levels kernel and the summing pass.
#pragma once

#include <algorithm>

#include "kernels/cuda/level_sums.cuh"

namespace gridsim::cuda {

// Output rows per block of a 2D levels launch (at most): each block also steps through
// 3 x levels rows it does not store (the pipeline filling and draining).
constexpr int kLevelRows2d = 512;
// The most levels of a 2D pass of a stencil that reads a coefficient field (docs/tuning.md,
// "Coefficient fields in 2D passes").
constexpr int kMaxFieldLevels2d = 4;

// `live` within `box` grown by `grow` along x and y: the points a 2D pass of `grow` + 1 levels of
// a stencil that reads a coefficient field updates, whose field stars lie within the columns and
// rows it loads (the points beyond them are never stored).
inline Box field_reach(Box live, const Box& box, int grow) {
    for (int d = 0; d < 2; ++d) {
        live.lo[d] = std::max(live.lo[d], box.lo[d] - grow);
        live.hi[d] = std::min(live.hi[d], box.hi[d] + grow);
    }
    return live;
}

// Temporal blocking in 2D (TimeBlocking::apply_levels): `Levels` sweeps in one pass over memory. A
// block holds a tile of blockDim.x * V columns, V consecutive columns per thread, and writes the
// middle `stride` of them (the Levels columns on each side are computed redundantly, one fewer
// valid per level); it walks a chunk of `rows` output rows along y. Each step loads one input
// row and moves every level on by one row, level j lagging 2j rows behind the input: the three
// rows of level j - 1 that level j reads were made one, two and three steps earlier. A thread
// keeps them for its own columns in registers, and shares its first and last column through a
// ring of three shared rows per level: a row made at step t is read at step t + 2 and
// overwritten at step t + 3, so one barrier per step orders every access. A loaded row (level 0)
// goes into the ring a step after its load, still a step before it is read, so that no thread
// waits at the barrier for its load to arrive (ncu: a share of the summing pass's stalls). The
// register rows rotate their roles every step (the step body is unrolled three times) instead of
// being copied. Points outside `live` (global Dirichlet points) keep their value at every level;
// the stencil is stencil_point with the stream kernel's arguments, so every point is bitwise the
// same as `Levels` sweeps of apply(). A stencil that reads a coefficient field (up to
// kMaxFieldLevels2d levels) gathers each live point's field star from memory at the point's
// index, as the wide stream kernel does (the field's rows around the levels' rows stay in L1).
template <class T, int Levels, int V>
struct LevelsTile {
    using Rows = T[Levels][V];  // one value per level and column
    T* ring;                    // [3 slots][Levels][2 sides][blockDim.x + 2]
    int width;                  // blockDim.x + 2
    int tid;

    __device__ T* cell(int slot, int level, int side) const {
        return ring + ((slot * Levels + level) * 2 + side) * width + tid + 1;
    }
    // The ring's edge cells, read only for columns never stored, hold zeros.
    __device__ void clear_edges() const {
        if (tid < 6 * Levels) {
            ring[tid * width] = T(0);
            ring[tid * width + width - 1] = T(0);
        }
    }
};

// Where a thread finds its points in memory: point e of row `row` at column + row * sy + e (a
// stencil that reads a coefficient field gathers its field star there).
struct LevelColumns {
    std::int64_t column;
    std::int64_t sy;
};

// A live point of a 2D levels kernel of a stencil that reads a coefficient field, from its star
// of level j - 1: the point function with the field's star gathered from memory (through L1) at
// the point's index `at`, as the wide stream kernel gathers it.
template <class T, class S>
__device__ __forceinline__ T field_level_point(T c, T xm, T xp, T ym, T yp, std::int64_t at,
                                               std::int64_t sy, const AxisCoeffs<T>& r) {
    const std::int64_t stride[3] = {1, sy, 0};
    return apply_point<T, 2, S>(Star<T>(c, xm, xp, ym, yp, c, c), at, stride, r);
}

// kWhole: every row the block's walk reaches and every column of the warp is live, and each of
// its threads sums all its columns or none (levels_2d): no live test, and no sum that looks at
// single columns.
template <class T, class S, int Levels, int V, int Slot, bool kWhole, class Sums>
__device__ __forceinline__ void levels_step(const LevelsTile<T, Levels, V>& tile, int t,
                                            T (&newest)[Levels][V], T (&middle)[Levels][V],
                                            T (&oldest)[Levels][V], const T (&input)[V],
                                            const bool (&column_live)[V], int first,
                                            const Box& live, const AxisCoeffs<T>& r, T (&top)[V],
                                            Sums& sums, const LevelColumns& at) {
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
            if constexpr (kReadsField<S>) {  // no field star gathered for the others
                v[e] = row_live && column_live[e]
                           ? field_level_point<T, S>(c, xm, xp, oldest[j - 1][e], newest[j - 1][e],
                                                     at.column + row * at.sy + e, at.sy, r)
                           : c;
            } else {
                v[e] =
                    stencil_point<T, 2, S>(c, xm, xp, oldest[j - 1][e], newest[j - 1][e], c, c, r);
                if (!(row_live && (kWhole || column_live[e]))) v[e] = c;
            }
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

// Which of a thread's V columns (from c0) a tile (from tile_x, `lead` ring columns, then
// `stride` stored) loads, stores and finds live.
template <class T, int Levels, int V>
__device__ __forceinline__ void levels_2d_masks(const Box& box, const Box& live, int tile_x, int c0,
                                                int lead, int stride, PackMask<T, V>& loads,
                                                PackMask<T, V>& stores, bool (&column_live)[V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) {
        const int c = c0 + e;
        loads.set(e, c >= box.lo[0] - Levels && c < box.hi[0] + Levels);
        stores.set(
            e, c >= tile_x + lead && c < tile_x + lead + stride && c >= box.lo[0] && c < box.hi[0]);
        column_live[e] = c >= live.lo[0] && c < live.hi[0];
    }
}

// Trimmed (sum_pass_trims): the warps with no column the levels read ([lo - Levels, hi +
// Levels)) leave after setting up (their ring cells, which the warps beside them read, hold
// zeros), and the others' barriers count only them. Sets whether this thread's warp works and
// how many threads do.
template <class T, int Levels, int V>
__device__ __forceinline__ void trim_warps(const LevelsTile<T, Levels, V>& tile, const Box& box,
                                           int tile_x, int threads, bool& works, int& working) {
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

// A summing pass's sums for this thread (LevelSums), its running sums zero.
template <class T, int Levels, int V>
__device__ __forceinline__ LevelSums<T, Levels, V> start_level_sums(
    const LevelSumLayout& layout, double* block_sums, const unsigned* words, double* sum_acc,
    int group0, int tile_index, int y0, int c0, const PackMask<T, V>& stores) {
    using Summing = LevelSums<T, Levels, V>;
    Summing s{layout, block_sums, words, sum_acc + threadIdx.x};
    s.warp = threadIdx.x / 32;
    s.lane = threadIdx.x % 32;
    s.group = group0 + tile_index * Summing::kSumWarps + static_cast<int>(s.warp);
    s.row0 = y0 - Summing::kRowsBefore;
#pragma unroll
    for (int e = 0; e < V; ++e) {  // the summed boxes lie within the pass's box
        const int c = c0 + e;
        s.keep[e] = stores.on[e] && c >= layout.x_lo && c < layout.x_hi;
    }
#pragma unroll
    for (int l = 0; l < Levels; ++l) s.acc[l * Summing::kSumThreads] = 0.0;
    return s;
}

// A summing pass's shared set-up: the block's level sums zero, and the word of every row its
// walk reaches from row0 (0 outside [y0, y1): not summed).
template <class T, int Levels, int V>
__device__ __forceinline__ void start_sum_rows(const LevelSumLayout& layout, double* block_sums,
                                               unsigned* words, int row0, int y0, int y1,
                                               int threads) {
    using Summing = LevelSums<T, Levels, V>;
    if (threadIdx.x < Levels * Summing::kSumWarps) block_sums[threadIdx.x] = 0.0;
    for (int row = row0 + static_cast<int>(threadIdx.x); row < y1 + Summing::kRowsAfter;
         row += threads) {
        words[row - row0] = row >= y0 && row < y1 ? row_word(place_row(layout, row)) : 0u;
    }
}

// The rows a thread of the 2D levels kernel loads and stores (the kernel's own variables, by
// reference): step t loads input row first + t and stores the top level's row first + t -
// 2 Levels. The offset of a row in the thread's column: a summing pass (Kept) keeps the rows it
// loads and stores from step to step, one row further each call (a row's 64-bit offset took 7
// instructions, SASS); the plain passes, whose registers are scarcer, compute it afresh.
template <class T, int Levels, int V, bool Kept>
struct LevelRows {
    // A row is used a step after its load, which under load was not always long enough (ncu:
    // the pass's threads waited on it): the load also asks L2 for the row kAhead steps on.
    static constexpr int kAhead = 2;
    const T* const& in;
    T* const& out;
    const std::int64_t& column;
    const std::int64_t& sy;
    const std::int64_t& ahead;  // kAhead rows
    const int& first;
    const int& y0;
    const int& y1;
    const PackMask<T, V>& loads;
    const PackMask<T, V>& stores;
    std::int64_t& load_at;   // step 0's row, then the next load's (Kept)
    std::int64_t& store_at;  // step 0's top level row, then the next store's (Kept)

    __device__ std::int64_t offset(std::int64_t& kept, int row) const {
        if constexpr (Kept) {
            const std::int64_t at = kept;
            kept += sy;
            return at;
        } else {
            return column + row * sy;
        }
    }
    __device__ void load(int t, T (&v)[V]) const {
        const int row = first + t;
        const std::int64_t at = offset(load_at, row);
        if (loads.all && row + kAhead < y1 + Levels) prefetch_l2(in + at + ahead);
        if (row < y1 + Levels) {
            loads.load(in + at, v);
        } else {
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = T(0);
        }
    }
    __device__ void store(int t, const T (&v)[V]) const {
        const int row = first + t - 2 * Levels;
        const std::int64_t at = offset(store_at, row);
        if (stores.any && row >= y0 && row < y1) stores.store(out + at, v);
    }
};

// The 2D levels kernel's walk: `steps` steps, each a load, a levels_step and a store, then the
// block's (or, trimmed, the working warps') barrier.
template <class T, class S, int Levels, int V, bool kWhole, bool kTrims, class Rows, class Sums>
__device__ __forceinline__ void walk_levels(const LevelsTile<T, Levels, V>& tile, const Rows& io,
                                            int steps, const bool (&column_live)[V], int first,
                                            const Box& live, const AxisCoeffs<T>& r, Sums& sums,
                                            int working) {
    // Step t + Slot with the register rows in the roles that step gives them; its ring slot is
    // (t + Slot) % 3 = Slot, t staying a multiple of 3 at the top of the loop.
    auto step = [&](auto slot, int t, T(&newest)[Levels][V], T(&middle)[Levels][V],
                    T(&oldest)[Levels][V]) {
        constexpr int kSlot = decltype(slot)::value;
        T input[V];
        T top[V];
        io.load(t + kSlot, input);
        levels_step<T, S, Levels, V, kSlot, kWhole>(tile, t + kSlot, newest, middle, oldest, input,
                                                    column_live, first, live, r, top, sums,
                                                    LevelColumns{io.column, io.sy});
        io.store(t + kSlot, top);
        if constexpr (kTrims) {
            sync_warps(working);
        } else {
            __syncthreads();
        }
    };
    rotating_steps<T, Levels, V>(steps, step);
}

// `lead`: columns of the tile before the stored ones (its left ring). Rows: level_block_rows.
// Summing (Sum = change): the tile is sum_pass_groups' (LevelSums); `group0`: the stream block of
// tile 0's first warp.
template <class T, class S, int Levels, int V, StencilSum Sum>
__device__ __forceinline__ void levels_2d(FieldView<const T> in, FieldView<T> out, const Box& box,
                                          const Box& live, const AxisCoeffs<T>& r, int x0,
                                          int stride, int lead, int row_anchor, int rows,
                                          const LevelSumLayout& sum_layout, int group0) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    constexpr bool kSums = Sum != StencilSum::none;
    constexpr bool kTrims = kSums && sum_pass_trims<T>();
    // A summing pass's block size is a constant, and so are its ring cells' offsets: from
    // blockDim.x they took integer multiplies at every access (SASS).
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
    levels_2d_masks<T, Levels, V>(box, live, tile_x, c0, lead, stride, loads, stores, column_live);
    using Summing = LevelSums<T, Levels, V>;
    using Sums = std::conditional_t<kSums, Summing, NoLevelSums>;
    double* block_sums =
        reinterpret_cast<double*>(smem_raw + 3 * Levels * 2 * (threads + 2) * sizeof(T));
    double* sum_acc = block_sums + Levels * Summing::kSumWarps;  // [Levels][kSumThreads]
    unsigned* words = reinterpret_cast<unsigned*>(block_sums + Summing::kSharedDoubles);
    Sums sums = [&] {
        if constexpr (kSums) {
            return start_level_sums<T, Levels, V>(sum_layout, block_sums, words, sum_acc, group0,
                                                  tile_index, y0, c0, stores);
        } else {
            return NoLevelSums{};
        }
    }();
    const std::int64_t sy = in.ext.sy;
    const std::int64_t column = in.ext.index(c0, 0, 0);
    tile.clear_edges();
    bool works = true;
    int working = threads;  // the threads of the warps that work
    if constexpr (kTrims) trim_warps(tile, box, tile_x, threads, works, working);
    if constexpr (kSums)
        start_sum_rows<T, Levels, V>(sum_layout, block_sums, words, sums.row0, y0, y1, threads);
    __syncthreads();
    const int steps = (y1 - y0) + 3 * Levels;
    const std::int64_t ahead = LevelRows<T, Levels, V, kSums>::kAhead * sy;
    std::int64_t load_at = column + first * sy;                  // step 0's row
    std::int64_t store_at = column + (first - 2 * Levels) * sy;  // step 0's top level row
    LevelRows<T, Levels, V, kSums> io{in.data, out.data, column, sy,     ahead,   first,
                                      y0,      y1,       loads,  stores, load_at, store_at};
    // A summing pass's loop in two copies (sum_pass_whole_rows): kWhole (levels_step) for a warp
    // whose walk's rows and columns are all live and whose threads each sum all their columns or
    // none (every warp but those at the domain's boundary or a box's x edge), so that its steps
    // test no point.
    auto walk = [&](auto whole) {
        walk_levels<T, S, Levels, V, decltype(whole)::value, kTrims>(tile, io, steps, column_live,
                                                                     first, live, r, sums, working);
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

template <class T, class S, int Levels, int V>
__global__ void stencil_levels_2d_kernel(FieldView<const T> in, FieldView<T> out, Box box, Box live,
                                         AxisCoeffs<T> r, int x0, int stride, int lead,
                                         int row_anchor, int rows) {
    levels_2d<T, S, Levels, V, StencilSum::none>(in, out, box, live, r, x0, stride, lead,
                                                 row_anchor, rows, LevelSumLayout{}, 0);
}

// The summing pass: sum_pass_threads threads. Its sums make it bound by instruction issue, each
// level's chain of dependent double adds, so warps to switch between are what it runs short of:
// sum_pass_blocks gives each (precision, levels) the register cap of the most blocks per
// multiprocessor that spill nothing and ran fastest (docs/tuning.md, "Summing pass register
// caps").
template <class T, int Levels>
constexpr int sum_pass_blocks() {
    if constexpr (sizeof(T) == 8)
        return Levels == 2 ? 8 : (Levels == 3 ? 5 : (Levels == 4 ? 4 : 2));
    if constexpr (Levels == 2) return 4;
    if constexpr (Levels == 3) return 3;
    if constexpr (Levels == 4) return 2;
    return 1;
}
template <class T, class S, int Levels, int V>
__global__ void __launch_bounds__(sum_pass_threads<T>(), (sum_pass_blocks<T, Levels>()))
    stencil_levels_2d_sum_kernel(FieldView<const T> in, FieldView<T> out, Box box, Box live,
                                 AxisCoeffs<T> r, int x0, int stride, int lead, int row_anchor,
                                 int rows, LevelSumLayout sum_layout, int group0) {
    levels_2d<T, S, Levels, V, S::kSum>(in, out, box, live, r, x0, stride, lead, row_anchor, rows,
                                        sum_layout, group0);
}

}  // namespace gridsim::cuda
