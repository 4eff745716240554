#include "parallel/peer_routes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <sstream>
#include <utility>

#include "parallel/gather.hpp"

namespace gridsim {

// "node bus reach reach ..." ("-" for a rank without a GPU): host names and bus ids hold no
// spaces.
std::string encode(const RankGpu& r) {
    std::string line = r.node + ' ' + (r.bus_id.empty() ? "-" : r.bus_id);
    for (const std::string& id : r.reaches) line += ' ' + id;
    return line;
}

RankGpu decode_rank_gpu(const std::string& line) {
    std::istringstream words(line);
    RankGpu r;
    words >> r.node >> r.bus_id;
    if (r.bus_id == "-") r.bus_id.clear();
    r.reaches.assign(std::istream_iterator<std::string>(words),
                     std::istream_iterator<std::string>());
    return r;
}

namespace {

bool reaches(const RankGpu& from, const RankGpu& to) {
    return std::find(from.reaches.begin(), from.reaches.end(), to.bus_id) != from.reaches.end();
}

}  // namespace

std::string ipc_obstacle(const std::vector<RankGpu>& ranks, int a, int b) {
    const RankGpu& ra = ranks.at(a);
    const RankGpu& rb = ranks.at(b);
    if (ra.node != rb.node) {
        return fmt::format("ranks {} and {} are on different nodes ({}, {})", a, b, ra.node,
                           rb.node);
    }
    for (const auto& [r, g] : {std::pair{a, &ra}, std::pair{b, &rb}}) {
        if (g->bus_id.empty()) return fmt::format("rank {} has no GPU", r);
    }
    if (ra.bus_id == rb.bus_id) return {};  // one GPU: its memory is local to both
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
        const RankGpu& f = ranks[from];
        if (!reaches(f, ranks[to])) {
            return fmt::format(
                "rank {}'s GPU ({}) cannot reach rank {}'s GPU ({}): not visible to rank {} "
                "(per-task GPU binding) or no peer access between them",
                from, f.bus_id, to, ranks[to].bus_id, from);
        }
    }
    return {};
}

std::string same_node_obstacle(const std::vector<RankGpu>& ranks) {
    for (std::size_t a = 0; a < ranks.size(); ++a) {
        for (std::size_t b = a + 1; b < ranks.size(); ++b) {
            if (ranks[a].node != ranks[b].node) continue;
            std::string why = ipc_obstacle(ranks, static_cast<int>(a), static_cast<int>(b));
            if (!why.empty()) return why;
        }
    }
    return {};
}

std::string ipc_everywhere(const std::vector<RankGpu>& ranks) {
    for (int a = 0; a < static_cast<int>(ranks.size()); ++a) {
        for (int b = a + 1; b < static_cast<int>(ranks.size()); ++b) {
            if (std::string why = ipc_obstacle(ranks, a, b); !why.empty()) return why;
        }
    }
    return {};
}

std::string neighbour_obstacle(const std::vector<RankGpu>& ranks, int me,
                               const std::array<int, 6>& peers) {
    for (int peer : peers) {
        if (peer < 0) continue;
        if (std::string why = ipc_obstacle(ranks, me, peer); !why.empty()) return why;
    }
    return {};
}

TransportKind automatic_transport(const RankGpuFacts& f) {
    if (f.ranks < 2) return TransportKind::staged;
    if (f.reach_everywhere() && (f.own_gpus || f.shared_by_mps)) return TransportKind::ipc;
    if (f.own_gpus && f.nccl_built) return TransportKind::nccl;
    return f.cuda_aware ? TransportKind::cuda_aware : TransportKind::staged;
}

TransportKind route_between(const std::vector<RankGpu>& ranks, int a, int b,
                            const RankGpuFacts& f) {
    if ((f.own_gpus || f.shared_by_mps) && ipc_obstacle(ranks, a, b).empty())
        return TransportKind::ipc;
    if (f.own_gpus && f.nccl_built) return TransportKind::nccl;
    return f.cuda_aware ? TransportKind::cuda_aware : TransportKind::staged;
}

std::vector<RankGpu> gather_rank_gpus(MPI_Comm comm, const RankGpu& mine) {
    std::vector<RankGpu> ranks;
    for (const std::string& line : gather_strings(comm, encode(mine), true))
        ranks.push_back(decode_rank_gpu(line));
    return ranks;
}

}  // namespace gridsim
