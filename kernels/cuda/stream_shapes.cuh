// How the walking kernels (stream, tiled) shape a launch over a box: the default block shapes by
// variant, the launch's grid and block, and whether the stream kernel walks the box in packs.
#pragma once

#include <cstdint>

#include "kernels/cuda/launch_shapes.cuh"
#include "kernels/cuda/level_sums.cuh"

namespace gridsim::cuda {

template <class T>
class StreamShapes {
public:
    // Walk-axis loads each stream thread keeps in flight (the depth of its pipeline), and the
    // points of a 16-byte pack.
    static constexpr int kUnroll = GRIDSIM_WALK_BYTES / static_cast<int>(sizeof(T));
    static constexpr int kVector = 16 / static_cast<int>(sizeof(T));
    static constexpr int kSumRowsFromBits = 21;
    static constexpr std::int64_t kSumRowsFrom = std::int64_t{1} << kSumRowsFromBits;
    // A float 2D jacobi residual box of at least this many points walks in blocks of kSumBlockY
    // warps along y (docs/tuning.md, "Summing launches' block rows").
    static constexpr int kSumFewerRowsFromBits = 23;
    static constexpr std::int64_t kSumFewerRowsFrom = std::int64_t{1} << kSumFewerRowsFromBits;
    static constexpr int kSumBlockY = 2;

    explicit StreamShapes(const LaunchConfig& cfg) : cfg_(cfg) {}

    [[nodiscard]] const LaunchConfig& config() const { return cfg_; }

    [[nodiscard]] LaunchDefaults defaults(int dims) const {
        if (cfg_.kernel == KernelKind::tiled) return dims == 2 ? kTiled2d : kTiled3d;
        if (dims == 2) return kStream2d;
        return sizeof(T) == 4 ? kStream3dFloat : kStream3dDouble;
    }

    // Whether the stream kernel walks `b` in 16-byte packs of x points: a box wide enough, and
    // every box of a 2D jacobi residual sweep with the default shapes, however narrow (a summing
    // pass reproduces the sums of blocks of packs only: SummingPass::sums_levels).
    [[nodiscard]] bool takes_packs(const Box& b, int dims, StencilSum sum) const {
        if (!GRIDSIM_STREAM_VECTOR || cfg_.kernel != KernelKind::stream) return false;
        return b.hi[0] - b.lo[0] >= 32 * kVector || sums_in_warps(dims, sum, kVector);
    }

    // The launch of the wide stream kernel over `b`: walk_launch's, its 3D blocks kWideStream3d
    // where the configuration leaves them open (docs/tuning.md, "Stars that are not plain").
    template <int Dims>
    [[nodiscard]] Launch wide_launch(const Box& b, StencilSum sum) const {
        return walk_launch<Dims>(b, 1, sum, Dims == 3 ? &kWideStream3d : nullptr);
    }

    // The launch of a walking variant (stream, tiled) over `b`.
    // `vector`: points per thread along x (a thread then covers x from box.lo[0] rounded down to
    // a multiple of `vector`). `sum`: what the launch also sums (a residual's partials). `own`:
    // the kernel's own default shape, else the variant's.
    template <int Dims>
    [[nodiscard]] Launch walk_launch(const Box& b, int vector = 1,
                                     StencilSum sum = StencilSum::none,
                                     const LaunchDefaults* own = nullptr) const {
        const bool summing = sum != StencilSum::none;
        const LaunchDefaults d = own != nullptr ? *own : defaults(Dims);
        const int bx = cfg_.block_x != 0 ? cfg_.block_x : d.block_x;
        const int by = cfg_.block_x != 0 ? cfg_.block_y : default_block_y(b, Dims, sum, vector, d);
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
            // With the default shapes a jacobi residual sweep in packs keeps whole warps across
            // x however narrow the box.
            l.block =
                fit_block(bx, by, sums_in_warps(Dims, sum, vector) ? std::max(nx, bx) : nx, chunks);
            l.grid = dim3(ceil_div(nx, l.block.x), ceil_div(chunks, l.block.y), 1);
            // A jacobi residual sweep in packs: its x blocks as a summing pass's tiles.
            if (sum == StencilSum::change && vector > 1 && l.block.x == 32) {
                l.groups = sum_pass_groups<T>();
                l.grid.x = l.groups.blocks(nx);
            }
        }
        l.points = points;
        return l;
    }

private:
    // The default block's warps along y: kSumBlockY for a float 2D jacobi residual box of at least
    // kSumFewerRowsFrom points (its summing pass cuts its chunks in whole blocks' rows, so shorter
    // blocks let more chunks fill one wave), else the variant's (`d`). A function of the box
    // alone, as the rows per thread are.
    [[nodiscard]] int default_block_y(const Box& b, int dims, StencilSum sum, int vector,
                                      const LaunchDefaults& d) const {
        if (sizeof(T) == 4 && sums_in_warps(dims, sum, vector) && b.count() >= kSumFewerRowsFrom)
            return kSumBlockY;
        return d.block_y;
    }

    // A 2D jacobi residual walked in packs with the default shapes: its x blocks are whole warps,
    // laid out as a summing pass's.
    [[nodiscard]] bool sums_in_warps(int dims, StencilSum sum, int vector) const {
        return dims == 2 && sum == StencilSum::change && vector > 1 && cfg_.block_x == 0 &&
               cfg_.kernel == KernelKind::stream;
    }

    LaunchConfig cfg_;
};

}  // namespace gridsim::cuda
