#include "platform/placement.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <sstream>

#include "parallel/gather.hpp"
#include "parallel/mpi_check.hpp"
#include "parallel/mpi_session.hpp"

namespace gridsim {

namespace {

constexpr char kSeparator = '\x1f';  // cannot occur in host names, hwloc lists or notes

// The lowest rank whose text is not empty and its text, on every rank ("" when none).
std::pair<int, std::string> first_nonempty(MPI_Comm comm, const std::string& mine) {
    const std::vector<std::string> all = gather_strings(comm, mine);
    int rank = -1;
    std::string text;
    int count = 0;
    for (std::size_t r = 0; r < all.size(); ++r) {
        if (all[r].empty()) continue;
        if (rank < 0) {
            rank = static_cast<int>(r);
            text = all[r];
        }
        ++count;
    }
    if (comm_rank(comm) == 0 && count > 1) text += fmt::format(" (and {} more rank(s))", count - 1);
    GRIDSIM_MPI_CHECK(MPI_Bcast(&rank, 1, MPI_INT, 0, comm));
    broadcast_string(comm, text);
    return {rank, text};
}

}  // namespace

std::string RankPlacement::line() const {
    std::string out = "host " + host;
    if (!gpu.empty()) out += ", GPU " + gpu;
    out += fmt::format(
        ", NUMA node {}, CPUs {}, memory policy {}, host buffer pages on node {}; {}", numa_node,
        cpus, mem_nodes.empty() ? "default" : "node " + mem_nodes, pages, note);
    return out;
}

std::string RankPlacement::pack() const {
    std::string out;
    for (const std::string* f : {&host, &gpu, &numa_node, &cpus, &mem_nodes, &pages, &note})
        out += *f + kSeparator;
    return out;
}

RankPlacement RankPlacement::unpack(const std::string& packed) {
    RankPlacement p;
    std::istringstream in(packed);
    for (std::string* f : {&p.host, &p.gpu, &p.numa_node, &p.cpus, &p.mem_nodes, &p.pages, &p.note})
        std::getline(in, *f, kSeparator);
    return p;
}

BindDecision bind_this_rank(const Config& cfg, MPI_Comm comm, const Topology& topo,
                            const std::string& bus_id, int local_rank, int local_ranks) {
    BindRequest req;
    req.mode = cfg.bind;
    req.bus_id = bus_id;
    req.launcher_cpus = bound_state(topo).cpus;
    req.local_rank = local_rank;
    req.local_ranks = local_ranks;
    const BindDecision d = decide_binding(topo, req);
    int bad = d.error.empty() ? 0 : 1;
    int any = 0;
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
    if (any != 0) {
        const auto [rank, why] = first_nonempty(comm, d.error);
        throw ConfigError(cfg.where("parallel.bind") +
                          fmt::format("\"strict\" cannot bind rank {}: {}", rank, why));
    }
    int warned = d.warn ? 1 : 0;
    GRIDSIM_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &warned, 1, MPI_INT, MPI_MAX, comm));
    if (warned != 0) {
        const auto [rank, why] = first_nonempty(comm, d.warn ? d.note : std::string());
        if (comm_rank(comm) == 0)
            std::cerr << fmt::format("gridsim: warning: parallel.bind = \"numa\": rank {}: {}",
                                     rank, why)
                      << std::endl;
    }
    apply_binding(topo, d);
    return d;
}

RankPlacement read_placement(const Topology& topo, const BindDecision& d, const std::string& node,
                             const std::string& gpu, const void* probe, std::size_t bytes) {
    RankPlacement p;
    p.host = node;
    p.gpu = gpu;
    p.numa_node = d.locality.empty() ? "unknown" : d.locality;
    const BoundState now = bound_state(topo);
    p.cpus = now.cpus;
    p.mem_nodes = now.mem_nodes;
    p.pages = pages_numa_nodes(topo, probe, bytes);
    p.note = d.note;
    return p;
}

std::vector<RankPlacement> gather_placements(MPI_Comm comm, const RankPlacement& mine) {
    std::vector<RankPlacement> out;
    for (const std::string& s : gather_strings(comm, mine.pack()))
        out.push_back(RankPlacement::unpack(s));
    return out;
}

}  // namespace gridsim
