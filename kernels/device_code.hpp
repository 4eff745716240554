// Whether a build's GPU code runs on a device: the build's CUDA architectures (CMake's
// CMAKE_CUDA_ARCHITECTURES entries, resolved: "80-real", "90-virtual", "90" for both) against
// the device's compute capability. Machine code for NN runs on the devices of the same major
// version and a minor version at least NN's ("a" variants, such as 90a, on exactly NN); PTX for NN
// runs on every device of capability NN or newer (the driver compiles it at start-up).
#pragma once

#include <string>

namespace gridsim {

// Whether `archs` (entries separated by ',' or ';') holds code for compute capability
// major.minor.
bool has_device_code(const std::string& archs, int major, int minor);

// "" where `archs` has code for the device, else the one line that ends the run: the device's
// index and name, its compute capability, what the build has, and the option to rebuild with.
std::string missing_device_code(const std::string& archs, int device, const std::string& name,
                                int major, int minor);

}  // namespace gridsim
