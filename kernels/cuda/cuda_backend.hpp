// The CUDA backend's factory: a plain C++ header, used by runtime.cpp (the rest of gridsim
// reaches it through DeviceRuntime). Uses the current device (DeviceRuntime::select).
#pragma once

#include <memory>

#include "kernels/backend.hpp"
#include "kernels/device_runtime.hpp"

namespace gridsim {

template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(const LaunchConfig& cfg);

}  // namespace gridsim
