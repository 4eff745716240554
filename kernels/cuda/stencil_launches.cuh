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
#include "kernels/cuda/stream_shapes.cuh"
#include "kernels/cuda/summing_pass.cuh"
#include "kernels/cuda/tiled_kernel.cuh"
#include "kernels/cuda/wide_levels_2d_launch.cuh"
#include "kernels/cuda/wide_levels_3d_launch.cuh"
#include "kernels/cuda/wide_plane_launch.cuh"
#include "kernels/cuda/wide_stream_kernel.cuh"
#include "kernels/level_chunks.hpp"

namespace gridsim::cuda {

// The Backend's stencil entry points (apply, apply_boxes, apply_levels, apply_levels_summing and
// what they ask first) for the CUDA backend; summing launches take their partials from `sums`.
template <class T>
class StencilLaunches {
public:
    StencilLaunches(const LaunchConfig& cfg, Lanes& lanes, ResidualSums& sums)
        : shapes_(with_naive_defaults(cfg)),
          summing_(shapes_, sums, multiprocessors_),
          lanes_(lanes),
          sums_(sums) {}

    // What the sweeps of stencil `kind` in `dims` dimensions launch: a plain star's, the
    // configured variant with its shapes in both dimensions (plain_description); another's, the
    // kernel launch() takes for it in `dims`.
    [[nodiscard]] std::string description(StencilKind kind, int dims) const {
        return by_stencil_kind(kind, [&](auto s) { return describe<decltype(s)>(dims); });
    }
    [[nodiscard]] std::string plain_description() const {
        if (cfg().kernel == KernelKind::naive)
            return fmt::format("naive {}x{} rows {}", cfg().block_x, cfg().block_y, cfg().points);
        const char* kind = cfg().kernel == KernelKind::tiled ? "tiled" : "stream";
        if (cfg().block_x != 0)
            return fmt::format("{} {}x{} points {}", kind, cfg().block_x, cfg().block_y,
                               cfg().points);
        const LaunchDefaults d2 = defaults(2);
        const LaunchDefaults d3 = defaults(3);
        const std::string fewer_rows =
            sizeof(T) == 4
                ? fmt::format(", {}x{} from 2^{}", d2.block_x, StreamShapes<T>::kSumBlockY,
                              StreamShapes<T>::kSumFewerRowsFromBits)
                : "";
        const std::string summing =
            cfg().points == 0 && cfg().kernel == KernelKind::stream
                ? fmt::format(" ({} summing boxes of 2^{} points or more{})", 2 * d2.points,
                              StreamShapes<T>::kSumRowsFromBits, fewer_rows)
                : "";
        return fmt::format("{} 2D {}x{} points {}{} / 3D {}x{} points {}", kind, d2.block_x,
                           d2.block_y, cfg().points != 0 ? cfg().points : d2.points, summing,
                           d3.block_x, d3.block_y, cfg().points != 0 ? cfg().points : d3.points);
    }

    // The Backend's entry points for a run-time kind: the same calls with its stencil type.
    void apply(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out, const Box& b,
               Lane lane, StencilSum sum) {
        by_stencil_kind(p.kind,
                        [&](auto s) { apply_stencil<decltype(s)>(p.r, in, out, b, lane, sum); });
    }
    void apply_boxes(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                     const std::vector<Box>& boxes, Lane lane, StencilSum sum, int wrap_period) {
        by_stencil_kind(p.kind, [&](auto s) {
            apply_boxes_stencil<decltype(s)>(p.r, in, out, boxes, lane, sum, wrap_period);
        });
    }
    long long apply_levels(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                           const Box& b, const Box& live, int levels, Lane lane,
                           const LevelsSignals& signals = {},
                           const FaceMoves<T>& reflections = {}) {
        return by_stencil_kind(p.kind, [&](auto s) {
            return apply_levels_stencil<decltype(s)>(p.r, in, out, b, live, levels, lane, signals,
                                                     reflections);
        });
    }
    // Whether passes of `kind` in `dims` dimensions may write their faces first or wait for their
    // halos inside the pass (LevelsSignals): the 3D levels kernel's, of radius 1.
    [[nodiscard]] static bool signals_levels(int dims, StencilKind kind) {
        return dims == 3 && stencil_radius(kind) == 1;
    }
    void apply_levels_summing(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                              const Box& b, const Box& live, int levels, Lane lane) {
        by_stencil_kind(p.kind, [&](auto s) {
            apply_levels_summing_stencil<decltype(s)>(p.r, in, out, b, live, levels, lane);
        });
    }

