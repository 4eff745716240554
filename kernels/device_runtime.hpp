// What the rest of gridsim may ask of a device backend (CUDA today; a HIP backend would be one
// more implementation): whether it is built, its version, the devices it sees, making one of
// them current, creating the compute backend on it, and the bandwidth probes of `gridsim bench`.
// Plain C++: nothing outside the backend's own folder (kernels/cuda/) includes a vendor header.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "kernels/backend.hpp"

namespace gridsim {

// One device as the runtime numbers it (0 .. visible - 1 within this process's view).
struct DeviceInfo {
    int local_rank = 0;   // this rank on its node (set by device selection)
    int local_ranks = 1;  // ranks on the node
    int device = -1;      // -1: no device (CPU backend)
    int visible_devices = 0;
    std::string name;
    std::string pci_bus_id;  // "0000:41:00.0" style, for hwloc and the placement report
    int cc_major = 0;        // compute capability, major.minor
    int cc_minor = 0;
};

// How the device backend launches its stencils (parallel.kernel, .block, .rows_per_thread).
struct LaunchConfig {
    KernelKind kernel = KernelKind::stream;
    int block_x = 0;  // threads per block in x and y; 0: the variant's default
    int block_y = 0;
    int points = 0;  // points per thread along the walk axis; 0: the variant's default
};

enum class HostMemory { pinned, pageable };
enum class Direction { host_to_device, device_to_host };

class DeviceRuntime {
public:
    DeviceRuntime() = default;
    DeviceRuntime(const DeviceRuntime&) = delete;
    DeviceRuntime& operator=(const DeviceRuntime&) = delete;
    virtual ~DeviceRuntime() = default;

    [[nodiscard]] virtual std::string name() const = 0;     // "cuda"
    [[nodiscard]] virtual std::string version() const = 0;  // of the runtime linked in, "13.0"
    // Devices this process sees (0 without a driver or a device; never fails).
    [[nodiscard]] virtual int visible_devices() const = 0;
    // The GPU architectures this build has code for, as CMake's list resolved ("80-real,90").
    [[nodiscard]] virtual std::string architectures() const = 0;
    // Index, name, bus id and compute capability of visible device `device` (the rank fields
    // are the caller's).
    [[nodiscard]] virtual DeviceInfo describe(int device) const = 0;
    // Makes `device` current for this process (every later call and backend uses it).
    virtual void select(int device) = 0;
    // Whether contexts made on `device` are shared through MPS (the Multi-Process Service), so
    // that the kernels of processes sharing the GPU run side by side instead of taking turns.
    [[nodiscard]] virtual bool shared_by_mps(int device) const = 0;
    // Bus ids of the other visible devices whose memory `device` can load from and store to
    // (peer access), for the ipc halo transport's routes.
    [[nodiscard]] virtual std::vector<std::string> reachable_peers(int device) const = 0;
    [[nodiscard]] virtual std::unique_ptr<Backend<float>> make_float_backend(
        const LaunchConfig& launch) const = 0;
    [[nodiscard]] virtual std::unique_ptr<Backend<double>> make_double_backend(
        const LaunchConfig& launch) const = 0;
    // Bytes per second of one host<->device copy of `bytes` (best of `reps`), current device.
    [[nodiscard]] virtual double transfer_bandwidth(HostMemory mem, Direction dir,
                                                    std::size_t bytes, int reps) const = 0;
    // 2 x memory clock x bus width of the current device: the datasheet DRAM ceiling.
    [[nodiscard]] virtual double theoretical_memory_bandwidth() const = 0;
};

// The device runtime of this build, or nullptr when it has none. Defined by the device backend's
// folder (kernels/cuda/runtime.cpp), or by kernels/cpu/no_device.cpp in a CPU-only build.
DeviceRuntime* device_runtime();

template <class T>
std::unique_ptr<Backend<T>> make_device_backend(const DeviceRuntime& rt, const LaunchConfig& l) {
    if constexpr (sizeof(T) == 4) {
        return rt.make_float_backend(l);
    } else {
        return rt.make_double_backend(l);
    }
}

// A fatal error inside a backend (a failed CUDA call): the message is handed to the handler,
// which must not return. The default prints it and aborts this process; the MPI session installs
// one that names the rank and ends every rank, so no rank is left waiting in a collective.
using FatalErrorHandler = void (*)(const char* message);
void set_fatal_error_handler(FatalErrorHandler handler);
[[noreturn]] void fatal_error(const char* message);

}  // namespace gridsim
