// RAII for CUDA handles: streams (with priority), events, device and pinned host buffers.
// Destructors never throw; errors on release are ignored (the context may already be gone).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"
#include "mesh/field.hpp"

namespace gridsim {

class Stream {
public:
    enum class Priority { high, low };
    explicit Stream(Priority p) {
        int least = 0;
        int greatest = 0;  // numerically lowest = highest priority
        GRIDSIM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        GRIDSIM_CUDA_CHECK(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking,
                                                        p == Priority::high ? greatest : least));
    }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream() { cudaStreamDestroy(s_); }
    [[nodiscard]] cudaStream_t get() const { return s_; }

private:
    cudaStream_t s_ = nullptr;
};

class Event {
public:
    explicit Event(bool timing = false) {
        GRIDSIM_CUDA_CHECK(
            cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
    }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    Event(Event&& o) noexcept : e_(o.e_) { o.e_ = nullptr; }
    Event& operator=(Event&& o) noexcept {
        std::swap(e_, o.e_);
        return *this;
    }
    ~Event() {
        if (e_ != nullptr) cudaEventDestroy(e_);
    }
    [[nodiscard]] cudaEvent_t get() const { return e_; }
    void record(cudaStream_t s) { GRIDSIM_CUDA_CHECK(cudaEventRecord(e_, s)); }

private:
    cudaEvent_t e_ = nullptr;
};

// An instantiated CUDA graph, made from a finished stream capture (the graph itself is not kept).
// Its kernels keep the priorities of the streams they were captured from (without the flag every
// node runs at the priority of the stream the graph is launched into, and the boundary work no
// longer overtakes the interior's blocks).
class GraphExec {
public:
    explicit GraphExec(cudaGraph_t graph) {
        GRIDSIM_CUDA_CHECK(
            cudaGraphInstantiateWithFlags(&exec_, graph, cudaGraphInstantiateFlagUseNodePriority));
        cudaGraphDestroy(graph);
    }
    GraphExec(const GraphExec&) = delete;
    GraphExec& operator=(const GraphExec&) = delete;
    ~GraphExec() {
        if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    }
    void launch(cudaStream_t s) { GRIDSIM_CUDA_CHECK(cudaGraphLaunch(exec_, s)); }

private:
    cudaGraphExec_t exec_ = nullptr;
};

namespace detail {
inline void free_device(void* p) { cudaFree(p); }
inline void free_pinned(void* p) { cudaFreeHost(p); }
}  // namespace detail

// Zero-filled device memory.
template <class T>
Buffer<T> device_buffer(std::size_t n) {
    void* p = nullptr;
    const std::size_t bytes = (n == 0 ? 1 : n) * sizeof(T);
    GRIDSIM_CUDA_CHECK(cudaMalloc(&p, bytes));
    // cudaMemset runs on the legacy default stream, which our non-blocking streams do not wait
    // for: finish it here (set-up only, never in the step loop) or a later upload could land
    // before the zeros do.
    GRIDSIM_CUDA_CHECK(cudaMemset(p, 0, bytes));
    GRIDSIM_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    return Buffer<T>(static_cast<T*>(p), n, &detail::free_device);
}

// Page-locked host memory, zeroed. cudaMallocHost faults every page in when it pins them, so the
// pages land where the calling thread's memory policy puts them at that call: a binding must be
// in place before this is called (the memset afterwards moves nothing).
template <class T>
Buffer<T> pinned_buffer(std::size_t n) {
    void* p = nullptr;
    const std::size_t bytes = (n == 0 ? 1 : n) * sizeof(T);
    GRIDSIM_CUDA_CHECK(cudaMallocHost(&p, bytes));
    std::memset(p, 0, bytes);
    return Buffer<T>(static_cast<T*>(p), n, &detail::free_pinned);
}

}  // namespace gridsim
