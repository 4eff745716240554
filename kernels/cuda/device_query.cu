#include <cuda_runtime.h>

#include <string>

#include "kernels/cuda/device_query.hpp"

namespace gridsim {

int cuda_device_count() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky "no device" error; a CPU run is still valid
        return 0;
    }
    return n;
}

std::string cuda_runtime_version() {
    int v = 0;
    cudaRuntimeGetVersion(&v);
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace gridsim
