// The CUDA backend's stencil launches: which kernel of which family runs a box, a run of boxes, a
// pass of levels or a summing pass, in which shape, and where its block partials go.
#pragma once

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cuda/lanes.hpp"
#include "kernels/cuda/launch_shapes.cuh"
#include "kernels/cuda/levels_2d.cuh"
#include "kernels/cuda/levels_3d_launch.cuh"
#include "kernels/cuda/naive_launch.cuh"
#include "kernels/cuda/residual_sums.hpp"
#include "kernels/cuda/stream_kernels.cuh"
#include "kernels/cuda/tiled_kernel.cuh"
#include "kernels/level_chunks.hpp"

namespace gridsim::cuda {

// The Backend's stencil entry points (apply, apply_boxes, apply_levels, apply_levels_summing and
// what they ask first) for the CUDA backend; summing launches take their partials from `sums`.
template <class T>
class StencilLaunches {
public:
    StencilLaunches(const LaunchConfig& cfg, Lanes& lanes, ResidualSums& sums)
        : cfg_(cfg), lanes_(lanes), sums_(sums) {
        if (cfg_.kernel == KernelKind::naive) {
            if (cfg_.block_x == 0) {
                // The occupancy API's block size for the naive 3D heat kernel, as 32 x (n / 32).
                int min_grid = 0;
                int block = 0;
                GRIDSIM_CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(
                    &min_grid, &block,
                    stencil_naive_kernel<T, 3, StencilKind::heat, 1, StencilSum::none>, 0, 0));
                cfg_.block_x = 32;
                cfg_.block_y = std::max(1, block / 32);
            }
            if (cfg_.points == 0) cfg_.points = sizeof(T) == 4 ? kNaiveRowsFloat : kNaiveRowsDouble;
        }
    }

    [[nodiscard]] std::string description() const {
        if (cfg_.kernel == KernelKind::naive)
            return fmt::format("naive {}x{} rows {}", cfg_.block_x, cfg_.block_y, cfg_.points);
        const char* kind = cfg_.kernel == KernelKind::tiled ? "tiled" : "stream";
        if (cfg_.block_x != 0)
            return fmt::format("{} {}x{} points {}", kind, cfg_.block_x, cfg_.block_y, cfg_.points);
        const LaunchDefaults d2 = defaults(2);
        const LaunchDefaults d3 = defaults(3);
        const std::string summing = cfg_.points == 0 && cfg_.kernel == KernelKind::stream
                                        ? fmt::format(" ({} summing boxes of 2^{} points or more)",
                                                      2 * d2.points, kSumRowsFromBits)
                                        : "";
        return fmt::format("{} 2D {}x{} points {}{} / 3D {}x{} points {}", kind, d2.block_x,
                           d2.block_y, cfg_.points != 0 ? cfg_.points : d2.points, summing,
                           d3.block_x, d3.block_y, cfg_.points != 0 ? cfg_.points : d3.points);
    }

    void apply(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out, const Box& b,
               Lane lane, StencilSum sum) {
        if (b.empty()) return;
        visit(in.ext.dims, p.kind, sum, [&](auto dims, auto kind, auto with) {
            this->template launch<dims.value, kind.value, with.value>(in, out, b, p.r, lane);
        });
    }
    [[nodiscard]] bool applies_boxes() const { return cfg_.kernel == KernelKind::stream; }
    void apply_boxes(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                     const std::vector<Box>& boxes, Lane lane, StencilSum sum, int wrap_period) {
        if (!applies_boxes()) throw std::logic_error("apply_boxes needs the stream kernel");
        visit(in.ext.dims, p.kind, sum, [&](auto dims, auto kind, auto with) {
            this->template launch_boxes<dims.value, kind.value, with.value>(
                in, out, boxes, p.r, lane, SelfWrap{wrap_period});
        });
    }

