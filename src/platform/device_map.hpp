// Which device each rank of a node drives, decided from what every rank sees: the identities
// (PCI bus ids, or UUIDs) of its visible devices, in its own visible order. Launchers produce
// every layout: all GPUs visible to every rank, one GPU per rank (Slurm --gpus-per-task,
// --gpu-bind, a per-rank CUDA_VISIBLE_DEVICES), several per rank, fewer GPUs than ranks, a rank
// with none. Whether two ranks share a GPU is decided by identity, never by counting. A pure
// function: every rank computes the same map from the same gathered lists.
#pragma once

#include <string>
#include <vector>

namespace gridsim {

struct DeviceAssignment {
    int device = -1;      // index into this rank's visible list; -1: it sees none
    std::string id;       // the chosen device's identity ("" with none)
    bool shared = false;  // another rank of the node drives the same physical device
};

// visible[r]: the device identities node-local rank r sees, in its visible order. Ranks choose
// in local-rank order, each the device it sees that the fewest ranks have taken so far; among
// equals, the first in its visible list, starting at local rank % count when every rank sees
// the same list (so rank r takes device r), else at the start of its list.
std::vector<DeviceAssignment> assign_devices(const std::vector<std::vector<std::string>>& visible);

}  // namespace gridsim
