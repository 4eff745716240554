// Kernels that move points rather than update them: a box copy or fill, every halo face of a
// move in one launch, and the CG's p = z + b p.
#pragma once

#include "kernels/backend.hpp"
#include "kernels/cuda/walk_common.cuh"
#include "kernels/vector_ops.hpp"

namespace gridsim::cuda {

// One thread per point of a box, grid-stride; op(t, i, j, k) gets the point's position t in the
// box (x fastest) and its indices. Copies between a box and a contiguous buffer, and fills.
template <class Op>
__global__ void box_kernel(Box b, long long n, Op op) {
    const int nx = b.hi[0] - b.lo[0];
    const int ny = b.hi[1] - b.lo[1];
    for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < n;
         t += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long row = t / nx;
        op(t, b.lo[0] + static_cast<int>(t % nx), b.lo[1] + static_cast<int>(row % ny),
           b.lo[2] + static_cast<int>(row / ny));
    }
}

// The faces of a faces_kernel launch in its one index range: where each face's points start
// (at[count] and every entry after it: the total), and its x and y extents as divisors.
struct FaceLayout {
    long long at[FaceMoves<float>::kMaxFaces + 1];
    FastDivide nx[FaceMoves<float>::kMaxFaces];
    FastDivide ny[FaceMoves<float>::kMaxFaces];
};

// Threads of a faces_kernel block, and the registers they may use: few enough to fit in what a
// multiprocessor has left beside a block of the 3D levels kernel, so that a move issued while an
// interior pass fills the GPU runs beside it instead of waiting until one of the pass's blocks
// ends (docs/tuning.md, "Halo move blocks"). A 2D levels pass leaves too few for any move.
constexpr int kFaceThreads = 128;
constexpr int kFaceBlocksPerSm = 16;  // 65536 registers / (128 x 16): 32 per thread

// Every face of `m` in one launch, grid-stride: thread t finds its face by the running point
// counts, then its point in that face's box (x fastest), and calls op(m, face, position in the
// face, i, j, k). The counts are read at constant indices only: indexed by run-time values (the
// face found so far, the face count) they are copied to local memory in every thread, whose
// stores keep L2 busy. The divisions by the face's extents are FastDivide's; a position within a
// face is below 2^31 (launch_faces checks).
template <class T, class Op>
__global__ void __launch_bounds__(kFaceThreads, kFaceBlocksPerSm)
    faces_kernel(FaceMoves<T> m, FaceLayout layout, Op op) {
    const long long n = layout.at[FaceMoves<T>::kMaxFaces];
    for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < n;
         t += static_cast<long long>(gridDim.x) * blockDim.x) {
        int f = 0;
        long long first = 0;
#pragma unroll
        for (int g = 1; g < FaceMoves<T>::kMaxFaces; ++g) {
            if (t >= layout.at[g]) {
                f = g;
                first = layout.at[g];
            }
        }
        const Box b = m.box[f];
        const auto local = static_cast<unsigned>(t - first);
        const FastDivide nx = layout.nx[f];
        const FastDivide ny = layout.ny[f];
        const unsigned row = nx.quotient(local);
        const unsigned plane = ny.quotient(row);
        op(m, f, local, b.lo[0] + static_cast<int>(local - row * nx.divisor()),
           b.lo[1] + static_cast<int>(row - plane * ny.divisor()),
           b.lo[2] + static_cast<int>(plane));
    }
}

template <class T>
struct PackFaces {  // box -> buffer
    FieldView<const T> u;
    __device__ void operator()(const FaceMoves<T>& m, int f, long long t, int i, int j,
                               int k) const {
        m.buf[f][t] = u(i, j, k);
    }
};

template <class T>
struct UnpackFaces {  // buffer -> box
    FieldView<T> u;
    __device__ void operator()(const FaceMoves<T>& m, int f, long long t, int i, int j,
                               int k) const {
        u(i, j, k) = m.buf[f][t];
    }
};

template <class T>
struct WrapFaces {  // box <- the points shift away in the same field
    FieldView<T> u;
    __device__ void operator()(const FaceMoves<T>& m, int f, long long, int i, int j, int k) const {
        u(i, j, k) = u(i + m.shift[f][0], j + m.shift[f][1], k + m.shift[f][2]);
    }
};

template <class T>
struct ReflectFaces {  // box <- 2 (its point on the plane) - (its mirror image)
    FieldView<T> u;
    __device__ void operator()(const FaceMoves<T>& m, int f, long long, int i, int j, int k) const {
        m.reflect_point(u, f, i, j, k);
    }
};

template <class T>
struct FillOp {
    FieldView<T> u;
    T value;
    __device__ void operator()(long long, int i, int j, int k) const { u(i, j, k) = value; }
};

