// Blocks of one launch telling work on another stream that their stores are done, before the
// launch ends: a counter in device memory that the blocks raise and a one-thread kernel waits on
// (a faces-first pass: its face blocks, then the halo exchange on the boundary lane); and blocks
// waiting, inside a launch, for data another GPU stores (a pipelined pass: its halos).
#pragma once

#include <cuda_runtime.h>

#include <cuda/atomic>

#include "kernels/cuda/cuda_check.hpp"

namespace gridsim::cuda {

// Called by every thread of a block after a barrier that follows the stores it tells of: one
// thread adds one to the counter with release semantics, and the barrier has ordered every
// thread's stores before that release, which carries them to the device scope (a fence per
// block, not one per thread).
__device__ __forceinline__ void tell_stored(unsigned* done) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device> count(*done);
        count.fetch_add(1u, ::cuda::memory_order_release);
    }
}

// Waits until `target` blocks have signalled, then sets the counter back to zero for the next
// launch (which the caller orders after this kernel). A template, so that every translation unit
// that includes this header may define it.
template <class Count>
__global__ void wait_for_blocks_kernel(Count* done, Count target) {
    ::cuda::atomic_ref<Count, ::cuda::thread_scope_device> count(*done);
    while (count.load(::cuda::memory_order_acquire) < target) __nanosleep(128);
    count.store(Count{0}, ::cuda::memory_order_relaxed);
}

// `s`'s later work waits until `target` blocks have signalled on `done`: one thread, which
// fits beside any block of the launch it waits on.
inline void wait_for_blocks(unsigned* done, unsigned target, cudaStream_t s) {
    wait_for_blocks_kernel<unsigned><<<1, 1, 0, s>>>(done, target);
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
}

// A counter that another GPU raises once its stores into this GPU's memory are done (release,
// system scope), and the value a block waits for.
struct ArrivalWait {
    const unsigned long long* ready = nullptr;
    unsigned long long target = 0;
};

// Called by every thread of a block: one thread waits until the counter reaches its target
// (acquire, system scope), and the barrier orders every thread's later loads after that.
__device__ __forceinline__ void wait_for_arrival(const ArrivalWait& a) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): atomic_ref takes a mutable ref
        ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_system> ready(
            *const_cast<unsigned long long*>(a.ready));
        while (ready.load(::cuda::memory_order_acquire) < a.target) __nanosleep(64);
    }
    __syncthreads();
}

}  // namespace gridsim::cuda
