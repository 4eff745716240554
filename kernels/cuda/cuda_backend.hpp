// The CUDA backend (built when GRIDSIM_HAVE_CUDA): a plain C++ header, so host code that
// creates the backend needs no CUDA compiler.
#pragma once

#include <memory>

#include "kernels/backend.hpp"

namespace gridsim {

struct CudaLaunchConfig {
    bool tiled = false;  // shared-memory tiled stencil; false: naive
    int block_x = 0;     // threads per block in x and y; 0: the default for the variant
    int block_y = 0;
    int rows = 0;  // naive: points per thread along y (1, 2, 4 or 8); 0: the default
};

// Uses the current device (select_device() has set it).
template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(const CudaLaunchConfig& cfg);

}  // namespace gridsim
