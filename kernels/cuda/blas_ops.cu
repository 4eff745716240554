// BlasOps: the CG's vector operations through cuBLAS.
#include "kernels/cuda/blas_ops.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/device_runtime.hpp"

// cuBLAS calls go through GRIDSIM_CUBLAS_CHECK: a failure ends every rank as a CUDA error does.
#define GRIDSIM_CUBLAS_CHECK(expr)                                                           \
    do {                                                                                     \
        const cublasStatus_t gridsim_blas_rc_ = (expr);                                      \
        if (gridsim_blas_rc_ != CUBLAS_STATUS_SUCCESS) cublas_fail(gridsim_blas_rc_, #expr); \
    } while (0)

namespace gridsim::cuda {

namespace {

[[noreturn]] void cublas_fail(cublasStatus_t rc, const char* expr) {
    const std::string message = fmt::format("cuBLAS error in {}: {} ({})", expr,
                                            cublasGetStatusString(rc), cublasGetStatusName(rc));
    fatal_error(message.c_str());
}

// The BLAS level-1 calls by precision (64-bit sizes: a field may hold more than 2^31 values).
cublasStatus_t blas_axpy(cublasHandle_t h, std::int64_t n, float a, const float* x, float* y) {
    return cublasSaxpy_64(h, n, &a, x, 1, y, 1);
}
cublasStatus_t blas_axpy(cublasHandle_t h, std::int64_t n, double a, const double* x, double* y) {
    return cublasDaxpy_64(h, n, &a, x, 1, y, 1);
}
cublasStatus_t blas_scal(cublasHandle_t h, std::int64_t n, float a, float* x) {
    return cublasSscal_64(h, n, &a, x, 1);
}
cublasStatus_t blas_scal(cublasHandle_t h, std::int64_t n, double a, double* x) {
    return cublasDscal_64(h, n, &a, x, 1);
}
cublasStatus_t blas_dot(cublasHandle_t h, std::int64_t n, const float* x, const float* y,
                        float* out) {
    return cublasSdot_64(h, n, x, 1, y, 1, out);
}
cublasStatus_t blas_dot(cublasHandle_t h, std::int64_t n, const double* x, const double* y,
                        double* out) {
    return cublasDdot_64(h, n, x, 1, y, 1, out);
}

__global__ void widen_kernel(const float* in, double* out) { *out = static_cast<double>(*in); }

}  // namespace

template <class T>
BlasOps<T>::BlasOps(cudaStream_t stream) : stream_(stream) {}

template <class T>
BlasOps<T>::~BlasOps() {
    if (handle_ != nullptr) cublasDestroy(handle_);
}

template <class T>
cublasHandle_t BlasOps<T>::handle() {
    if (handle_ == nullptr) {
        GRIDSIM_CUBLAS_CHECK(cublasCreate(&handle_));
        GRIDSIM_CUBLAS_CHECK(cublasSetStream(handle_, stream_));
    }
    return handle_;
}

template <class T>
void BlasOps<T>::prepare() {
    cublasHandle_t h = handle();
    Buffer<T> x = device_buffer<T>(2);
    Buffer<T> y = device_buffer<T>(2);
    Buffer<T> product = device_buffer<T>(1);
    GRIDSIM_CUDA_CHECK(cudaMemsetAsync(x.data(), 0, 2 * sizeof(T), stream_));
    GRIDSIM_CUDA_CHECK(cudaMemsetAsync(y.data(), 0, 2 * sizeof(T), stream_));
    GRIDSIM_CUBLAS_CHECK(blas_axpy(h, 2, T(1), x.data(), y.data()));
    GRIDSIM_CUBLAS_CHECK(blas_scal(h, 2, T(1), y.data()));
    GRIDSIM_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
    GRIDSIM_CUBLAS_CHECK(blas_dot(h, 2, x.data(), y.data(), product.data()));
    GRIDSIM_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    GRIDSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <class T>
void BlasOps<T>::axpy(T a, FieldView<const T> x, FieldView<T> y) {
    GRIDSIM_CUBLAS_CHECK(blas_axpy(handle(), x.ext.total, a, x.data, y.data));
}

template <class T>
void BlasOps<T>::scale(T a, FieldView<T> x) {
    GRIDSIM_CUBLAS_CHECK(blas_scal(handle(), x.ext.total, a, x.data));
}

template <class T>
void BlasOps<T>::dot(FieldView<const T> x, FieldView<const T> y, double* sum) {
    cublasHandle_t h = handle();
    GRIDSIM_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
    if constexpr (std::is_same_v<T, double>) {
        GRIDSIM_CUBLAS_CHECK(blas_dot(h, x.ext.total, x.data, y.data, sum));
    } else {
        // Sdot's result is a float; the slots hold doubles. One scratch float is enough: the next
        // Sdot on the lane starts after this widening.
        GRIDSIM_CUBLAS_CHECK(blas_dot(h, x.ext.total, x.data, y.data, float_.data()));
        widen_kernel<<<1, 1, 0, stream_>>>(float_.data(), sum);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }
    GRIDSIM_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
}

template class BlasOps<float>;
template class BlasOps<double>;

}  // namespace gridsim::cuda
