// The CUDA backend's phase timer: CUDA-event intervals per lane.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "kernels/backend.hpp"

namespace gridsim::cuda {

// Intervals timed by events recorded on the lanes' streams (boundary, interior).
std::unique_ptr<IntervalTimer> make_event_timer(cudaStream_t boundary, cudaStream_t interior);

}  // namespace gridsim::cuda
