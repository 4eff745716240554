// The CUDA backend (built when GRIDSIM_HAVE_CUDA): a plain C++ header, so host code that
// creates the backend needs no CUDA compiler.
#pragma once

#include <memory>

#include "config/config.hpp"
#include "kernels/backend.hpp"

namespace gridsim {

struct CudaLaunchConfig {
    KernelKind kernel = KernelKind::stream;
    int block_x = 0;  // threads per block in x and y; 0: the default for the variant
    int block_y = 0;
    // Points per thread along the walk axis (stream, tiled: any; naive: 1, 2, 4 or 8); 0: the
    // variant's default.
    int points = 0;
};

// Uses the current device (select_device() has set it).
template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(const CudaLaunchConfig& cfg);

}  // namespace gridsim
