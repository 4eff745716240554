// Where this process runs: host name and the CPUs it is bound to, read through hwloc. (The
// process is not bound to its GPU's NUMA node yet: this only reports.)
#pragma once

#include <string>

namespace gridsim {

struct Placement {
    std::string host;
    std::string cpus;  // hwloc list syntax, e.g. "0-3,8"
};

Placement current_placement();
// NUMA node of the PCI device with this bus id ("0000:41:00.0"), or -1 when hwloc does not
// know it (one NUMA node, or the device's locality is not reported).
int numa_node_of_pci(const std::string& bus_id);
std::string hwloc_version();

}  // namespace gridsim
