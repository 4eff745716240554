// GRIDSIM_CUDA_CHECK(expr): every CUDA runtime call goes through it; launches are followed by
// GRIDSIM_CUDA_CHECK(cudaGetLastError()). A failure reports the expression, file, line and
// CUDA's error string through fatal_error(), whose handler (installed by the MPI session) names
// the rank and ends every rank: an error on one GPU must not leave the others waiting.
#pragma once

#include <cuda_runtime.h>

namespace gridsim::detail {
[[noreturn]] void cuda_fail(cudaError_t err, const char* expr, const char* file, int line);
}  // namespace gridsim::detail

#define GRIDSIM_CUDA_CHECK(expr)                                                        \
    do {                                                                                \
        const cudaError_t gridsim_cuda_err_ = (expr);                                   \
        if (gridsim_cuda_err_ != cudaSuccess) {                                         \
            ::gridsim::detail::cuda_fail(gridsim_cuda_err_, #expr, __FILE__, __LINE__); \
        }                                                                               \
    } while (0)
