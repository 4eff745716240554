// A host compiler's stand-in for CUDA's <cuda_pipeline_primitives.h> and the keywords and
// built-ins a kernel header uses, so that tests build a kernel for the host and run each of a
// block's threads on a thread of its own (run_block). A kernel header that includes
// <cuda_pipeline_primitives.h> first finds this file where a test puts tests/host_cuda ahead of
// CUDA's headers (tests/CMakeLists.txt). The copies land at once; a barrier is a barrier of the
// block's host threads; the shared memory is one buffer (blocks run one at a time, run_grid).
#pragma once

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#define __device__
#define __global__
#define __host__
#define __shared__
#define __forceinline__ inline
#define __launch_bounds__(...)
// Alignment: the one array that asks for it (smem_raw, below) is defined aligned.
#define __align__(n)

struct HostDim3 {
    unsigned x = 0, y = 0, z = 0;
};
inline thread_local HostDim3 threadIdx;
inline thread_local HostDim3 blockIdx;

using std::max;
using std::min;

namespace gridsim::host_cuda {

// A barrier for a block's threads (POSIX's: a futex on Linux, much faster here than a
// condition variable's wake-ups for hundreds of threads).
class BlockBarrier {
public:
    BlockBarrier() = default;
    BlockBarrier(const BlockBarrier&) = delete;
    BlockBarrier& operator=(const BlockBarrier&) = delete;
    ~BlockBarrier() { release(); }
    void reset(unsigned threads) {
        release();
        pthread_barrier_init(&barrier_, nullptr, threads);
        live_ = true;
    }
    void wait() { pthread_barrier_wait(&barrier_); }

private:
    void release() {
        if (live_) pthread_barrier_destroy(&barrier_);
        live_ = false;
    }
    pthread_barrier_t barrier_{};
    bool live_ = false;
};

inline BlockBarrier& block_barrier() {
    static BlockBarrier b;
    return b;
}

// The bytes a copy may read, the fields a test hands the kernel, and how many copies read
// outside them (a GPU would read past them unseen).
struct Readable {
    std::uintptr_t lo = 0, hi = 0;
    std::atomic<long> outside{0};
    // The copies may read `bytes` from `from` on, nothing else.
    void only(const void* from, std::size_t bytes) {
        lo = reinterpret_cast<std::uintptr_t>(from);
        hi = lo + bytes;
    }
};
inline Readable& readable() {
    static Readable r;
    return r;
}

// Runs f() as every block of a grid of `grid` blocks of nx x ny threads, block x fastest, one
// block at a time: each thread of a block on a host thread of its own, which goes on to the next
// block once every thread has finished this one (the blocks share the one shared memory).
template <class F>
void run_grid(HostDim3 grid, unsigned nx, unsigned ny, F f) {
    block_barrier().reset(nx * ny);
    std::vector<std::thread> threads;
    for (unsigned y = 0; y < ny; ++y)
        for (unsigned x = 0; x < nx; ++x)
            threads.emplace_back([=] {
                threadIdx = {x, y, 0};
                for (unsigned bz = 0; bz < grid.z; ++bz)
                    for (unsigned by = 0; by < grid.y; ++by)
                        for (unsigned bx = 0; bx < grid.x; ++bx) {
                            blockIdx = {bx, by, bz};
                            f();
                            block_barrier().wait();
                        }
            });
    for (std::thread& t : threads) t.join();
}

}  // namespace gridsim::host_cuda

// The dynamic shared memory of the block that runs: the `extern __shared__` array of the CUDA
// kernels (namespace gridsim::cuda), as large as a multiprocessor of compute capability 9.0 gives
// a block.
namespace gridsim::cuda {
constexpr std::size_t kHostSharedBytes = 227 * 1024;
alignas(16) inline unsigned char smem_raw[kHostSharedBytes];
}  // namespace gridsim::cuda

inline void __syncthreads() { gridsim::host_cuda::block_barrier().wait(); }
inline void __pipeline_memcpy_async(void* to, const void* from, std::size_t bytes) {
    auto& r = gridsim::host_cuda::readable();
    const auto at = reinterpret_cast<std::uintptr_t>(from);
    if (at < r.lo || at + bytes > r.hi) {
        ++r.outside;
        return;
    }
    std::memcpy(to, from, bytes);
}
inline void __pipeline_commit() {}
inline void __pipeline_wait_prior(std::size_t /*prior*/) {}