// p = z + b p over a box: blockIdx.y strides over the box's rows (one division per row, not per
// point), each thread takes Points points of its row blockDim.x apart and loads all of them
// before it stores any (one thread per point, with 64-bit index arithmetic per point, moves
// bytes well below the copy rate).
template <class T, int Points>
__global__ void xpay_kernel(FieldView<const T> z, T b, FieldView<T> p, Box box) {
    const int ny = box.hi[1] - box.lo[1];
    const int rows = ny * (box.hi[2] - box.lo[2]);
    const int first = box.lo[0] + static_cast<int>(blockIdx.x * Points * blockDim.x + threadIdx.x);
    for (int row = static_cast<int>(blockIdx.y); row < rows; row += static_cast<int>(gridDim.y)) {
        const int j = box.lo[1] + row % ny;
        const int k = box.lo[2] + row / ny;
        T zv[Points];
        T pv[Points];
#pragma unroll
        for (int u = 0; u < Points; ++u) {
            const int i = first + u * static_cast<int>(blockDim.x);
            if (i < box.hi[0]) {
                zv[u] = z(i, j, k);
                pv[u] = p(i, j, k);
            }
        }
#pragma unroll
        for (int u = 0; u < Points; ++u) {
            const int i = first + u * static_cast<int>(blockDim.x);
            if (i < box.hi[0]) p(i, j, k) = xpay_value(zv[u], b, pv[u]);
        }
    }
}

// A box's rows in blockIdx.y (one division per row, not per point), one point of a row a thread:
// op.store(point, op.value(point)). Multigrid's passes, which ran slower with four points a
// thread laid out as xpay_kernel (docs/tuning.md, "Multigrid smoother").
template <class Op>
__global__ void rows_kernel(Box box, Op op) {
    const int ny = box.hi[1] - box.lo[1];
    const int rows = ny * (box.hi[2] - box.lo[2]);
    const int i = box.lo[0] + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= box.hi[0]) return;
    for (int row = static_cast<int>(blockIdx.y); row < rows; row += static_cast<int>(gridDim.y)) {
        const int j = box.lo[1] + row % ny;
        const int k = box.lo[2] + row / ny;
        op.store(i, j, k, op.value(i, j, k));
    }
}

// The multigrid passes (kernels/multigrid.hpp) as rows_kernel operations.
template <class T>
struct RestrictOp {
    GridTransfer<T> t;
    __device__ T value(int i, int j, int k) const { return restrict_value(t, i, j, k); }
    __device__ void store(int i, int j, int k, T v) const { t.coarse(i, j, k) = v; }
};
template <class T>
struct ProlongOp {
    GridTransfer<T> t;
    __device__ T value(int i, int j, int k) const { return prolong_value(t, i, j, k); }
    __device__ void store(int i, int j, int k, T v) const { t.fine(i, j, k) = v; }
};
template <class T>
struct CombinationOp {
    StencilCombination<T> s;
    __device__ T value(int i, int j, int k) const { return combination_value(s, i, j, k); }
    __device__ void store(int i, int j, int k, T v) const { s.out(i, j, k) = v; }
};

// One pass of the Chebyshev preconditioner over a box (chebyshev_values), laid out as
// xpay_kernel; the first pass reads q alone.
template <class T, int Points>
__global__ void chebyshev_kernel(ChebyshevStep<T> s, Box box) {
    const int ny = box.hi[1] - box.lo[1];
    const int rows = ny * (box.hi[2] - box.lo[2]);
    const int first = box.lo[0] + static_cast<int>(blockIdx.x * Points * blockDim.x + threadIdx.x);
    for (int row = static_cast<int>(blockIdx.y); row < rows; row += static_cast<int>(gridDim.y)) {
        const int j = box.lo[1] + row % ny;
        const int k = box.lo[2] + row / ny;
        T qv[Points];
        T wv[Points] = {};
        T dv[Points] = {};
        T zv[Points] = {};
#pragma unroll
        for (int u = 0; u < Points; ++u) {
            const int i = first + u * static_cast<int>(blockDim.x);
            if (i < box.hi[0]) {
                qv[u] = s.q(i, j, k);
                if (!s.start) {
                    wv[u] = s.w(i, j, k);
                    dv[u] = s.d(i, j, k);
                }
                if (!s.start || s.accumulate) zv[u] = s.z(i, j, k);
            }
        }
#pragma unroll
        for (int u = 0; u < Points; ++u) {
            const int i = first + u * static_cast<int>(blockDim.x);
            if (i < box.hi[0]) {
                const ChebyshevPoint<T> v = chebyshev_values(s, qv[u], wv[u], dv[u], zv[u]);
                s.w(i, j, k) = v.w;
                s.d(i, j, k) = v.d;
                s.z(i, j, k) = v.z;
            }
        }
    }
}

}  // namespace gridsim::cuda
