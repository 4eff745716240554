// GRIDSIM_HD marks functions compiled for both the host and the device (under nvcc), so the
// per-point math and the field indexing are written exactly once. This header is the one place
// outside kernels/cuda/ that tests for the CUDA compiler: only to spell qualifiers and roundings.
#pragma once

#if defined(__CUDACC__)
#define GRIDSIM_HD __host__ __device__
#else
#define GRIDSIM_HD
#endif

namespace gridsim {

// a * b - c and a * b + c with two roundings on every compiler. nvcc fuses such expressions
// into one FMA (one rounding) and host compilers for x86-64 do not, so a result that decides a
// comparison (is this point inside the hot spot?) must be written with these to agree on the
// CPU and the GPU.
GRIDSIM_HD inline double mul_sub_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
    return __dsub_rn(__dmul_rn(a, b), c);
#else
    return a * b - c;
#endif
}
GRIDSIM_HD inline double mul_add_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
    return __dadd_rn(__dmul_rn(a, b), c);
#else
    return a * b + c;
#endif
}

}  // namespace gridsim
