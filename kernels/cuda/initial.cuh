// Device-side initial conditions (defined in initial.cu, the one translation unit with Thrust).
#pragma once

#include <cuda_runtime.h>

#include <array>

#include "kernels/initial.hpp"
#include "mesh/field.hpp"

namespace gridsim::cuda {

// u(i, j, k) = initial_value(p, origin + (i, j, k)) at every owned point, on `stream`.
template <class T>
void fill_initial(const InitialParams& p, FieldView<T> u, const std::array<int, 3>& origin,
                  cudaStream_t stream);

}  // namespace gridsim::cuda