    // The same for a stencil type S (kernels/stencil.hpp): the CUDA side of the extension point
    // a new stencil plugs into, every kernel family compiled for S on first use. The naive kernel
    // takes any stencil; one that is not a plain star (kPlainStar: wider, or reading a
    // coefficient field) runs every box and run of boxes on it where the configured kernel is
    // naive, on the tiled kernel where that is the one configured (and its blocks take the
    // star's ring), else on the wide stream kernel, the widest stars' sweeps of large 3D boxes
    // with no parallel.block on the plane walk (all the same bits); the radius-1 stream kernel
    // and summing passes take plain stars, the levels kernels stars of radius 1 and (3D) the
    // wide levels kernel's (most_levels).
    template <class S>
    void apply_stencil(const AxisCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                       const Box& b, Lane lane, StencilSum sum) {
        if (b.empty()) return;
        visit<S>(in.ext.dims, sum, [&](auto dims, auto with) {
            this->template launch<dims.value, S, with.value>(in, out, b, r, lane);
        });
    }
    [[nodiscard]] bool applies_boxes() const { return cfg().kernel == KernelKind::stream; }
    template <class S>
    void apply_boxes_stencil(const AxisCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                             const std::vector<Box>& boxes, Lane lane, StencilSum sum,
                             int wrap_period) {
        if (!applies_boxes()) throw std::logic_error("apply_boxes needs the stream kernel");
        if constexpr (!kPlainStar<S>) {
            if (wrap_period != 0) throw std::logic_error("apply_boxes: a wrap of plain stars");
            for (const Box& b : boxes) apply_stencil<S>(r, in, out, b, lane, sum);
        } else {
            visit<S>(in.ext.dims, sum, [&](auto dims, auto with) {
                this->template launch_boxes<dims.value, S, with.value>(in, out, boxes, r, lane,
                                                                       SelfWrap{wrap_period});
            });
        }
    }

    // The most levels of a pass of S: plain stars up to kMaxLevels (2D) or kMaxLevels3d (3D); a
    // star of radius 1 that reads a field up to kMaxFieldLevels2d (2D) or most_levels_3d<S>()
    // (3D); a wider star without a field in 2D up to kMaxWideLevels2d (wide_levels_2d.cuh), in 3D
    // of radius 2 up to kWideLevelsMost (wide_levels_3d.cuh); other stars 1 (no pass of several
    // levels).
    template <class S>
    [[nodiscard]] static constexpr int most_levels(int dims) {
        if constexpr (kPlainStar<S>) return dims == 2 ? kMaxLevels : kMaxLevels3d;
        if constexpr (S::kRadius == 1) return dims == 3 ? most_levels_3d<S>() : kMaxFieldLevels2d;
        if constexpr (kWideLevels2dStencil<S>) {
            if (dims == 2) return kMaxWideLevels2d;
        }
        if constexpr (kWideLevelsStencil<S>) return kWideLevelsMost<T>;
        return 1;
    }
    [[nodiscard]] int max_levels(int dims, StencilKind kind) const {
        return by_stencil_kind(kind, [&](auto s) { return most_levels<decltype(s)>(dims); });
    }
    // With faces (3D only), the blocks that write them go first and signal faces.done; returns
    // how many do. With arrivals (3D only), the blocks wait for their halos (a pipelined pass).
    template <class S>
    long long apply_levels_stencil(const AxisCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                                   const Box& b, const Box& live, int levels, Lane lane,
                                   const LevelsSignals& signals = {},
                                   const FaceMoves<T>& reflections = {}) {
        if (b.empty()) return 0;
        if (levels < 2 || levels > most_levels<S>(in.ext.dims))
            throw std::logic_error("apply_levels: more levels than a pass of this stencil takes");
        if (in.ext.dims == 3) {
            if constexpr (S::kRadius == 1)
                return launch_levels_3d<T, S>(r, in, out, b, live, levels, multiprocessors_,
                                              stream(lane), signals);
        }
        if (signals.faces.boxes != nullptr || signals.arrivals != nullptr)
            throw std::logic_error(
                "apply_levels: faces first and pipelined passes of radius 1 in 3D");
        if constexpr (kWideLevels2dStencil<S>) {
            if (in.ext.dims == 2) {
                with_levels<2, kMaxWideLevels2d>(levels, [&](auto l) {
                    launch_wide_levels_2d<T, S, decltype(l)::value>(r, in, out, b, live,
                                                                    reflections, stream(lane));
                });
                return 0;
            }
        }
        if constexpr (kWideLevelsStencil<S> && 1 < kWideLevelsMost<T>) {
            with_levels<2, kWideLevelsMost<T>>(levels, [&](auto l) {
                launch_wide_levels_3d<T, S, decltype(l)::value>(r, in, out, b, live, reflections,
                                                                multiprocessors_, stream(lane));
            });
            return 0;
        }
        if constexpr (S::kRadius == 1) levels_for<S>(r, in, out, b, live, levels, stream(lane));
        return 0;
    }

