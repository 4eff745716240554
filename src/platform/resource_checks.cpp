#include "platform/resource_checks.hpp"

#include <fmt/format.h>

#include <array>
#include <map>
#include <set>

#include "kernels/backend.hpp"
#include "parallel/collectives.hpp"
#include "parallel/gather.hpp"
#include "parallel/mpi_session.hpp"
#include "parallel/node_map.hpp"

namespace gridsim {

void check_memory(const Config& cfg, const CartTopology& topo, const MemoryNeed& need) {
    const int ranks_on_node = node_comm(topo.comm()).size();
    const double on_node = ranks_on_node;
    const double field = static_cast<double>(need.field_bytes);
    const double host_free = static_cast<double>(available_host_memory());
    const double fields = need.fields;
    const double host_need = (need.on_device ? 1.0 : 1.0 + fields) * field * on_node;
    const double dev_need = fields * field;
    const double dev_free = need.on_device ? static_cast<double>(need.device_free) : 0.0;
    // How many times the need exceeds what there is: MAXLOC finds the neediest rank.
    double ratio = 0.0;
    std::string what;
    if (host_free > 0 && host_need > host_free) {
        ratio = host_need / host_free;
        what = fmt::format(
            "needs {:.3g} GiB of host memory on its node ({} rank(s) x {} "
            "field(s) of {:.3g} GiB), {:.3g} GiB available",
            host_need / 1073741824.0, ranks_on_node,
            need.on_device ? 1 : 1 + static_cast<int>(fields), field / 1073741824.0,
            host_free / 1073741824.0);
    }
    if (need.on_device && dev_need > dev_free && dev_need / dev_free > ratio) {
        ratio = dev_need / dev_free;
        what = fmt::format(
            "needs {:.3g} GiB of device memory ({} fields of {:.3g} GiB), {:.3g} GiB free",
            dev_need / 1073741824.0, static_cast<int>(fields), field / 1073741824.0,
            dev_free / 1073741824.0);
    }
    const RankedValue worst = allreduce_maxloc(topo.comm(), ratio, topo.rank());
    if (worst.value <= 0.0) return;
    const int root = worst.rank;
    std::string text = topo.rank() == root ? what : std::string();
    broadcast_string(topo.comm(), text, root);
    const std::vector<int> cells(cfg.cells.begin(), cfg.cells.begin() + cfg.dims);
    throw ConfigError(cfg.where("grid.cells") +
                      fmt::format("{} points on {} rank(s) do not fit: rank {} {}",
                                  fmt::join(cells, "x"), topo.size(), root, text));
}

void check_ipc_neighbours(const Config& cfg, const CartTopology& topo,
                          const std::vector<RankGpu>& gpus) {
    const Subdomain& sub = topo.subdomain();
    std::array<int, 6> peers;
    peers.fill(-1);
    for (int face = 0; face < 2 * sub.dims; ++face) {
        if (sub.has_neighbour[face] && topo.neighbour(face) != topo.rank())
            peers[face] = topo.neighbour(face);
    }
    const std::string why =
        agree_on_error(topo.comm(), neighbour_obstacle(gpus, topo.rank(), peers));
    if (!why.empty()) {
        throw ConfigError(cfg.where("parallel.transport") + "\"ipc\": " + why +
                          "; use \"nccl\" or \"auto\"");
    }
}

std::string devices_text(const std::vector<RankDevice>& ranks) {
    struct Count {
        std::set<std::string> devices;
        int ranks = 0;
    };
    std::map<std::string, Count> by_name;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        Count& c = by_name[ranks[r].name];
        // A CPU rank is a device of its own.
        c.devices.insert(ranks[r].where.empty() ? fmt::format("rank {}", r) : ranks[r].where);
        ++c.ranks;
    }
    std::string text;
    for (const auto& [name, c] : by_name) {
        const auto n = static_cast<int>(c.devices.size());
        text += fmt::format("{}{} x {}", text.empty() ? "" : ", ", n, name);
        if (c.ranks > n) text += fmt::format(" ({} ranks)", c.ranks);
    }
    return text;
}

// Each rank's device as one line: "where<TAB>name" (neither holds a tab).
std::string describe_devices(MPI_Comm comm, const std::string& name, const std::string& bus_id) {
    const std::string where = bus_id.empty() ? std::string() : processor_name() + ' ' + bus_id;
    std::string text;
    const std::vector<std::string> lines = gather_strings(comm, where + '\t' + name);
    if (comm_rank(comm) == 0) {
        std::vector<RankDevice> ranks;
        for (const std::string& line : lines) {
            const std::size_t tab = line.find('\t');
            ranks.push_back({line.substr(tab + 1), line.substr(0, tab)});
        }
        text = devices_text(ranks);
    }
    broadcast_string(comm, text);
    return text;
}

}  // namespace gridsim
