// Where a rank runs and where its memory lives (docs/running.md, "On a cluster"). The decision is a
// pure function of the machine's topology (hwloc, from this system or from an XML file), the chosen
// GPU's PCI bus id, the CPU set the launcher gave the process and `parallel.bind`; applying it
// binds the process's CPUs and the calling thread's memory policy, so that every large host
// buffer allocated afterwards (pinned staging buffers, snapshot staging, CPU fields) lands on
// the NUMA node next to the GPU.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"

struct hwloc_topology;

namespace gridsim {

// A machine's topology with its PCI devices. Move-only; owns the hwloc handle.
class Topology {
public:
    // This machine (the one the process runs on: binding applies to it).
    static Topology system();
    // A topology exported by hwloc (lstopo --of xml), for deciding only. Throws on a bad file.
    static Topology from_xml(const std::string& path);

    [[nodiscard]] std::vector<int> numa_node_ids() const;  // OS indices, ascending
    [[nodiscard]] std::string all_cpus() const;            // hwloc list syntax, e.g. "0-63"
    [[nodiscard]] hwloc_topology* get() const { return t_.get(); }

private:
    struct Deleter {
        void operator()(hwloc_topology* t) const;
    };
    explicit Topology(hwloc_topology* t) : t_(t) {}
    std::unique_ptr<hwloc_topology, Deleter> t_;
};

struct BindRequest {
    BindMode mode = BindMode::automatic;
    std::string bus_id;         // the rank's GPU ("0000:41:00.0"); "" on the CPU backend
    std::string launcher_cpus;  // the CPU set the process started with; "" = every CPU
    int local_rank = 0;         // CPU backend: ranks of a node are spread over its NUMA nodes
    int local_ranks = 1;
};

// What to do, and why, in one line. Empty cpus / mem_nodes: leave that part as it is.
struct BindDecision {
    std::string locality;   // NUMA node(s) of the GPU, or the one chosen for a CPU rank; ""
                            // when unknown
    std::string cpus;       // bind the process's CPUs here (always within the launcher's set)
    std::string mem_nodes;  // bind the memory policy to these NUMA nodes
    std::string note;       // what was decided and why
    bool warn = false;      // parallel.bind = "numa" could not bind as asked: a warning
    std::string error;      // parallel.bind = "strict" could not bind (why): the run must not start
};

BindDecision decide_binding(const Topology& topo, const BindRequest& req);

// Binds every thread of the process to d.cpus and the calling thread's memory policy to
// d.mem_nodes (the thread that allocates gridsim's buffers). Throws std::runtime_error when the
// OS refuses.
void apply_binding(const Topology& topo, const BindDecision& d);

// The process as it is now: its CPU set, and the calling thread's memory policy.
struct BoundState {
    std::string cpus;
    std::string mem_nodes;  // "" when the policy binds to no particular node
    std::string policy;     // "bind", "default", "interleave", ... (hwloc's names)
};
BoundState bound_state(const Topology& topo);

// Whether an hwloc list ("0-3,8") holds `id`.
bool list_contains(const std::string& list, int id);

// NUMA node(s) holding the pages of [p, p + bytes) ("unknown" when the OS does not say).
std::string pages_numa_nodes(const Topology& topo, const void* p, std::size_t bytes);

std::string hwloc_version();

}  // namespace gridsim