    // The summing pass (SummingPass): what it can sum, its layout, its launches over a box.
    [[nodiscard]] bool sums_levels(const std::vector<Box>& boxes, int dims) const {
        return summing_.sums_levels(boxes, dims);
    }
    void start_summing_pass(const std::vector<Box>& sum_boxes, int levels) {
        summing_.start(sum_boxes, levels);
    }
    // The caller asked sums_levels(sum_boxes) once (Simulation::sums_in_passes). A summing pass
    // sums each level's squared change: it takes stars of radius 1 whose sum that is.
    template <class S>
    void apply_levels_summing_stencil(const AxisCoeffs<T>& r, FieldView<const T> in,
                                      FieldView<T> out, const Box& b, const Box& live, int levels,
                                      Lane lane) {
        if constexpr (S::kSum == StencilSum::change && kPlainStar<S>) {
            if (b.empty()) return;
            summing_.template apply<S>(r, in, out, b, live, levels, stream(lane));
        } else {
            throw std::logic_error("apply_levels_summing: a plain star that sums its change");
        }
    }

private:
    template <class S>
    [[nodiscard]] std::string describe(int dims) const {
        if constexpr (kPlainStar<S>) {
            return plain_description();
        } else {
            if (cfg().kernel == KernelKind::naive) return plain_description();
            const LaunchDefaults own = dims == 3 ? kWideStream3d : defaults(2);
            const auto shape = [&](const LaunchDefaults& d) {  // as walk_launch takes it
                const bool set = cfg().block_x != 0;
                return fmt::format("{}x{} points {}", set ? cfg().block_x : d.block_x,
                                   set ? cfg().block_y : d.block_y,
                                   cfg().points != 0 ? cfg().points : d.points);
            };
            const std::string wide = fmt::format("wide stream {}D {}", dims, shape(own));
            if (cfg().kernel == KernelKind::tiled)
                return fmt::format("tiled {}D {}, a ring of {} (blocks thinner than that: {})",
                                   dims, shape(defaults(dims)), S::kRadius, wide);
            if (dims == 3 && cfg().block_x == 0 && kPlaneWalkStencil<T, 3, S, StencilSum::none>)
                return fmt::format(
                    "plane walk {}x{} tiles of {}x{} threads (boxes of {}x{} points and {} planes "
                    "or more; the others: {})",
                    kPlaneTileX, kPlaneTileY, 32, kPlaneThreadRows, kPlaneTileX, kPlaneTileY,
                    plane_walk_planes(S::kRadius), wide);
            return wide;
        }
    }
    [[nodiscard]] cudaStream_t stream(Lane lane) const { return lanes_.stream(lane); }
    double* partial_slots(long long more) { return sums_.partial_slots(more); }
    [[nodiscard]] LaunchDefaults defaults(int dims) const { return shapes_.defaults(dims); }
    template <int Dims>
    [[nodiscard]] Launch walk_launch(const Box& b, int vector = 1,
                                     StencilSum sum = StencilSum::none) const {
        return shapes_.template walk_launch<Dims>(b, vector, sum);
    }
    // The launch settings, the naive kernel's defaults filled in (one copy: the shapes').
    [[nodiscard]] const LaunchConfig& cfg() const { return shapes_.config(); }
    // The naive kernel's shape where the configuration leaves it open: the occupancy API's block
    // size for the naive 3D heat kernel, as 32 x (n / 32), and points per thread by value size.
    static LaunchConfig with_naive_defaults(LaunchConfig cfg) {
        if (cfg.kernel != KernelKind::naive) return cfg;
        if (cfg.block_x == 0) {
            int min_grid = 0;
            int block = 0;
            GRIDSIM_CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(
                &min_grid, &block, stencil_naive_kernel<T, 3, HeatStencil, 1, StencilSum::none>, 0,
                0));
            cfg.block_x = 32;
            cfg.block_y = std::max(1, block / 32);
        }
        if (cfg.points == 0) cfg.points = sizeof(T) == 4 ? kNaiveRowsFloat : kNaiveRowsDouble;
        return cfg;
    }

