// The CUDA summing pass (temporal blocking in 2D with the residual of every level): the layout
// of its block partials over the boxes a residual sweep sums, one per column range of those
// boxes, and its launches over a box, one per column range the box meets.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/levels_2d.cuh"
#include "kernels/cuda/residual_sums.hpp"
#include "kernels/cuda/stream_shapes.cuh"
#include "kernels/level_chunks.hpp"
#include "kernels/sum_columns.hpp"

namespace gridsim::cuda {

template <class T>
class SummingPass {
public:
    SummingPass(const StreamShapes<T>& shapes, ResidualSums& sums, int multiprocessors)
        : shapes_(shapes), sums_(sums), multiprocessors_(multiprocessors) {}

    // 2D jacobi sweeps whose summing launches the levels kernel can reproduce: the stream kernel
    // with its default shapes, boxes in packs (StreamShapes::takes_packs) whose columns are the
    // same or apart (column_ranges; each range's boxes are then row slabs of its columns), at
    // most kMaxBoxes of them, as a sweep launches in one go.
    [[nodiscard]] bool sums_levels(const std::vector<Box>& boxes, int dims) const {
        const LaunchConfig& cfg = shapes_.config();
        if (dims != 2 || boxes.empty() || boxes.size() > static_cast<std::size_t>(kMaxBoxes) ||
            cfg.points != 0 || cfg.block_x != 0)
            return false;
        for (const Box& b : boxes) {
            if (!shapes_.takes_packs(b, dims, StencilSum::change)) return false;
        }
        return !column_ranges(boxes).empty();
    }

    // The pass's layouts over every box its sweeps sum (one per column range), the partials of
    // all in the sweep's order, `levels` runs of them.
    void start(const std::vector<Box>& sum_boxes, int levels) {
        if (levels < 2 || levels > kMaxLevels2d)
            throw std::logic_error("a summing pass takes 2 to 8 levels");
        const std::vector<ColumnRange> ranges = column_ranges(sum_boxes);
        if (ranges.empty() || sum_boxes.size() > static_cast<std::size_t>(kMaxBoxes))
            throw std::logic_error("a summing pass's boxes are not laid out in column ranges");
        std::vector<unsigned> first;  // each box's first partial, in the sweep's order
        unsigned per_level = 0;
        for (const Box& b : sum_boxes) {
            first.push_back(per_level);
            per_level += static_cast<unsigned>(summing_launch(b).blocks());
        }
        double* partial = sums_.partial_slots(static_cast<long long>(levels) * per_level);
        layouts_.clear();
        for (const ColumnRange& range : ranges) {
            LevelSumLayout l = range_layout(sum_boxes, range, first);
            l.per_level = per_level;
            l.partial = partial;
            layouts_.push_back(l);
        }
        levels_ = levels;
    }

    // `levels` levels over `b`: one launch per column range that `b` meets, over its columns;
    // the first and last range also over b's columns beyond them (a pass into the halos).
    template <class S>
    void apply(const AxisCoeffs<T>& r, FieldView<const T> in, FieldView<T> out, const Box& b,
               const Box& live, int levels, cudaStream_t s) {
        if (levels != levels_)
            throw std::logic_error("apply_levels_summing: the levels of start_summing_pass");
        int left = layouts_.front().x_lo;
        int right = layouts_.front().x_hi;
        for (const LevelSumLayout& l : layouts_) {
            left = std::min(left, l.x_lo);
            right = std::max(right, l.x_hi);
        }
        for (const LevelSumLayout& l : layouts_) {
            Box part = b;
            part.lo[0] = l.x_lo == left ? b.lo[0] : std::max(b.lo[0], l.x_lo);
            part.hi[0] = l.x_hi == right ? b.hi[0] : std::min(b.hi[0], l.x_hi);
            if (part.empty()) continue;
            with_levels<2, kMaxLevels2d>(levels, [&](auto k) {
                this->template launch<S, decltype(k)::value>(r, in, out, part, live, s, l);
            });
        }
    }

private:
    static constexpr int V = StreamShapes<T>::kVector;
    // The shortest chunk of a float summing pass's many waves (sum_pass_chunk_rows).
    static constexpr int kSumChunkRows = 64;

    [[nodiscard]] Launch summing_launch(const Box& b) const {
        return shapes_.template walk_launch<2>(b, V, StencilSum::change);
    }

    // The layout of one column range: its boxes, each from its first partial, the one with the
    // most rows in slot 0 (the pass's row chunks start on its block rows, so no box straddles
    // two chunks).
    LevelSumLayout range_layout(const std::vector<Box>& boxes, const ColumnRange& range,
                                const std::vector<unsigned>& first) const {
        LevelSumLayout l;
        l.count = static_cast<int>(range.boxes.size());
        l.x_lo = range.lo;
        l.x_hi = range.hi;
        l.x0 = pack_start<V>(l.x_lo);
        for (int k = 0; k < l.count; ++k) {
            const int i = range.boxes[static_cast<std::size_t>(k)];
            const Box& b = boxes[static_cast<std::size_t>(i)];
            const Launch w = summing_launch(b);
            if (w.groups.warps != sum_pass_warps<T>())
                throw std::logic_error("a summing pass's box is not walked in its tiles' blocks");
            l.lo[k] = b.lo[1];
            l.hi[k] = b.hi[1];
            l.points_log2[k] = log2_exact(w.points);
            l.block_rows_log2[k] = log2_exact(w.points * static_cast<int>(w.block.y));
            l.first[k] = first[static_cast<std::size_t>(i)];
            l.gx = w.grid.x;
        }
        int most = 0;
        for (int k = 1; k < l.count; ++k) {
            if (l.hi[k] - l.lo[k] > l.hi[most] - l.lo[most]) most = k;
        }
        std::swap(l.lo[0], l.lo[most]);
        std::swap(l.hi[0], l.hi[most]);
        std::swap(l.points_log2[0], l.points_log2[most]);
        std::swap(l.block_rows_log2[0], l.block_rows_log2[most]);
        std::swap(l.first[0], l.first[most]);
        return l;
    }
    static int log2_exact(int v) {
        int n = 0;
        while ((1 << n) < v) ++n;
        if ((1 << n) != v) throw std::logic_error("a stream launch's rows are not a power of two");
        return n;
    }

