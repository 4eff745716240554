#include "device/bandwidth.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "device/cuda_raii.hpp"

namespace gridsim {

double transfer_bandwidth(HostMemory mem, Direction dir, std::size_t bytes, int reps) {
    Buffer<char> device = device_buffer<char>(bytes);
    Buffer<char> pinned = mem == HostMemory::pinned ? pinned_buffer<char>(bytes) : Buffer<char>();
    std::vector<char> pageable(mem == HostMemory::pageable ? bytes : 0, 1);
    char* host = mem == HostMemory::pinned ? pinned.data() : pageable.data();
    char* dst = dir == Direction::host_to_device ? device.data() : host;
    const char* src = dir == Direction::host_to_device ? host : device.data();
    GRIDSIM_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));  // warm-up
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        // cudaMemcpy returns when the copy is done, so a host clock times it.
        const auto t0 = std::chrono::steady_clock::now();
        GRIDSIM_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
        best = std::min(
            best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return static_cast<double>(bytes) / best;
}

double theoretical_memory_bandwidth() {
    int device = 0;
    int clock_khz = 0;
    int bus_bits = 0;
    GRIDSIM_CUDA_CHECK(cudaGetDevice(&device));
    GRIDSIM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
    GRIDSIM_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
    return 2.0 * clock_khz * 1e3 * (bus_bits / 8.0);  // double data rate
}

}  // namespace gridsim
