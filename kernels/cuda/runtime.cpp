// The CUDA device runtime: device discovery and selection, backend creation, bandwidth probes and
// the error path of GRIDSIM_CUDA_CHECK. Plain C++ on the CUDA runtime API.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/cuda_raii.hpp"
#include "kernels/device_runtime.hpp"

namespace gridsim {

namespace detail {

void cuda_fail(cudaError_t err, const char* expr, const char* file, int line) {
    const std::string message = fmt::format("CUDA error in {} at {}:{}: {} ({})", expr, file, line,
                                            cudaGetErrorString(err), cudaGetErrorName(err));
    fatal_error(message.c_str());
}

}  // namespace detail

namespace {

class CudaRuntime final : public DeviceRuntime {
public:
    [[nodiscard]] std::string name() const override { return "cuda"; }
    [[nodiscard]] std::string version() const override {
        int v = 0;
        GRIDSIM_CUDA_CHECK(cudaRuntimeGetVersion(&v));
        return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
    }
    [[nodiscard]] int visible_devices() const override {
        int n = 0;
        if (cudaGetDeviceCount(&n) != cudaSuccess) {
            (void)cudaGetLastError();  // no driver or no device: a CPU run is still valid
            return 0;
        }
        return n;
    }
    [[nodiscard]] std::string architectures() const override { return GRIDSIM_CUDA_ARCHITECTURES; }
    [[nodiscard]] DeviceInfo describe(int device) const override {
        DeviceInfo info;
        info.device = device;
        cudaDeviceProp prop{};
        GRIDSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
        info.name = prop.name;
        info.cc_major = prop.major;
        info.cc_minor = prop.minor;
        char bus[32] = {};
        GRIDSIM_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
        info.pci_bus_id = bus;
        return info;
    }
    void select(int device) override { GRIDSIM_CUDA_CHECK(cudaSetDevice(device)); }
    [[nodiscard]] bool shared_by_mps(int device) const override {
        int yes = 0;
        GRIDSIM_CUDA_CHECK(cudaDeviceGetAttribute(&yes, cudaDevAttrMpsEnabled, device));
        return yes != 0;
    }
    [[nodiscard]] std::vector<std::string> reachable_peers(int device) const override {
        std::vector<std::string> ids;
        for (int d = 0; d < visible_devices(); ++d) {
            int yes = 0;
            if (d != device) GRIDSIM_CUDA_CHECK(cudaDeviceCanAccessPeer(&yes, device, d));
            if (yes) ids.push_back(describe(d).pci_bus_id);
        }
        return ids;
    }

    [[nodiscard]] std::unique_ptr<Backend<float>> make_float_backend(
        const LaunchConfig& launch) const override {
        return make_cuda_backend<float>(launch);
    }
    [[nodiscard]] std::unique_ptr<Backend<double>> make_double_backend(
        const LaunchConfig& launch) const override {
        return make_cuda_backend<double>(launch);
    }

    [[nodiscard]] double transfer_bandwidth(HostMemory mem, Direction dir, std::size_t bytes,
                                            int reps) const override {
        Buffer<char> device = device_buffer<char>(bytes);
        Buffer<char> pinned =
            mem == HostMemory::pinned ? pinned_buffer<char>(bytes) : Buffer<char>();
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

    [[nodiscard]] double theoretical_memory_bandwidth() const override {
        int device = 0;
        int clock_khz = 0;
        int bus_bits = 0;
        GRIDSIM_CUDA_CHECK(cudaGetDevice(&device));
        GRIDSIM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
        GRIDSIM_CUDA_CHECK(
            cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
        return 2.0 * clock_khz * 1e3 * (bus_bits / 8.0);  // double data rate
    }
};

}  // namespace

DeviceRuntime* device_runtime() {
    static CudaRuntime runtime;
    return &runtime;
}

}  // namespace gridsim