    [[nodiscard]] int max_levels(int dims) const { return dims == 2 ? kMaxLevels : kMaxLevels3d; }
    void apply_levels(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                      const Box& b, const Box& live, int levels, Lane lane) {
        if (b.empty()) return;
        if (levels < 2 || levels > max_levels(in.ext.dims))
            throw std::logic_error("apply_levels: 2 to 8 levels in 2D, 2 to 4 in 3D");
        if (in.ext.dims == 3) {
            if (p.kind == StencilKind::heat) {
                launch_levels_3d<T, StencilKind::heat>(p.r, in, out, b, live, levels,
                                                       multiprocessors_, stream(lane));
            } else {
                launch_levels_3d<T, StencilKind::jacobi>(p.r, in, out, b, live, levels,
                                                         multiprocessors_, stream(lane));
            }
            return;
        }
        if (p.kind == StencilKind::heat) {
            levels_for<StencilKind::heat>(p.r, in, out, b, live, levels, stream(lane));
        } else {
            levels_for<StencilKind::jacobi>(p.r, in, out, b, live, levels, stream(lane));
        }
    }

    // 2D jacobi sweeps whose summing launches this backend's levels kernel can reproduce: the
    // stream kernel with its default shapes, every box a row slab of the same columns wide
    // enough for 16-byte packs (the x blocks are then 32 packs wide, one warp per thread row).
    [[nodiscard]] bool sums_levels(const std::vector<Box>& boxes, int dims) const {
        if (dims != 2 || boxes.empty() || boxes.size() > static_cast<std::size_t>(kMaxBoxes) ||
            cfg_.points != 0 || cfg_.block_x != 0)
            return false;
        for (const Box& b : boxes) {  // takes_packs: the stream kernel, 16-byte packs
            if (b.lo[0] != boxes[0].lo[0] || b.hi[0] != boxes[0].hi[0] || !takes_packs(b))
                return false;
        }
        return true;
    }
    // The pass's layout of partials over every box its sweeps sum, shared by its launches.
    void start_summing_pass(const std::vector<Box>& sum_boxes, int levels) {
        if (levels < 2 || levels > kMaxLevels)
            throw std::logic_error("a summing pass takes 2 to 8 levels");
        sum_layout_ = level_sum_layout(sum_boxes, levels);
        sum_levels_ = levels;
    }
    void apply_levels_summing(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                              const Box& b, const Box& live, int levels, Lane lane) {
        // The caller asked sums_levels(sum_boxes) once (Simulation::sums_in_passes).
        if (p.kind != StencilKind::jacobi || levels != sum_levels_)
            throw std::logic_error(
                "apply_levels_summing: jacobi, the levels of start_summing_pass");
        if (b.empty()) return;
        levels_for<StencilKind::jacobi>(p.r, in, out, b, live, levels, stream(lane), &sum_layout_);
    }

private:
    [[nodiscard]] cudaStream_t stream(Lane lane) const { return lanes_.stream(lane); }
    double* partial_slots(long long more) { return sums_.partial_slots(more); }
    [[nodiscard]] LaunchDefaults defaults(int dims) const {
        if (cfg_.kernel == KernelKind::tiled) return dims == 2 ? kTiled2d : kTiled3d;
        if (dims == 2) return kStream2d;
        return sizeof(T) == 4 ? kStream3dFloat : kStream3dDouble;
    }

