// What a summing pass (temporal blocking in 2D with the residual of every level) sums and how
// its tiles are shaped: the layout of its block partials, which matches the stream kernel's summing
// launches over the same boxes, and the per-thread running sums (LevelSums).
#pragma once

#include "kernels/cuda/stream_kernels.cuh"

namespace gridsim::cuda {

// What a summing pass (LevelSums::apply_levels_summing) sums over one column range (SummingPass
// keeps one layout per range), laid out as the stream kernel's summing launches over the same
// boxes lay out their partials: the boxes are row slabs over the same columns [x_lo, x_hi), box b's
// launch has blocks of 32 packs (from x0 = pack_start(x_lo)) by block_rows[b] rows, `points[b]`
// rows per thread, gx blocks across, its partials from first[b] on (block (x, y) at first[b] + y *
// gx + x); a level's partials follow the level before's, per_level apart. Rows per thread and per
// block are powers of two (log2 kept). Box 0 is the one with the most rows: the pass's row chunks
// start on its block rows, so no box straddles two chunks. At most kMaxBoxes boxes, as a sweep
// launches in one go.
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

// A summing pass's tile: sum_pass_warps warps of 32 packs, laid out as PackGroups with a ring of
// ceil(kMaxLevels2d / V) packs on each side (the ring is as wide for every k, so that a residual
// sweep's blocks, which are laid out alike, sum the same packs whatever k a later pass takes).
// The ring is computed in the end lanes of the tile's own warps, not by a warp of its own. Warps
// per tile by precision: docs/tuning.md, "Summing pass tile".
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
// tile may reach far past the box. Where sum_pass_trims holds, the pass trims that tile (its idle
// warps leave, levels_2d) and its grid is (chunks, tiles): the GPU hands blocks out x fastest, so
// the last tile's blocks come after all the others and the blocks running at once walk
// neighbouring chunks of a tile. Else its grid is (tiles, chunks), untrimmed. docs/tuning.md,
// "Summing pass last tile".
template <class T>
constexpr bool sum_pass_trims() {
    return sizeof(T) == 4;
}
// The rows a summing pass's chunks need before its warps take the whole-warp copy of the loop
// (levels_2d; 0: never): docs/tuning.md, "Summing pass whole-warp loop".
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

}  // namespace gridsim::cuda
