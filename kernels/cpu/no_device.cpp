// A build without a device backend: there is no device runtime, and the CPU backend runs.
#include "kernels/device_runtime.hpp"

namespace gridsim {

DeviceRuntime* device_runtime() { return nullptr; }

}  // namespace gridsim
