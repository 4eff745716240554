// What the CUDA runtime sees on this node. Built only when the CUDA backend is enabled.
#pragma once

#include <string>

namespace gridsim {

// Number of visible CUDA devices; 0 when there is no driver or no device (never throws).
int cuda_device_count();
// "13.0" style runtime version of the CUDA runtime linked in.
std::string cuda_runtime_version();

}  // namespace gridsim