    // The launch of a walking variant (stream, tiled) over `b`.
    // `vector`: points per thread along x (a thread then covers x from box.lo[0] rounded down to
    // a multiple of `vector`). `sum`: what the launch also sums (a residual's partials).
    template <int Dims>
    Launch walk_launch(const Box& b, int vector = 1, StencilSum sum = StencilSum::none) const {
        const bool summing = sum != StencilSum::none;
        const LaunchDefaults d = defaults(Dims);
        const int bx = cfg_.block_x != 0 ? cfg_.block_x : d.block_x;
        const int by = cfg_.block_x != 0 ? cfg_.block_y : d.block_y;
        int points = cfg_.points != 0 ? cfg_.points : d.points;
        // A 2D stream box of at least kSumRowsFrom points that sums walks twice the rows per
        // thread: half the blocks, so half the per-block sums to store and fold (docs/tuning.md,
        // "Summing launches"). A function of the box alone, so every path that sums a box sums
        // it alike.
        if (Dims == 2 && summing && cfg_.points == 0 && cfg_.kernel == KernelKind::stream &&
            b.count() >= kSumRowsFrom)
            points *= 2;
        const int x0 = b.lo[0] - ((b.lo[0] % vector) + vector) % vector;
        const int nx = static_cast<int>(ceil_div(b.hi[0] - x0, vector));
        const int ny = b.hi[1] - b.lo[1];
        const int nz = b.hi[2] - b.lo[2];
        Launch l;
        if constexpr (Dims == 3) {
            l.block = fit_block(bx, by, nx, ny);
            l.grid = dim3(ceil_div(nx, l.block.x), ceil_div(ny, l.block.y), ceil_div(nz, points));
        } else {
            const int chunks = static_cast<int>(ceil_div(ny, points));
            l.block = fit_block(bx, by, nx, chunks);
            l.grid = dim3(ceil_div(nx, l.block.x), ceil_div(chunks, l.block.y), 1);
            // A jacobi residual sweep in packs: its x blocks as a summing pass's tiles.
            if (sum == StencilSum::change && vector > 1 && l.block.x == 32) {
                l.groups = sum_pass_groups<T>();
                l.grid.x = l.groups.blocks(nx);
            }
        }
        l.points = points;
        if (cfg_.kernel == KernelKind::tiled) {
            const std::size_t rows = Dims == 3 ? l.block.y + 2 : l.block.y;
            l.smem = 2 * (l.block.x + 2) * rows * sizeof(T);
        }
        return l;
    }
    static constexpr int kSumRowsFromBits = 21;
    static constexpr std::int64_t kSumRowsFrom = std::int64_t{1} << kSumRowsFromBits;

    // f(dims, kind, sum) with the run-time values as std::integral_constant. The sums each kind
    // needs, and no others, are compiled: jacobi's residual (the squared change) and heat's
    // p . A p for the CG (the product).
    template <class F>
    static void visit(int dims, StencilKind kind, StencilSum sum, F&& f) {
        auto with_sum = [&](auto d, auto k) {
            constexpr StencilSum kSum = decltype(k)::value == StencilKind::jacobi
                                            ? StencilSum::change
                                            : StencilSum::product;
            if (sum == StencilSum::none) {
                f(d, k, std::integral_constant<StencilSum, StencilSum::none>{});
            } else if (sum == kSum) {
                f(d, k, std::integral_constant<StencilSum, kSum>{});
            } else {
                throw std::logic_error("stencil sum not compiled for this stencil kind");
            }
        };
        auto with_kind = [&](auto d) {
            if (kind == StencilKind::heat) {
                with_sum(d, std::integral_constant<StencilKind, StencilKind::heat>{});
            } else {
                with_sum(d, std::integral_constant<StencilKind, StencilKind::jacobi>{});
            }
        };
        if (dims == 2) {
            with_kind(std::integral_constant<int, 2>{});
        } else {
            with_kind(std::integral_constant<int, 3>{});
        }
    }

    // Walk-axis loads each stream thread keeps in flight (the depth of its pipeline), and the
    // points of a 16-byte pack.
    static constexpr int kUnroll = GRIDSIM_WALK_BYTES / static_cast<int>(sizeof(T));
    static constexpr int kVector = 16 / static_cast<int>(sizeof(T));
    // Whether the stream kernel walks `b` in 16-byte packs of x points (a box wide enough).
    [[nodiscard]] bool takes_packs(const Box& b) const {
        return GRIDSIM_STREAM_VECTOR && cfg_.kernel == KernelKind::stream &&
               b.hi[0] - b.lo[0] >= 32 * kVector;
    }

