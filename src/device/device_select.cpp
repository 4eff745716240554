#include "device/device_select.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "comm/mpi_check.hpp"
#include "comm/mpi_session.hpp"
#include "config/config.hpp"
#include "device/cuda_check.hpp"

namespace gridsim {

namespace detail {

void cuda_fail(cudaError_t err, const char* expr, const char* file, int line) {
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "gridsim: rank %d: CUDA error in %s at %s:%d: %s (%s)\n", rank, expr, file,
                 line, cudaGetErrorString(err), cudaGetErrorName(err));
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
}

}  // namespace detail

std::string cuda_runtime_version_string() {
    int v = 0;
    GRIDSIM_CUDA_CHECK(cudaRuntimeGetVersion(&v));
    return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

int visible_cuda_devices() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();  // no driver or no device: a CPU run is still valid
        return 0;
    }
    return n;
}

namespace {

void fill_names(DeviceInfo& info) {
    cudaDeviceProp prop{};
    GRIDSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, info.device));
    info.name = prop.name;
    char bus[32] = {};
    GRIDSIM_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, info.device));
    info.pci_bus_id = bus;
}

}  // namespace

DeviceInfo describe_device(int local_rank, int local_ranks) {
    DeviceInfo info;
    info.local_rank = local_rank;
    info.local_ranks = local_ranks;
    info.visible_devices = visible_cuda_devices();
    if (info.visible_devices == 0) return info;
    info.device = local_rank % info.visible_devices;
    fill_names(info);
    return info;
}

DeviceInfo select_device(MPI_Comm comm, bool allow_sharing, const std::string& where) {
    DeviceInfo info;
    local_rank_and_size(comm, info.local_rank, info.local_ranks);
    info.visible_devices = visible_cuda_devices();
    // Decide collectively, so every rank throws the same error or none does.
    int too_many = info.local_ranks > info.visible_devices ? 1 : 0;
    int any = 0;
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&too_many, &any, 1, MPI_INT, MPI_MAX, comm));
    int fewest = 0;
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&info.visible_devices, &fewest, 1, MPI_INT, MPI_MIN, comm));
    if (fewest == 0) throw ConfigError(where + "a rank sees no CUDA device");
    if (any != 0 && !allow_sharing) {
        throw ConfigError(
            where +
            fmt::format("a node runs more ranks than it has GPUs ({} ranks, {} GPUs); use one "
                        "rank per GPU or set parallel.share_gpus = true",
                        info.local_ranks, info.visible_devices));
    }
    info.device = info.local_rank % info.visible_devices;
    GRIDSIM_CUDA_CHECK(cudaSetDevice(info.device));
    fill_names(info);
    return info;
}

}  // namespace gridsim
