#include <cub/block/block_reduce.cuh>

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/cuda/cuda_check.hpp"
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

// What each reduction reads at a point (Raw: the field values, loaded kUnroll points at a time
// so that enough bytes are in flight), how a thread folds them into its Local accumulator, and
// the Acc that the block reduction combines. Loads folded one at a time, as each arrives, keep
// too few bytes in flight.
// The sum of (a - b)^2 over two fields (the residual's separate pass), in double, with the
// stencil kernels' term for the fused residual.
template <class T>
struct SquaredDifference {
    static constexpr int kUnroll = 64 / sizeof(T);
    struct Raw {
        T a, b;
    };
    using Local = double;
    FieldView<const T> a, b;
    __device__ Raw raw(int i, int j, int k) const { return {a(i, j, k), b(i, j, k)}; }
    __device__ static Local start() { return 0.0; }
    __device__ static void add(Local& acc, Raw r) {
        acc += stencil_sum_term<StencilSum::change>(r.a, r.b);
    }
    __device__ static double finish(Local acc) { return acc; }
};
template <class T>
struct Sq {
    static constexpr int kUnroll = 128 / sizeof(T);
    using Raw = T;
    using Local = double;
    FieldView<const T> a;
    __device__ Raw raw(int i, int j, int k) const { return a(i, j, k); }
    __device__ static Local start() { return 0.0; }
    __device__ static void add(Local& acc, Raw r) {
        const double v = r;
        acc += v * v;
    }
    __device__ static double finish(Local acc) { return acc; }
};
// The fused CG pass: a point's four values are loaded first (kUnroll points of them in flight
// per thread, as for the other reductions), then add() computes, stores x, r (and z) and folds
// r.z. All the fields share one shape, so one element index serves the four. (Loading and
// storing point by point keeps only one point's loads in flight.)
template <class T>
struct CgStep {
    static constexpr int kUnroll = 64 / sizeof(T);
    struct Raw {
        T p, q, x, r;
        std::int64_t at;
    };
    using Local = double;
    CgUpdate<T> u;
    __device__ Raw raw(int i, int j, int k) const {
        const std::int64_t at = u.x.ext.index(i, j, k);
        return {u.p.data[at], u.q.data[at], u.x.data[at], u.r.data[at], at};
    }
    __device__ static Local start() { return 0.0; }
    __device__ void add(Local& acc, const Raw& v) const {
        const CgPoint<T> n = cg_update_values(u, v.p, v.q, v.x, v.r);
        u.x.data[v.at] = n.x;
        u.r.data[v.at] = n.r;
        if (u.precondition) u.z.data[v.at] = n.z;
        acc += n.rz;
    }
    __device__ static double finish(Local acc) { return acc; }
};
// Non-finite values are counted and left out of min, max and sum, without branches; min and
// max are kept in T (exact), only the sum in double.
template <class T>
struct Stat {
    static constexpr int kUnroll = 128 / sizeof(T);
    using Raw = T;
    struct Local {
        T min, max;
        double sum;
        int nonfinite;
    };
    FieldView<const T> a;
    __device__ Raw raw(int i, int j, int k) const { return a(i, j, k); }
    __device__ static Local start() {
        return {std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(), 0.0, 0};
    }
    __device__ static void add(Local& acc, Raw v) {
        const bool finite = isfinite(v);
        acc.min = finite ? min(acc.min, v) : acc.min;
        acc.max = finite ? max(acc.max, v) : acc.max;
        acc.sum += finite ? static_cast<double>(v) : 0.0;
        acc.nonfinite += finite ? 0 : 1;
    }
    __device__ static FieldStats finish(Local acc) {
        return {static_cast<double>(acc.min), static_cast<double>(acc.max), acc.sum, acc.nonfinite};
    }
};

