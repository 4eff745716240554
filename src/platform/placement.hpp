// A rank's placement (docs/running.md, "On a cluster"): parallel.bind decided and applied for the
// rank's GPU (or, on the CPU backend, its share of the node's NUMA nodes), and what the process
// looks like afterwards, read back from the OS: CPU set, memory policy, and the NUMA node of the
// pages of a host buffer allocated the way the staging buffers are.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <mpi.h>

#include "config/config.hpp"
#include "parallel/binding.hpp"

namespace gridsim {

struct RankPlacement {
    std::string host;
    std::string gpu;        // "NVIDIA H200 (0000:18:00.0)"; "" on the CPU backend
    std::string numa_node;  // the GPU's NUMA node(s) (or the CPU rank's); "unknown"
    std::string cpus;       // the CPU set the process is bound to now
    std::string mem_nodes;  // NUMA node(s) of the memory policy; "" = the OS default
    std::string pages;      // NUMA node(s) of a host buffer allocated after binding
    std::string note;       // what parallel.bind did and why

    // One line of the placement map: "host h, GPU g, NUMA node n, CPUs c, memory on ...".
    [[nodiscard]] std::string line() const;
    // For gathering over ranks.
    [[nodiscard]] std::string pack() const;
    static RankPlacement unpack(const std::string& packed);
};

// Decides parallel.bind for this rank on this machine and applies it. Collective over `comm`:
// a "strict" refusal on any rank throws ConfigError on every rank (naming that rank), and
// "numa" warnings are printed once, by rank 0.
BindDecision bind_this_rank(const Config& cfg, MPI_Comm comm, const Topology& topo,
                            const std::string& bus_id, int local_rank, int local_ranks);

// The placement after binding; `probe` is a host buffer of `bytes` allocated after it.
// `node`: this rank's node (parallel/node_map.hpp).
RankPlacement read_placement(const Topology& topo, const BindDecision& d, const std::string& node,
                             const std::string& gpu, const void* probe, std::size_t bytes);

// Every rank's placement, in rank order, on rank 0 (empty elsewhere).
std::vector<RankPlacement> gather_placements(MPI_Comm comm, const RankPlacement& mine);

}  // namespace gridsim
