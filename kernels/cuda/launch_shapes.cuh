// Launch shapes of the CUDA stencil kernels: the default block shapes per variant, a launch's
// grid and block, and the helpers that size them.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/walk_common.cuh"

#ifndef GRIDSIM_STREAM_VECTOR
#define GRIDSIM_STREAM_VECTOR 1  // stream kernel: 16-byte packs of x points on wide boxes
#endif
#ifndef GRIDSIM_WALK_BYTES
#define GRIDSIM_WALK_BYTES 32  // bytes of walk-axis loads in flight per thread
#endif

namespace gridsim::cuda {

// Default launch shapes per variant, the fastest measured (docs/tuning.md, "Launch shapes");
// parallel.block and parallel.rows_per_thread override them. The stream kernel's x extent counts
// threads, each of which covers 16 bytes of x points on wide boxes.
struct LaunchDefaults {
    int block_x, block_y, points;
};
constexpr LaunchDefaults kStream2d{32, 4, 4};
constexpr LaunchDefaults kStream3dDouble{32, 4, 8};
constexpr LaunchDefaults kStream3dFloat{16, 8, 8};
constexpr LaunchDefaults kTiled2d{128, 1, 8};
constexpr LaunchDefaults kTiled3d{64, 4, 8};
// The wide stream kernel in 3D (stars that are not plain, stream_kernels' own shapes in 2D).
constexpr LaunchDefaults kWideStream3d{64, 4, 8};
// Naive: points per thread by value size, enough bytes in flight per thread.
constexpr int kNaiveRowsFloat = 4;
constexpr int kNaiveRowsDouble = 2;

inline unsigned ceil_div(long long n, long long d) {
    return static_cast<unsigned>((n + d - 1) / d);
}

// Calls f(std::integral_constant<int, L>{}) with L = `levels` for Lo <= levels < Hi, else with
// Hi: the kernel template for a level count chosen at run time.
template <int Lo, int Hi, class F>
void with_levels(int levels, F&& f) {
    if constexpr (Lo == Hi) {
        f(std::integral_constant<int, Hi>{});
    } else if (levels == Lo) {
        f(std::integral_constant<int, Lo>{});
    } else {
        with_levels<Lo + 1, Hi>(levels, f);
    }
}

// Lets `kernel` launch with up to `bytes` of dynamic shared memory (above 48 KiB a launch must
// ask for it). A launcher calls it once per kernel: `static const bool ok = allow_shared(...)`.
template <class Kernel>
bool allow_shared(Kernel kernel, std::size_t bytes) {
    GRIDSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)));
    return true;
}

// Blocks of `kernel` (`threads` and `smem` bytes each) the whole GPU runs at once: a wave.
template <class Kernel>
long long wave_slots(Kernel kernel, int threads, std::size_t smem, int multiprocessors) {
    int n = 0;
    GRIDSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem));
    return static_cast<long long>(multiprocessors) * std::max(n, 1);
}

// A launch's grid and block.
struct Launch {
    dim3 grid;
    dim3 block;
    int points = 0;     // walk-axis points per thread
    PackGroups groups;  // the x blocks' packs (walk_pack)
    [[nodiscard]] long long blocks() const {
        return static_cast<long long>(grid.x) * grid.y * grid.z;
    }
};

// The block shape for `box`: the configured one, narrowed for thin boxes (the shell slabs of the
// overlap recipe) so that threads are not launched for points that do not exist: an x face one
// point thick runs with blocks of 1 x (bx * by) instead of leaving 31 of 32 lanes idle.
inline dim3 fit_block(int bx, int by, int nx, int ny) {
    const unsigned x = std::min<unsigned>(bx, pow2_ceil(nx));
    const unsigned y =
        std::min<unsigned>(std::max(1u, static_cast<unsigned>(bx * by) / x), pow2_ceil(ny));
    return {x, y, 1};
}

}  // namespace gridsim::cuda
