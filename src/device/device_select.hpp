// One GPU per rank: the node-local rank (MPI_Comm_split_type SHARED) picks the device.
#pragma once

#include <mpi.h>

#include <string>

namespace gridsim {

struct DeviceInfo {
    int local_rank = 0;
    int local_ranks = 1;
    int device = -1;  // -1: no CUDA device
    int visible_devices = 0;
    std::string name;
    std::string pci_bus_id;
};

// "13.0" style version of the CUDA runtime linked in.
std::string cuda_runtime_version_string();

// Number of CUDA devices this process sees (0 without driver or device; never aborts).
int visible_cuda_devices();

// What device = local rank % visible would be, without selecting it or failing (info).
DeviceInfo describe_device(int local_rank, int local_ranks);

// Selects device = local rank and makes it current. Throws ConfigError (naming `key`) when
// the node has more ranks than devices and `allow_sharing` is false; then ranks share devices
// round-robin. Collective over `comm`.
DeviceInfo select_device(MPI_Comm comm, bool allow_sharing, const std::string& where);

}  // namespace gridsim