    // f(dims, sum) with the run-time values as std::integral_constant. The sum S folds
    // (S::kSum) is the only one compiled beside none.
    template <class S, class F>
    static void visit(int dims, StencilSum sum, F&& f) {
        auto with_sum = [&](auto d) {
            if (sum == StencilSum::none) {
                f(d, std::integral_constant<StencilSum, StencilSum::none>{});
            } else if (sum == S::kSum) {
                f(d, std::integral_constant<StencilSum, S::kSum>{});
            } else {
                throw std::logic_error("stencil sum not compiled for this stencil");
            }
        };
        if (dims == 2) {
            with_sum(std::integral_constant<int, 2>{});
        } else {
            with_sum(std::integral_constant<int, 3>{});
        }
    }

    static constexpr int kUnroll = StreamShapes<T>::kUnroll;
    static constexpr int kVector = StreamShapes<T>::kVector;
    // Whether the stream kernel walks `b` in packs (StreamShapes::takes_packs).
    template <int Dims, StencilSum Sum>
    [[nodiscard]] bool takes_packs(const Box& b) const {
        return shapes_.takes_packs(b, Dims, Sum);
    }

    // `wrap` (stream kernel only): the instance that also stores the periodic walk-axis copy.
    template <int Dims, class S, StencilSum Sum>
    void launch(FieldView<const T> in, FieldView<T> out, const Box& b, const AxisCoeffs<T>& r,
                Lane lane, SelfWrap wrap = {}) {
        const cudaStream_t s = stream(lane);
        if (cfg().kernel == KernelKind::naive) {
            launch_naive<T, Dims, S, Sum>(
                in, out, b, r, cfg(), [&](long long n) { return partial_slots(n); }, s);
            return;
        }
        if constexpr (kPlainStar<S>) {
            launch_walk<Dims, S, Sum>(in, out, b, r, s, wrap);
        } else {
            if (cfg().kernel == KernelKind::tiled && launch_tiled<Dims, S, Sum>(in, out, b, r, s))
                return;
            if constexpr (kPlaneWalkStencil<T, Dims, S, Sum>) {
                if (cfg().block_x == 0 && plane_walk_takes(b, S::kRadius)) {
                    launch_wide_planes<T, S>(in, out, b, r, multiprocessors_, s);
                    return;
                }
            }
            const Launch l =
                shapes_.template wide_launch<Dims>(wide_walk_from<T, Dims, Sum>(b), Sum);
            double* partial = Sum != StencilSum::none ? partial_slots(l.blocks()) : nullptr;
            stencil_wide_stream_kernel<T, Dims, S, Sum><<<l.grid, l.block, 0, s>>>(
                in, out, b, point_coeffs<S, Dims>(r), l.points, partial);
            GRIDSIM_CUDA_CHECK(cudaGetLastError());
        }
    }

