#include "parallel/node_map.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

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

bool groups_agree(const std::vector<std::string>& members) {
    const int ranks = static_cast<int>(members.size());
    for (int r = 0; r < ranks; ++r) {
        std::istringstream words(members[r]);
        bool self = false;
        for (int m = 0; words >> m;) {
            if (m < 0 || m >= ranks || members[m] != members[r]) return false;
            self = self || m == r;
        }
        if (!self) return false;
    }
    return true;
}

std::vector<std::string> node_keys(const std::vector<std::string>& mpi,
                                   const std::vector<std::string>& launcher,
                                   const std::vector<std::string>& hosts) {
    const bool all_set = launcher.size() == mpi.size() &&
                         std::none_of(launcher.begin(), launcher.end(),
                                      [](const std::string& s) { return s.empty(); });
    std::vector<std::string> by_launcher;
    for (const std::string& id : launcher) by_launcher.push_back("launcher:" + id);
    if (!groups_agree(mpi)) {
        if (all_set) return by_launcher;
        std::vector<std::string> out;
        for (const std::string& h : hosts) out.push_back("host:" + h);
        return out;
    }
    const std::set<std::string> distinct_mpi(mpi.begin(), mpi.end());
    const std::set<std::string> distinct_launcher(launcher.begin(), launcher.end());
    if (distinct_mpi.size() == mpi.size() && all_set && distinct_launcher.size() < launcher.size())
        return by_launcher;
    return mpi;
}

namespace {

// This rank's MPI_COMM_TYPE_SHARED group as ranks of `comm` ("0 1 2"), found without a
// collective over that group: where MPI's view of who shares memory differs between ranks, a
// collective over it would wait forever.
std::string shared_members(MPI_Comm comm) {
    MPI_Comm shared = MPI_COMM_NULL;
    GRIDSIM_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    const Communicator owned(shared);
    struct Group {
        MPI_Group g = MPI_GROUP_NULL;
        Group() = default;
        Group(const Group&) = delete;
        Group& operator=(const Group&) = delete;
        ~Group() {
            if (g != MPI_GROUP_NULL) MPI_Group_free(&g);
        }
    } mine, all;
    GRIDSIM_MPI_CHECK(MPI_Comm_group(owned.get(), &mine.g));
    GRIDSIM_MPI_CHECK(MPI_Comm_group(comm, &all.g));
    const int n = owned.size();
    std::vector<int> local(n);
    std::vector<int> in_comm(n);
    std::iota(local.begin(), local.end(), 0);
    GRIDSIM_MPI_CHECK(MPI_Group_translate_ranks(mine.g, n, local.data(), all.g, in_comm.data()));
    std::sort(in_comm.begin(), in_comm.end());
    return fmt::format("{}", fmt::join(in_comm, " "));
}

}  // namespace

NodeMap gather_node_map(MPI_Comm comm) {
    const char* id = std::getenv("SLURM_NODEID");
    const std::vector<std::string> mpi = gather_strings(comm, shared_members(comm), true);
    const std::vector<std::string> launcher = gather_strings(comm, id != nullptr ? id : "", true);
    const std::vector<std::string> hosts = gather_strings(comm, processor_name(), true);
    NodeMap map = node_map_from(node_keys(mpi, launcher, hosts), hosts);
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
