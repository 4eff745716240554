// Which block of the process grid each rank takes, knowing the nodes: the grid model's costs
// (grid_model.hpp) with two kinds of link, inside a node (NVLink or shared memory) and between
// nodes (the network, whose bandwidth a node's ranks share), and the search for the grid and the
// rank order that minimise the busiest rank's modelled sweep. Each node takes a compact box of
// blocks (a tile of the grid) where the nodes hold the same number of ranks and that is cheaper
// than the launcher's order, so the largest faces stay inside nodes. A function of problem, grid,
// ranks and node map only: the same job shape always gets the same grid, order and bits. No MPI
// here (docs/tuning.md, "Process grid").
#pragma once

#include <array>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "mesh/domain.hpp"
#include "parallel/grid_model.hpp"

namespace gridsim {

// A link between nodes: seconds per message and bytes per second a node sends and receives
// (shared by its ranks' faces to other nodes). parallel.network_latency_us and
// parallel.network_bandwidth_GBps.
struct NetworkLink {
    double message = 10e-6;
    double node_bandwidth = 100e9;  // 4 x 200 Gb/s
};

NetworkLink network_link(const Config& cfg);

struct Layout {
    std::array<int, 3> grid{1, 1, 1};
    // Blocks per node along each axis (the nodes take these boxes in row-major order); {0, 0, 0}:
    // the launcher's order (rank r takes block r).
    std::array<int, 3> tile{0, 0, 0};
    std::vector<int>
        block_of;          // the block (row-major, z fastest: MPI's Cartesian rank) of each rank
    double seconds = 0.0;  // modelled seconds per sweep of its busiest rank
};

// The faces of the busiest rank of a layout (the one layout_sweep_cost takes), per sweep: how
// many and how many bytes (points x value size) go to ranks of its node and to other nodes.
struct FaceTraffic {
    double intra_messages = 0.0;
    double intra_bytes = 0.0;
    double inter_messages = 0.0;
    double inter_bytes = 0.0;
};
FaceTraffic busiest_faces(const Domain& dom, const Layout& layout, const std::vector<int>& node_of,
                          const Config& cfg);

// The block of each rank: the launcher's order, or `tile` boxes for the nodes of `node_of` (every
// node as many ranks, nodes numbered from 0 in the order of their lowest rank).
std::vector<int> blocks_of_ranks(const std::array<int, 3>& grid, const std::array<int, 3>& tile,
                                 const std::vector<int>& node_of);

// Modelled seconds per sweep of the busiest rank when rank r takes block block_of[r]: as
// modelled_sweep_cost, each face's message and bytes over the intra-node link of `costs` or, to a
// rank of another node, over `net` with the node's bandwidth shared by its ranks. On one node it
// equals modelled_sweep_cost.
double layout_sweep_cost(const Domain& dom, const std::array<int, 3>& grid,
                         const std::vector<int>& block_of, const std::vector<int>& node_of,
                         const GridDemand& demand, const FixedCosts& costs, const NetworkLink& net);

// The tiles of `grid` that give each of the nodes `per_node` blocks.
std::vector<std::array<int, 3>> node_tiles(const Domain& dom, const std::array<int, 3>& grid,
                                           int per_node);

// The cheapest layout for `grid` (the launcher's order, or a tile where the nodes are alike and
// one is cheaper; among equal costs the launcher's order, then the first tile).
Layout best_layout(const Domain& dom, const std::array<int, 3>& grid,
                   const std::vector<int>& node_of, const GridDemand& demand,
                   const FixedCosts& costs, const NetworkLink& net);

// The process grid and rank order for the ranks of `node_of`: the deck's grid where given, else
// the cheapest of every factorisation (cheapest_grid's order among equals), each at its best
// layout. `note`: on several nodes, where the deck's grid costs more than the grid the model would
// take, what each costs.
Layout choose_layout(const Config& cfg, const Domain& dom, const std::vector<int>& node_of,
                     std::string* note = nullptr);

}  // namespace gridsim
