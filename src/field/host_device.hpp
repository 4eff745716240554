// GRIDSIM_HD marks functions compiled for both the host and the device (under nvcc), so the
// per-point math and the field indexing are written exactly once.
#pragma once

#if defined(__CUDACC__)
#define GRIDSIM_HD __host__ __device__
#else
#define GRIDSIM_HD
#endif
