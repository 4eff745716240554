// Checks a run makes before it allocates or connects anything, each refusing (ConfigError, on
// every rank, with the same text) what this machine cannot do; and the devices' description.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "parallel/cart_topology.hpp"
#include "parallel/peer_routes.hpp"

namespace gridsim {

// What one rank's fields need: `fields` of `field_bytes` each (the last good state counted),
// in device memory of which `device_free` bytes are free (on_device), else in host memory.
struct MemoryNeed {
    std::size_t field_bytes = 0;
    int fields = 2;
    bool on_device = false;
    std::size_t device_free = 0;
};

// Refuses a deck whose fields do not fit: the problem's fields in backend memory, plus one host
// copy of a field (output, checks) and, on the CPU, the node's ranks sharing its available
// memory. The numbers are the neediest rank's. Collective.
void check_memory(const Config& cfg, const CartTopology& topo, const MemoryNeed& need);

// Transport ipc: refuses a neighbour whose GPU this rank's cannot reach (parallel/peer_routes.hpp)
// with the first reason. Nothing to check where every rank reaches every other. Collective.
void check_ipc_neighbours(const Config& cfg, const CartTopology& topo,
                          const std::vector<RankGpu>& gpus);

// One rank's device as describe_devices counts it: its name, and where it is a GPU, its node and
// bus id ("" on the CPU).
struct RankDevice {
    std::string name;
    std::string where;
};

// What the ranks compute on, by name: how many physical devices ("2 x NVIDIA H200"), and where
// ranks share them, how many ranks ("1 x NVIDIA H200 (2 ranks)"); every CPU rank counts alone
// ("2 x cpu").
std::string devices_text(const std::vector<RankDevice>& ranks);

// devices_text over every rank of `comm`, `name` this rank's device and `bus_id` its GPU's ("" on
// the CPU); the same string on all ranks.
std::string describe_devices(MPI_Comm comm, const std::string& name, const std::string& bus_id);

}  // namespace gridsim
