#include "parallel/node_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

namespace gridsim {

namespace {

// Row-major block index with z fastest (MPI's Cartesian rank) and back.
int block_index(const std::array<int, 3>& grid, const std::array<int, 3>& c) {
    return (c[0] * grid[1] + c[1]) * grid[2] + c[2];
}

std::array<int, 3> block_coords(const std::array<int, 3>& grid, int b) {
    return {b / (grid[1] * grid[2]), (b / grid[2]) % grid[1], b % grid[2]};
}

// The busiest rank on `grid` when rank r holds block block_of[r]: every face of every rank over
// the link its two ranks share, the rank of highest sweep cost kept, with its faces.
struct Busiest {
    double seconds = 0.0;
    FaceTraffic faces;
};

Busiest busiest_rank(const Domain& dom, const std::array<int, 3>& grid,
                     const std::vector<int>& block_of, const std::vector<int>& node_of,
                     const GridDemand& demand, const FixedCosts& costs, const NetworkLink& net) {
    const int ranks = static_cast<int>(block_of.size());
    if (grid_ranks(grid) != ranks || node_of.size() != block_of.size())
        throw std::logic_error("busiest_rank: a grid, blocks and nodes of other rank counts");
    std::vector<int> rank_of(ranks);
    for (int r = 0; r < ranks; ++r) rank_of[block_of[r]] = r;
    std::map<int, int> on_node;
    for (int n : node_of) ++on_node[n];
    const std::array<long long, 3> block = largest_block(dom, grid);
    Busiest worst;
    for (int r = 0; r < ranks; ++r) {
        FaceTraffic faces;
        const std::array<int, 3> c = block_coords(grid, block_of[r]);
        // A node's network bandwidth is shared by its ranks.
        const double net_bandwidth = net.node_bandwidth / on_node[node_of[r]];
        HaloCost halo;
        for (int d = 0; d < dom.dims; ++d) {
            if (grid[d] == 1) continue;  // a periodic axis on one rank is a local copy
            for (int side : {-1, 1}) {
                std::array<int, 3> n = c;
                n[d] += side;
                if (n[d] < 0 || n[d] >= grid[d]) {
                    if (!dom.periodic[d]) continue;
                    n[d] = (n[d] + grid[d]) % grid[d];
                }
                const bool across = node_of[rank_of[block_index(grid, n)]] != node_of[r];
                const int point_bytes = demand.face_point_bytes();
                const HaloCost f = across ? face_cost(dom, block, d, point_bytes, net.message,
                                                      net_bandwidth, costs)
                                          : face_cost(dom, block, d, point_bytes, costs.message,
                                                      costs.bandwidth, costs);
                halo.messages += f.messages;
                halo.bytes += f.bytes;
                const double bytes = static_cast<double>(face_points(dom, block, d)) * point_bytes;
                (across ? faces.inter_messages : faces.intra_messages) += 1;
                (across ? faces.inter_bytes : faces.intra_bytes) += bytes;
            }
        }
        const double s = sweep_cost_with_halo(dom, grid, demand, costs, halo);
        if (s > worst.seconds) worst = {s, faces};
    }
    return worst;
}

// Every node holds the same number of ranks: that number, else 0.
int uniform_ranks_per_node(const std::vector<int>& node_of) {
    std::map<int, int> on_node;
    for (int n : node_of) ++on_node[n];
    const int first = on_node.begin()->second;
    for (const auto& [node, count] : on_node)
        if (count != first) return 0;
    return first;
}

}  // namespace

NetworkLink network_link(const Config& cfg) {
    NetworkLink net;
    net.message = cfg.network_latency_us * 1e-6;
    net.node_bandwidth = cfg.network_bandwidth_gbps * 1e9;
    return net;
}

std::vector<int> blocks_of_ranks(const std::array<int, 3>& grid, const std::array<int, 3>& tile,
                                 const std::vector<int>& node_of) {
    const int ranks = static_cast<int>(node_of.size());
    std::vector<int> out(ranks);
    if (tile[0] == 0) {
        for (int r = 0; r < ranks; ++r) out[r] = r;
        return out;
    }
    const std::array<int, 3> nodes{grid[0] / tile[0], grid[1] / tile[1], grid[2] / tile[2]};
    std::map<int, int> taken;  // node -> its ranks so far
    for (int r = 0; r < ranks; ++r) {
        const std::array<int, 3> n = block_coords(nodes, node_of[r]);
        const std::array<int, 3> t = block_coords(tile, taken[node_of[r]]++);
        out[r] = block_index(grid,
                             {n[0] * tile[0] + t[0], n[1] * tile[1] + t[1], n[2] * tile[2] + t[2]});
    }
    return out;
}

double layout_sweep_cost(const Domain& dom, const std::array<int, 3>& grid,
                         const std::vector<int>& block_of, const std::vector<int>& node_of,
                         const GridDemand& demand, const FixedCosts& costs,
                         const NetworkLink& net) {
    return busiest_rank(dom, grid, block_of, node_of, demand, costs, net).seconds;
}

FaceTraffic busiest_faces(const Domain& dom, const Layout& layout, const std::vector<int>& node_of,
                          const Config& cfg) {
    return busiest_rank(dom, layout.grid, layout.block_of, node_of, grid_demand(cfg), FixedCosts{},
                        network_link(cfg))
        .faces;
}

std::vector<std::array<int, 3>> node_tiles(const Domain& dom, const std::array<int, 3>& grid,
                                           int per_node) {
    std::vector<std::array<int, 3>> out;
    for (int tx = 1; tx <= grid[0]; ++tx) {
        for (int ty = 1; ty <= grid[1]; ++ty) {
            if (per_node % (tx * ty) != 0) continue;
            const int tz = per_node / (tx * ty);
            if (grid[0] % tx != 0 || grid[1] % ty != 0 || tz > grid[2] || grid[2] % tz != 0)
                continue;
            if (dom.dims == 2 && tz != 1) continue;
            out.push_back({tx, ty, tz});
        }
    }
    return out;
}

Layout best_layout(const Domain& dom, const std::array<int, 3>& grid,
                   const std::vector<int>& node_of, const GridDemand& demand,
                   const FixedCosts& costs, const NetworkLink& net) {
    Layout best;
    best.grid = grid;
    best.block_of = blocks_of_ranks(grid, best.tile, node_of);
    best.seconds = layout_sweep_cost(dom, grid, best.block_of, node_of, demand, costs, net);
    const int per_node = uniform_ranks_per_node(node_of);
    if (per_node == 0) return best;
    for (const std::array<int, 3>& tile : node_tiles(dom, grid, per_node)) {
        const std::vector<int> blocks = blocks_of_ranks(grid, tile, node_of);
        const double s = layout_sweep_cost(dom, grid, blocks, node_of, demand, costs, net);
        if (s < best.seconds * (1 - 1e-9)) best = {grid, tile, blocks, s};
    }
    return best;
}

Layout choose_layout(const Config& cfg, const Domain& dom, const std::vector<int>& node_of,
                     std::string* note) {
    const int ranks = static_cast<int>(node_of.size());
    const GridDemand demand = grid_demand(cfg);
    const FixedCosts costs;
    const NetworkLink net = network_link(cfg);
    Layout best;
    best.seconds = std::numeric_limits<double>::infinity();
    cheapest_grid(
        dom, ranks,
        [&](const std::array<int, 3>& g) {
            const Layout l = best_layout(dom, g, node_of, demand, costs, net);
            if (l.seconds < best.seconds * (1 - 1e-9)) best = l;
            return l.seconds;
        },
        demand.halo_layers);
    if (best.block_of.empty())  // no grid fits: CartTopology says why
        best = best_layout(dom, {ranks, 1, 1}, node_of, demand, costs, net);
    if (!process_grid_given(cfg)) return best;
    const std::array<int, 3> grid = choose_process_grid(cfg, dom, ranks);
    // A grid of another rank count is not priced: the caller refuses it (decomposition_problem).
    if (grid_ranks(grid) != ranks)
        return {grid,
                {0, 0, 0},
                blocks_of_ranks(grid, {0, 0, 0}, node_of),
                std::numeric_limits<double>::infinity()};
    const Layout asked = best_layout(dom, grid, node_of, demand, costs, net);
    const bool several_nodes =
        std::any_of(node_of.begin(), node_of.end(), [&](int n) { return n != node_of[0]; });
    if (note != nullptr && several_nodes && asked.seconds > best.seconds * 1.01) {
        *note = fmt::format(
            "the process grid the deck gives, {}x{}x{}, models {:.1f} us per sweep on its busiest "
            "rank on these nodes, against {:.1f} us for {}x{}x{}",
            asked.grid[0], asked.grid[1], asked.grid[2], asked.seconds * 1e6, best.seconds * 1e6,
            best.grid[0], best.grid[1], best.grid[2]);
    }
    return asked;
}

}  // namespace gridsim
