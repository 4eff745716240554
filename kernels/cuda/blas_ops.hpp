// The CG's vector operations on the CUDA backend through cuBLAS (level 1, 64-bit sizes).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_raii.hpp"
#include "mesh/field.hpp"

namespace gridsim::cuda {

// One cuBLAS handle per backend (so per rank), made at the first vector operation (a run without
// a solver never pays for it) and bound to `stream` (the boundary lane's): the BLAS calls are
// ordered with the operator's kernels like any other work of that lane. axpy and scale take their
// factor from the host (the handle's default pointer mode); dot writes its result to device
// memory and so returns without waiting.
template <class T>
class BlasOps {
public:
    explicit BlasOps(cudaStream_t stream);
    BlasOps(const BlasOps&) = delete;
    BlasOps& operator=(const BlasOps&) = delete;
    ~BlasOps();

    // cuBLAS makes its handle and loads its kernels at first use: one call of each routine the
    // solver uses, on two scratch values, pays that here. Waits for the stream.
    void prepare();
    void axpy(T a, FieldView<const T> x, FieldView<T> y);
    void scale(T a, FieldView<T> x);
    void dot(FieldView<const T> x, FieldView<const T> y, double* sum);

private:
    cublasHandle_t handle();

    cudaStream_t stream_;
    cublasHandle_t handle_ = nullptr;
    Buffer<float> float_ = device_buffer<float>(1);  // Sdot's result before its widening
};

}  // namespace gridsim::cuda