// Pass 1: warp w of the grid folds rows w, w + warps, ... of the box (row = (j, k)); lane l
// takes the row's points l, l + 32, ..., loading Load::kUnroll of them before folding any.
// Rows are found with one 32-bit division per row, never per point. Each block reduces its
// threads with CUB's fixed tree and block b writes partial[b]; the grid depends only on the
// box, so the order of every addition is fixed.
template <class Acc, class Load, class Op>
__global__ void reduce_box_kernel(Load load, Box b, Op op, Acc* partial) {
    using BlockReduce = cub::BlockReduce<Acc, ReductionScratch::kThreads>;
    __shared__ typename BlockReduce::TempStorage temp;
    constexpr int kUnroll = Load::kUnroll;
    constexpr int kWarpsPerBlock = ReductionScratch::kThreads / 32;
    const int ny = b.hi[1] - b.lo[1];
    const int rows = ny * (b.hi[2] - b.lo[2]);
    const int lane = static_cast<int>(threadIdx.x % 32);
    const int warps = static_cast<int>(gridDim.x) * kWarpsPerBlock;
    typename Load::Local local = Load::start();
    for (int row =
             static_cast<int>(blockIdx.x) * kWarpsPerBlock + static_cast<int>(threadIdx.x / 32);
         row < rows; row += warps) {
        const int j = b.lo[1] + row % ny;
        const int k = b.lo[2] + row / ny;
        for (int i0 = b.lo[0] + lane; i0 < b.hi[0]; i0 += 32 * kUnroll) {
            typename Load::Raw v[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                if (i0 + 32 * u < b.hi[0]) v[u] = load.raw(i0 + 32 * u, j, k);
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                if (i0 + 32 * u < b.hi[0]) load.add(local, v[u]);
            }
        }
    }
    const Acc total = BlockReduce(temp).Reduce(Load::finish(local), op);
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

// Reduces `box` into *result (device memory) on `s`, not waited for; an empty box gives the
// identity (the fold runs over no partials).
template <class Acc, class Load, class Op>
void reduce_box_into(Load load, const Box& box, Acc identity, Op op, Acc* partials, Acc* result,
                     cudaStream_t s) {
    const long long rows =
        box.empty() ? 0 : static_cast<long long>(box.hi[1] - box.lo[1]) * (box.hi[2] - box.lo[2]);
    constexpr int kWarpsPerBlock = ReductionScratch::kThreads / 32;
    const int blocks = static_cast<int>(std::min<long long>(
        ReductionScratch::kBlocks, (rows + kWarpsPerBlock - 1) / kWarpsPerBlock));
    if (blocks > 0) {
        reduce_box_kernel<Acc>
            <<<blocks, ReductionScratch::kThreads, 0, s>>>(load, box, op, partials);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }
    reduce_partials_kernel<<<1, ReductionScratch::kThreads, 0, s>>>(partials, blocks, identity, op,
                                                                    result);
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
}

// The same, returned to the host (waits for `s`).
template <class Acc, class Load, class Op>
Acc reduce_box(Load load, const Box& box, Acc identity, Op op, void* partials, void* result,
               cudaStream_t s) {
    if (box.empty()) return identity;
    auto* part = static_cast<Acc*>(partials);
    reduce_box_into(load, box, identity, op, part, part + ReductionScratch::kBlocks, s);
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
    return reduce_box(SquaredDifference<T>{a, b}, box, 0.0, SumOp{}, partials_, result_, s);
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

template <class T>
void ReductionScratch::cg_update(const CgUpdate<T>& u, const Box& box, double* sum,
                                 cudaStream_t s) {
    reduce_box_into(CgStep<T>{u}, box, 0.0, SumOp{}, static_cast<double*>(partials_), sum, s);
}

#define GRIDSIM_INSTANTIATE(T)                                                                    \
    template double ReductionScratch::sum_sq_diff<T>(FieldView<const T>, FieldView<const T>,      \
                                                     const Box&, cudaStream_t);                   \
    template double ReductionScratch::sum_sq<T>(FieldView<const T>, const Box&, cudaStream_t);    \
    template FieldStats ReductionScratch::stats<T>(FieldView<const T>, const Box&, cudaStream_t); \
    template void ReductionScratch::cg_update<T>(const CgUpdate<T>&, const Box&, double*,         \
                                                 cudaStream_t);
GRIDSIM_INSTANTIATE(float)
GRIDSIM_INSTANTIATE(double)
#undef GRIDSIM_INSTANTIATE

}  // namespace gridsim::cuda