    // `wrap` (stream kernel only): the instance that also stores the periodic walk-axis copy.
    template <int Dims, StencilKind Kind, StencilSum Sum>
    void launch(FieldView<const T> in, FieldView<T> out, const Box& b, const HeatCoeffs<T>& r,
                Lane lane, SelfWrap wrap = {}) {
        const cudaStream_t s = stream(lane);
        if (cfg_.kernel == KernelKind::naive) {
            launch_naive<T, Dims, Kind, Sum>(
                in, out, b, r, cfg_, [&](long long n) { return partial_slots(n); }, s);
            return;
        }
        constexpr bool kSums = Sum != StencilSum::none;
        const bool wraps = wrap.n > 0;
        if (takes_packs(b)) {
            const Launch l = walk_launch<Dims>(b, kVector, Sum);
            double* partial = kSums ? partial_slots(l.blocks()) : nullptr;
            auto kernel = wraps ? stencil_stream_vec_kernel<T, Dims, Kind, kUnroll / kVector,
                                                            kVector, Sum, true>
                                : stencil_stream_vec_kernel<T, Dims, Kind, kUnroll / kVector,
                                                            kVector, Sum, false>;
            kernel<<<l.grid, l.block, 0, s>>>(in, out, b, r, l.points, partial, wrap, l.groups);
            GRIDSIM_CUDA_CHECK(cudaGetLastError());
            return;
        }
        const Launch l = walk_launch<Dims>(b, 1, Sum);
        double* partial = kSums ? partial_slots(l.blocks()) : nullptr;
        if (cfg_.kernel == KernelKind::tiled) {
            stencil_tiled_kernel<T, Dims, Kind, kUnroll, Sum>
                <<<l.grid, l.block, l.smem, s>>>(in, out, b, r, l.points, partial);
        } else {
            auto kernel = wraps ? stencil_stream_kernel<T, Dims, Kind, kUnroll, Sum, true>
                                : stencil_stream_kernel<T, Dims, Kind, kUnroll, Sum, false>;
            kernel<<<l.grid, l.block, 0, s>>>(in, out, b, r, l.points, partial, wrap);
        }
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    // apply_boxes: the boxes in order, consecutive ones that take the same stream variant
    // (takes_packs, as launch() picks) in one launch each, so the partials land in the order of
    // launch() per box.
    template <int Dims, StencilKind Kind, StencilSum Sum>
    void launch_boxes(FieldView<const T> in, FieldView<T> out, const std::vector<Box>& boxes,
                      const HeatCoeffs<T>& r, Lane lane, SelfWrap wrap) {
        std::vector<std::vector<Box>> runs;
        for (const Box& b : boxes) {
            if (b.empty()) continue;
            if (runs.empty() || takes_packs(runs.back().front()) != takes_packs(b) ||
                runs.back().size() == static_cast<std::size_t>(kMaxBoxes))
                runs.emplace_back();
            runs.back().push_back(b);
        }
        for (const std::vector<Box>& run : runs) {
            if (run.size() == 1) {
                launch<Dims, Kind, Sum>(in, out, run[0], r, lane, wrap);
            } else if (takes_packs(run.front())) {
                launch_run<Dims, Kind, Sum, kUnroll / kVector, kVector>(in, out, run, r, lane,
                                                                        wrap);
            } else {
                launch_run<Dims, Kind, Sum, kUnroll, 1>(in, out, run, r, lane, wrap);
            }
        }
    }

    // One launch of stencil_boxes_kernel over `run` (2 to kMaxBoxes boxes), one block per box
    // block in order, each box's blocks shaped as walk_launch shapes its own launch, the
    // launch's blocks as wide as the widest.
    template <int Dims, StencilKind Kind, StencilSum Sum, int Unroll, int V>
    void launch_run(FieldView<const T> in, FieldView<T> out, const std::vector<Box>& run,
                    const HeatCoeffs<T>& r, Lane lane, SelfWrap wrap) {
        constexpr bool kSums = Sum != StencilSum::none;
        BoxGrids g;
        g.count = static_cast<int>(run.size());
        g.first[0] = 0;
        unsigned threads = 32;
        for (int k = 0; k < g.count; ++k) {
            const Launch l = walk_launch<Dims>(run[k], V, Sum);
            g.box[k] = run[k];
            g.points[k] = l.points;
            g.groups[k] = l.groups;
            g.grid[k][0] = l.grid.x;
            g.grid[k][1] = l.grid.y;
            g.block[k][0] = l.block.x;
            g.block[k][1] = l.block.y;
            g.first[k + 1] = g.first[k] + static_cast<unsigned>(l.blocks());
            threads = std::max(threads, l.block.x * l.block.y);
        }
        threads = (threads + 31) / 32 * 32;
        double* partial = kSums ? partial_slots(g.first[g.count]) : nullptr;
        stencil_boxes_kernel<T, Dims, Kind, Unroll, V, Sum>
            <<<g.first[g.count], threads, 0, stream(lane)>>>(in, out, g, r, wrap, partial);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    static constexpr int kMaxLevels = kMaxLevels2d;
    // Output rows per block of the levels kernel: each block also steps through 3 x levels rows
    // it does not store (the pipeline filling and draining).
    static constexpr int kLevelRows = 512;
    // The shortest chunk of a float summing pass's many waves (sum_pass_chunk_rows).
    static constexpr int kSumChunkRows = 64;

    // `sums`: a summing pass's layout (partials included), or nullptr.
    template <StencilKind Kind>
    void levels_for(const HeatCoeffs<T>& r, FieldView<const T> in, FieldView<T> out, const Box& b,
                    const Box& live, int levels, cudaStream_t s,
                    const LevelSumLayout* sums = nullptr) {
        with_levels<2, kMaxLevels>(levels, [&](auto l) {
            constexpr int kLevels = decltype(l)::value;
            if (sums == nullptr) {
                this->template launch_levels<Kind, kLevels>(r, in, out, b, live, s);
            } else if constexpr (Kind == StencilKind::jacobi) {
                this->template launch_summing_levels<kLevels>(r, in, out, b, live, s, *sums);
            }
        });
    }

    // 16 bytes of consecutive columns per thread, 128 threads (fewer, in whole warps, for a
    // narrow box): a tile 512 floats or 256 doubles wide, of which 2 x Levels columns are
    // computed for the neighbouring tiles. Tiles start on a multiple of V (aligned loads); rows
    // in chunks by level_chunk_rows.
    template <StencilKind Kind, int Levels>
    void launch_levels(const HeatCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                       const Box& b, const Box& live, cudaStream_t s) {
        constexpr int V = 16 / static_cast<int>(sizeof(T));
        const int x0 = pack_start<V>(b.lo[0] - Levels);
        const int nx = b.hi[0] + Levels - x0;
        const int threads = std::clamp(static_cast<int>(ceil_div(nx, 32 * V)) * 32, 64, 128);
        const int stride = (threads * V - 2 * Levels) / V * V;
        const unsigned tiles = ceil_div(b.hi[0] - (x0 + Levels), stride);
        const std::size_t smem = 3 * Levels * 2 * (threads + 2) * sizeof(T);
        auto kernel = stencil_levels_2d_kernel<T, Kind, Levels, V>;
        static const bool allowed = allow_shared(kernel, 3 * Levels * 2 * (128 + 2) * sizeof(T));
        (void)allowed;
        // A wave of this kernel per block width (64, 96, 128 threads).
        static long long slots[3] = {0, 0, 0};
        long long& wave = slots[threads / 32 - 2];
        if (wave == 0) wave = wave_slots(kernel, threads, smem, multiprocessors_);
        const int ny = b.hi[1] - b.lo[1];
        const int rows = level_chunk_rows(tiles, ny, Levels, wave, kLevelRows);
        const dim3 grid(tiles, ceil_div(ny, rows), 1);
        kernel<<<grid, threads, smem, s>>>(in, out, b, live, r, x0, stride, Levels, b.lo[1], rows);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    // A summing pass: its tiles are the residual sweep's x blocks in sum_pass_groups (one warp
    // each, LevelSums; the ring in the end lanes) from layout.x0; its rows are chunked on the
    // stream blocks' rows of layout box 0, so each block of the pass sums whole stream blocks.
    template <int Levels>
    void launch_summing_levels(const HeatCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                               const Box& b, const Box& live, cudaStream_t s,
                               const LevelSumLayout& layout) {
        constexpr int V = 16 / static_cast<int>(sizeof(T));
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
        auto kernel = stencil_levels_2d_sum_kernel<T, Levels, V>;
        // A wave, counted with the row words of the longest block there can be (a chunk and the
        // shell and ring rows beyond layout box 0).
        static std::size_t allowed = 0;  // the rows, and so the bytes, differ between launches
        static long long wave = 0;
        if (wave == 0) {
            const std::size_t most = shared_bytes(kLevelRows + 64);
            allowed = allow_shared(kernel, most) ? most : 0;
            wave = wave_slots(kernel, threads, most, multiprocessors_);
        }
        // Chunks of whole stream blocks' rows of layout box 0: a float pass (chunks fastest)
        // takes many waves of short chunks where it can, a double pass the fewest waves x steps.
        const int anchor_rows = layout.hi[0] - layout.lo[0];
        const int block_rows = 1 << layout.block_rows_log2[0];
        const int rows =
            sum_pass_trims<T>()
                ? sum_pass_chunk_rows(tiles, anchor_rows, Levels, wave, kLevelRows, block_rows,
                                      kSumChunkRows)
                : level_chunk_rows(tiles, anchor_rows, Levels, wave, kLevelRows, block_rows);
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

    // The summing pass's layout over `boxes` (sums_levels), each box's blocks as walk_launch
    // shapes its summing stream launch, the partials `levels` runs of them.
    LevelSumLayout level_sum_layout(const std::vector<Box>& boxes, int levels) {
        constexpr int V = kVector;
        if (boxes.empty() || boxes.size() > static_cast<std::size_t>(kMaxBoxes))
            throw std::logic_error("a summing pass's layout takes 1 to kMaxBoxes boxes");
        LevelSumLayout l;
        l.count = static_cast<int>(boxes.size());
        l.x_lo = boxes[0].lo[0];
        l.x_hi = boxes[0].hi[0];
        l.x0 = pack_start<V>(l.x_lo);
        // The boxes in the sweep's order, each from its first partial; then the one with the
        // most rows moved to slot 0.
        unsigned first = 0;
        for (int k = 0; k < l.count; ++k) {
            const Box& b = boxes[k];
            const Launch w = walk_launch<2>(b, V, StencilSum::change);
            if (w.groups.warps != sum_pass_warps<T>())
                throw std::logic_error("a summing pass's box is not walked in its tiles' blocks");
            l.lo[k] = b.lo[1];
            l.hi[k] = b.hi[1];
            l.points_log2[k] = log2_exact(w.points);
            l.block_rows_log2[k] = log2_exact(w.points * static_cast<int>(w.block.y));
            l.first[k] = first;
            first += static_cast<unsigned>(w.blocks());
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
        l.per_level = first;
        l.partial = partial_slots(levels * l.per_level);
        return l;
    }
    static int log2_exact(int v) {
        int n = 0;
        while ((1 << n) < v) ++n;
        if ((1 << n) != v) throw std::logic_error("a stream launch's rows are not a power of two");
        return n;
    }

    LaunchConfig cfg_;
    LevelSumLayout sum_layout_;  // the summing pass's (start_summing_pass)
    int sum_levels_ = 0;
    int multiprocessors_ = [] {
        int device = 0;
        int count = 0;
        GRIDSIM_CUDA_CHECK(cudaGetDevice(&device));
        GRIDSIM_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
        return count;
    }();
    Lanes& lanes_;
    ResidualSums& sums_;
};

}  // namespace gridsim::cuda