    // A launch over `b` (columns of one range): its tiles are the residual sweep's x blocks in
    // sum_pass_groups (one warp each, LevelSums; the ring in the end lanes) from layout.x0; its
    // rows are chunked on the stream blocks' rows of layout box 0, so each block of the pass sums
    // whole stream blocks.
    template <class S, int Levels>
    void launch(const AxisCoeffs<T>& r, FieldView<const T> in, FieldView<T> out, const Box& b,
                const Box& live, cudaStream_t s, const LevelSumLayout& layout) {
        using Summing = LevelSums<T, Levels, V>;
        constexpr int kWarps = Summing::kSumWarps;
        constexpr PackGroups kGroups = sum_pass_groups<T>();
        static_assert(kGroups.ring * V >= Levels && kGroups.warps == kWarps);
        constexpr int kRingPacks = kGroups.ring;
        const int stride = kGroups.stride() * V;
        // The first tile's stored columns start at or before b.lo[0], on the stream grid.
        const int back = static_cast<int>(ceil_div(std::max(0, layout.x0 - b.lo[0]), stride));
        const int stored0 = layout.x0 - back * stride;
        const unsigned tiles = ceil_div(b.hi[0] - stored0, stride);
        const int threads = Summing::kSumThreads;
        auto shared_bytes = [&](int row_words) {
            return 3 * Levels * 2 * (threads + 2) * sizeof(T) +
                   Summing::kSharedDoubles * sizeof(double) +
                   static_cast<std::size_t>(row_words + Summing::kRowsBefore +
                                            Summing::kRowsAfter) *
                       sizeof(unsigned);
        };
        auto kernel = stencil_levels_2d_sum_kernel<T, S, Levels, V>;
        // A wave, counted with the row words of the longest block there can be (a chunk and the
        // shell and ring rows beyond layout box 0).
        static std::size_t allowed = 0;  // the rows, and so the bytes, differ between launches
        static long long wave = 0;
        if (wave == 0) {
            const std::size_t most = shared_bytes(kLevelRows2d + 64);
            allowed = allow_shared(kernel, most) ? most : 0;
            wave = wave_slots(kernel, threads, most, multiprocessors_);
        }
        // Chunks of whole stream blocks' rows of layout box 0: a float pass (chunks fastest)
        // takes many waves of short chunks where it can, a double pass the fewest waves x steps.
        const int anchor_rows = layout.hi[0] - layout.lo[0];
        const int block_rows = 1 << layout.block_rows_log2[0];
        const int rows =
            sum_pass_trims<T>()
                ? sum_pass_chunk_rows(tiles, anchor_rows, Levels, wave, kLevelRows2d, block_rows,
                                      kSumChunkRows)
                : level_chunk_rows(tiles, anchor_rows, Levels, wave, kLevelRows2d, block_rows);
        // The whole pass's chunks that `b` meets (a split pass launches each box of its split
        // on its own), cut at b's rows, so that every block sums whole stream blocks.
        const ChunkSpan span = chunks_meeting(b.lo[1], b.hi[1], layout.lo[0], rows,
                                              static_cast<int>(ceil_div(anchor_rows, rows)));
        const int anchor = layout.lo[0] + span.first * rows;
        const int chunks = span.count;
        // (chunks, tiles) where the pass trims its last tile, else (tiles, chunks): levels_2d.
        const dim3 grid = sum_pass_trims<T>() ? dim3(chunks, tiles, 1) : dim3(tiles, chunks, 1);
        // The row words (LevelSums) of the longest block: the first and last also take the rows
        // outside layout box 0's chunks.
        int longest = rows;
        for (int y : {0, chunks - 1}) {
            const RowRange own = level_block_rows(y, chunks, b, anchor, rows);
            longest = std::max(longest, own.y1 - own.y0);
        }
        const std::size_t smem = shared_bytes(longest);
        if (smem > allowed) allowed = allow_shared(kernel, smem) ? smem : 0;
        kernel<<<grid, threads, smem, s>>>(in, out, b, live, r, stored0 - kRingPacks * V, stride,
                                           kRingPacks * V, anchor, rows, layout, -back * kWarps);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    const StreamShapes<T>& shapes_;
    ResidualSums& sums_;
    int multiprocessors_;
    std::vector<LevelSumLayout> layouts_;  // one per column range (start)
    int levels_ = 0;
};

}  // namespace gridsim::cuda
