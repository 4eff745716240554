#include <cub/block/block_reduce.cuh>

#include <cmath>
#include <limits>

#include "device/cuda_check.hpp"
#include "kernels/cuda/reductions.cuh"

namespace gridsim::cuda {

namespace {

struct StatsOp {
    __device__ FieldStats operator()(const FieldStats& a, const FieldStats& b) const {
        return {fmin(a.min, b.min), fmax(a.max, b.max), a.sum + b.sum, a.nonfinite + b.nonfinite};
    }
};

struct SumOp {
    __device__ double operator()(double a, double b) const { return a + b; }
};

// Value of box element t (x fastest) for the three reductions.
template <class T>
struct SqDiff {
    FieldView<const T> a, b;
    __device__ double operator()(int i, int j, int k) const {
        const double d = static_cast<double>(a(i, j, k)) - static_cast<double>(b(i, j, k));
        return d * d;
    }
};
template <class T>
struct Sq {
    FieldView<const T> a;
    __device__ double operator()(int i, int j, int k) const {
        const double v = a(i, j, k);
        return v * v;
    }
};
template <class T>
struct Stat {
    FieldView<const T> a;
    __device__ FieldStats operator()(int i, int j, int k) const {
        const double v = a(i, j, k);
        if (!isfinite(v)) return {INFINITY, -INFINITY, 0.0, 1};
        return {v, v, v, 0};
    }
};

// Pass 1: each thread folds its grid-stride elements in order, each block reduces its threads
// with CUB's fixed tree, and block b writes partial[b].
template <class Acc, class Load, class Op>
__global__ void reduce_box_kernel(Load load, Box b, long long n, Acc identity, Op op,
                                  Acc* partial) {
    using BlockReduce = cub::BlockReduce<Acc, ReductionScratch::kThreads>;
    __shared__ typename BlockReduce::TempStorage temp;
    const int nx = b.hi[0] - b.lo[0];
    const int ny = b.hi[1] - b.lo[1];
    Acc acc = identity;
    for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < n;
         t += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long row = t / nx;
        acc = op(acc, load(b.lo[0] + static_cast<int>(t % nx), b.lo[1] + static_cast<int>(row % ny),
                           b.lo[2] + static_cast<int>(row / ny)));
    }
    const Acc total = BlockReduce(temp).Reduce(acc, op);
    if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// Pass 2: one block folds the partials (thread t takes t, t+kThreads, ...) and reduces.
template <class Acc, class Op>
__global__ void reduce_partials_kernel(const Acc* partial, int count, Acc identity, Op op,
                                       Acc* result) {
    using BlockReduce = cub::BlockReduce<Acc, ReductionScratch::kThreads>;
    __shared__ typename BlockReduce::TempStorage temp;
    Acc acc = identity;
    for (int t = static_cast<int>(threadIdx.x); t < count; t += ReductionScratch::kThreads)
        acc = op(acc, partial[t]);
    const Acc total = BlockReduce(temp).Reduce(acc, op);
    if (threadIdx.x == 0) *result = total;
}

template <class Acc, class Load, class Op>
Acc reduce_box(Load load, const Box& box, Acc identity, Op op, void* partials, void* result,
               cudaStream_t s) {
    const long long n = box.count();
    if (n == 0) return identity;
    const int blocks = static_cast<int>(
        std::min<long long>(ReductionScratch::kBlocks,
                            (n + ReductionScratch::kThreads - 1) / ReductionScratch::kThreads));
    auto* part = static_cast<Acc*>(partials);
    reduce_box_kernel<<<blocks, ReductionScratch::kThreads, 0, s>>>(load, box, n, identity, op,
                                                                    part);
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
    reduce_partials_kernel<<<1, ReductionScratch::kThreads, 0, s>>>(
        part, blocks, identity, op, part + ReductionScratch::kBlocks);
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
    GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(result, part + ReductionScratch::kBlocks, sizeof(Acc),
                                       cudaMemcpyDeviceToHost, s));
    GRIDSIM_CUDA_CHECK(cudaStreamSynchronize(s));
    return *static_cast<Acc*>(result);
}

}  // namespace

ReductionScratch::ReductionScratch() {
    // One slot more than the partials: the final result lives in the last one.
    GRIDSIM_CUDA_CHECK(cudaMalloc(&partials_, (kBlocks + 1) * sizeof(FieldStats)));
    GRIDSIM_CUDA_CHECK(cudaMallocHost(&result_, sizeof(FieldStats)));
}

ReductionScratch::~ReductionScratch() {
    cudaFree(partials_);
    cudaFreeHost(result_);
}

template <class T>
double ReductionScratch::sum_sq_diff(FieldView<const T> a, FieldView<const T> b, const Box& box,
                                     cudaStream_t s) {
    return reduce_box(SqDiff<T>{a, b}, box, 0.0, SumOp{}, partials_, result_, s);
}

template <class T>
double ReductionScratch::sum_sq(FieldView<const T> a, const Box& box, cudaStream_t s) {
    return reduce_box(Sq<T>{a}, box, 0.0, SumOp{}, partials_, result_, s);
}

template <class T>
FieldStats ReductionScratch::stats(FieldView<const T> a, const Box& box, cudaStream_t s) {
    const FieldStats identity{std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(), 0.0, 0};
    return reduce_box(Stat<T>{a}, box, identity, StatsOp{}, partials_, result_, s);
}

#define GRIDSIM_INSTANTIATE(T)                                                                 \
    template double ReductionScratch::sum_sq_diff<T>(FieldView<const T>, FieldView<const T>,   \
                                                     const Box&, cudaStream_t);                \
    template double ReductionScratch::sum_sq<T>(FieldView<const T>, const Box&, cudaStream_t); \
    template FieldStats ReductionScratch::stats<T>(FieldView<const T>, const Box&, cudaStream_t);
GRIDSIM_INSTANTIATE(float)
GRIDSIM_INSTANTIATE(double)
#undef GRIDSIM_INSTANTIATE

}  // namespace gridsim::cuda
