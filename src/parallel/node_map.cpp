#include "parallel/node_map.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "parallel/gather.hpp"
#include "parallel/mpi_check.hpp"

namespace gridsim {

std::vector<int> NodeMap::ranks_on(int node) const {
    std::vector<int> out;
    for (int r = 0; r < ranks(); ++r)
        if (node_of[r] == node) out.push_back(r);
    return out;
}

int NodeMap::most_ranks_on_a_node() const {
    int most = 0;
    for (int n = 0; n < nodes(); ++n) most = std::max(most, static_cast<int>(ranks_on(n).size()));
    return most;
}

bool NodeMap::uniform() const {
    for (int n = 0; n < nodes(); ++n)
        if (static_cast<int>(ranks_on(n).size()) != most_ranks_on_a_node()) return false;
    return true;
}

std::string NodeMap::text() const {
    std::string out = fmt::format("{} node{}:", nodes(), nodes() == 1 ? "" : "s");
    for (int n = 0; n < nodes(); ++n)
        out +=
            fmt::format("{} {} (ranks {})", n == 0 ? "" : ",", names[n], rank_ranges(ranks_on(n)));
    return out;
}

std::string rank_ranges(const std::vector<int>& ranks) {
    std::string out;
    for (std::size_t i = 0; i < ranks.size();) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
        if (!out.empty()) out += ",";
        out += j == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
        i = j + 1;
    }
    return out;
}

NodeMap node_map_from(const std::vector<std::string>& keys, const std::vector<std::string>& hosts) {
    NodeMap m;
    std::map<std::string, int> index;  // key -> node
    std::map<std::string, int> seen;   // host name -> nodes named so far
    for (std::size_t r = 0; r < keys.size(); ++r) {
        auto it = index.find(keys[r]);
        if (it == index.end()) {
            it = index.emplace(keys[r], m.nodes()).first;
            // Two nodes whose hosts share a name (containers) are still two nodes.
            const int before = seen[hosts[r]]++;
            m.names.push_back(before == 0 ? hosts[r] : fmt::format("{}#{}", hosts[r], before + 1));
        }
        m.node_of.push_back(it->second);
    }
    return m;
}

std::vector<std::string> node_keys(const std::vector<std::string>& mpi,
                                   const std::vector<std::string>& launcher) {
    const std::set<std::string> distinct_mpi(mpi.begin(), mpi.end());
    const bool all_set = std::none_of(launcher.begin(), launcher.end(),
                                      [](const std::string& s) { return s.empty(); });
    const std::set<std::string> distinct_launcher(launcher.begin(), launcher.end());
    if (distinct_mpi.size() == mpi.size() && all_set && launcher.size() == mpi.size() &&
        distinct_launcher.size() < launcher.size()) {
        std::vector<std::string> out;
        for (const std::string& id : launcher) out.push_back("launcher:" + id);
        return out;
    }
    return mpi;
}

NodeMap gather_node_map(MPI_Comm comm) {
    MPI_Comm shared = MPI_COMM_NULL;
    GRIDSIM_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    const Communicator owned(shared);
    // The node's key: the lowest rank of `comm` on it.
    int lowest = comm_rank(comm);
    GRIDSIM_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, owned.get()));
    const char* id = std::getenv("SLURM_NODEID");
    const std::vector<std::string> mpi = gather_strings(comm, std::to_string(lowest), true);
    const std::vector<std::string> launcher = gather_strings(comm, id != nullptr ? id : "", true);
    const std::vector<std::string> hosts = gather_strings(comm, processor_name(), true);
    NodeMap map = node_map_from(node_keys(mpi, launcher), hosts);
    int world = 0;
    GRIDSIM_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world));
    map.world_rank.resize(map.ranks());
    GRIDSIM_MPI_CHECK(MPI_Allgather(&world, 1, MPI_INT, map.world_rank.data(), 1, MPI_INT, comm));
    return map;
}

Communicator node_comm(MPI_Comm comm) {
    const NodeMap map = gather_node_map(comm);
    const int rank = comm_rank(comm);
    MPI_Comm node = MPI_COMM_NULL;
    GRIDSIM_MPI_CHECK(MPI_Comm_split(comm, map.node_of[rank], rank, &node));
    return Communicator(node);
}

}  // namespace gridsim