    // The stream or tiled kernel over `b`.
    template <int Dims, class S, StencilSum Sum>
    void launch_walk(FieldView<const T> in, FieldView<T> out, const Box& b, const AxisCoeffs<T>& r,
                     cudaStream_t s, SelfWrap wrap) {
        constexpr bool kSums = Sum != StencilSum::none;
        const bool wraps = wrap.n > 0;
        if (takes_packs<Dims, Sum>(b)) {
            const Launch l = walk_launch<Dims>(b, kVector, Sum);
            double* partial = kSums ? partial_slots(l.blocks()) : nullptr;
            auto kernel =
                wraps
                    ? stencil_stream_vec_kernel<T, Dims, S, kUnroll / kVector, kVector, Sum, true>
                    : stencil_stream_vec_kernel<T, Dims, S, kUnroll / kVector, kVector, Sum, false>;
            kernel<<<l.grid, l.block, 0, s>>>(in, out, b, r, l.points, partial, wrap, l.groups);
            GRIDSIM_CUDA_CHECK(cudaGetLastError());
            return;
        }
        if (cfg().kernel == KernelKind::tiled) {
            launch_tiled<Dims, S, Sum>(in, out, b, r, s);
            return;
        }
        const Launch l = walk_launch<Dims>(b, 1, Sum);
        double* partial = kSums ? partial_slots(l.blocks()) : nullptr;
        auto kernel = wraps ? stencil_stream_kernel<T, Dims, S, kUnroll, Sum, true>
                            : stencil_stream_kernel<T, Dims, S, kUnroll, Sum, false>;
        kernel<<<l.grid, l.block, 0, s>>>(in, out, b, r, l.points, partial, wrap);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }
    // The tiled kernel over `b`, where its blocks are wide (3D: and tall) enough for S's ring
    // (tiled_walk_takes); returns whether it launched.
    template <int Dims, class S, StencilSum Sum>
    bool launch_tiled(FieldView<const T> in, FieldView<T> out, const Box& b, const AxisCoeffs<T>& r,
                      cudaStream_t s) {
        constexpr int R = S::kRadius;
        const Launch l = walk_launch<Dims>(b, 1, Sum);
        const int bx = static_cast<int>(l.block.x);
        const int by = static_cast<int>(l.block.y);
        if (!tiled_walk_takes(bx, by, Dims, R)) return false;
        const std::size_t tile = static_cast<std::size_t>(bx + 2 * R) *
                                 static_cast<std::size_t>(Dims == 3 ? by + 2 * R : by);
        double* partial = Sum != StencilSum::none ? partial_slots(l.blocks()) : nullptr;
        stencil_tiled_kernel<T, Dims, S, kUnroll, Sum>
            <<<l.grid, l.block, 2 * tile * sizeof(T), s>>>(in, out, b, point_coeffs<S, Dims>(r),
                                                           l.points, partial);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
        return true;
    }

    // apply_boxes: the boxes in order, consecutive ones that take the same stream variant
    // (takes_packs, as launch() picks) in one launch each, so the partials land in the order of
    // launch() per box.
    template <int Dims, class S, StencilSum Sum>
    void launch_boxes(FieldView<const T> in, FieldView<T> out, const std::vector<Box>& boxes,
                      const AxisCoeffs<T>& r, Lane lane, SelfWrap wrap) {
        std::vector<std::vector<Box>> runs;
        for (const Box& b : boxes) {
            if (b.empty()) continue;
            if (runs.empty() ||
                takes_packs<Dims, Sum>(runs.back().front()) != takes_packs<Dims, Sum>(b) ||
                runs.back().size() == static_cast<std::size_t>(kMaxBoxes))
                runs.emplace_back();
            runs.back().push_back(b);
        }
        for (const std::vector<Box>& run : runs) {
            if (run.size() == 1) {
                launch<Dims, S, Sum>(in, out, run[0], r, lane, wrap);
            } else if (takes_packs<Dims, Sum>(run.front())) {
                launch_run<Dims, S, Sum, kUnroll / kVector, kVector>(in, out, run, r, lane, wrap);
            } else {
                launch_run<Dims, S, Sum, kUnroll, 1>(in, out, run, r, lane, wrap);
            }
        }
    }

