// Chooses and creates the backend a deck asks for: `cpu`, `cuda` (one GPU per rank, device =
// node-local rank), or `auto` (CUDA when this build has it and every rank sees a device, else
// CPU, saying why). The device backend is reached only through DeviceRuntime
// (kernels/device_runtime.hpp). Collective over `comm`.
#pragma once

#include <memory>
#include <string>

#include <mpi.h>

#include "config/config.hpp"
#include "kernels/backend.hpp"
#include "kernels/device_runtime.hpp"

namespace gridsim {

template <class T>
struct BackendChoice {
    std::unique_ptr<Backend<T>> backend;
    DeviceInfo device;                                // device = -1 on the CPU backend
    TransportKind transport = TransportKind::staged;  // resolved: staged, cuda_aware or nccl
    std::string note;  // why `auto` chose what it chose ("" otherwise)
};

// Throws ConfigError (naming parallel.backend or parallel.transport) for a choice this build,
// these devices or this MPI cannot honour.
template <class T>
BackendChoice<T> choose_backend(const Config& cfg, MPI_Comm comm);

// Whether this build has the CUDA backend, how many devices this process sees, and the
// version of the CUDA runtime linked in ("" without CUDA).
bool cuda_backend_built();
int cuda_devices_visible();
std::string cuda_runtime_version();

// The device `local_rank % visible` would be, without selecting it (gridsim info).
DeviceInfo describe_device(int local_rank, int local_ranks);

}  // namespace gridsim