    // One launch of stencil_boxes_kernel over `run` (2 to kMaxBoxes boxes), one block per box
    // block in order, each box's blocks shaped as walk_launch shapes its own launch, the
    // launch's blocks as wide as the widest.
    template <int Dims, class S, StencilSum Sum, int Unroll, int V>
    void launch_run(FieldView<const T> in, FieldView<T> out, const std::vector<Box>& run,
                    const AxisCoeffs<T>& r, Lane lane, SelfWrap wrap) {
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
        stencil_boxes_kernel<T, Dims, S, Unroll, V, Sum>
            <<<g.first[g.count], threads, 0, stream(lane)>>>(in, out, g, r, wrap, partial);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    static constexpr int kMaxLevels = kMaxLevels2d;

    template <class S>
    void levels_for(const AxisCoeffs<T>& r, FieldView<const T> in, FieldView<T> out, const Box& b,
                    const Box& live, int levels, cudaStream_t s) {
        with_levels<2, most_levels<S>(2)>(levels, [&](auto l) {
            this->template launch_levels<S, decltype(l)::value>(r, in, out, b, live, s);
        });
    }

    // 16 bytes of consecutive columns per thread, 128 threads (fewer, in whole warps, for a
    // narrow box): a tile 512 floats or 256 doubles wide, of which 2 x Levels columns are
    // computed for the neighbouring tiles. Tiles start on a multiple of V (aligned loads); rows
    // in chunks by level_chunk_rows.
    template <class S, int Levels>
    void launch_levels(const AxisCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                       const Box& b, const Box& live, cudaStream_t s) {
        constexpr int V = 16 / static_cast<int>(sizeof(T));
        const int x0 = pack_start<V>(b.lo[0] - Levels);
        const int nx = b.hi[0] + Levels - x0;
        const int threads = std::clamp(static_cast<int>(ceil_div(nx, 32 * V)) * 32, 64, 128);
        const int stride = (threads * V - 2 * Levels) / V * V;
        const unsigned tiles = ceil_div(b.hi[0] - (x0 + Levels), stride);
        const std::size_t smem = 3 * Levels * 2 * (threads + 2) * sizeof(T);
        auto kernel = stencil_levels_2d_kernel<T, S, Levels, V>;
        static const bool allowed = allow_shared(kernel, 3 * Levels * 2 * (128 + 2) * sizeof(T));
        (void)allowed;
        // A wave of this kernel per block width (64, 96, 128 threads).
        static long long slots[3] = {0, 0, 0};
        long long& wave = slots[threads / 32 - 2];
        if (wave == 0) wave = wave_slots(kernel, threads, smem, multiprocessors_);
        const int ny = b.hi[1] - b.lo[1];
        const int rows = level_chunk_rows(tiles, ny, Levels, wave, kLevelRows2d);
        const dim3 grid(tiles, ceil_div(ny, rows), 1);
        const Box reach = kReadsField<S> ? field_reach(live, b, Levels - 1) : live;
        kernel<<<grid, threads, smem, s>>>(in, out, b, reach, r, x0, stride, Levels, b.lo[1], rows);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    int multiprocessors_ = [] {
        int device = 0;
        int count = 0;
        GRIDSIM_CUDA_CHECK(cudaGetDevice(&device));
        GRIDSIM_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
        return count;
    }();
    StreamShapes<T> shapes_;
    SummingPass<T> summing_;
    Lanes& lanes_;
    ResidualSums& sums_;
};

}  // namespace gridsim::cuda
