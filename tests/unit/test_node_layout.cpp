// The process grid and rank order on several nodes, from made-up node maps: on one node the
// layout is the grid model's choice in the launcher's order; on several, no grid and order the
// search knows is cheaper than the one taken (checked here by enumerating them all anew), the
// nodes take compact boxes of blocks where that is cheaper, and the launcher's order costs more
// where faces would cross nodes needlessly (2 x 4 ranks on jacobi 16384^2, 4 x 4 on heat 512^3,
// 16 x 8 on heat 2048^3, round-robin launchers).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>

#include "config/config.hpp"
#include "mesh/domain.hpp"
#include "parallel/node_layout.hpp"
#include "problems/problem.hpp"
#include "support/deck_case.hpp"

using namespace gridsim;

namespace {

using Grid = std::array<int, 3>;

using Case = test::DeckCase;
using test::make_case;

const std::string kJacobi16k =
    "[problem]\nname = \"jacobi\"\nprecision = \"float\"\n[grid]\ncells = [16384, 16384]\n";
const std::string kHeat512 = "[grid]\ncells = [512, 512, 512]\n";
const std::string kHeat2048 = "[grid]\ncells = [2048, 2048, 2048]\n";

// `nodes` nodes of `per` consecutive ranks each (a launcher filling node by node).
std::vector<int> blocked(int nodes, int per) {
    std::vector<int> out;
    for (int n = 0; n < nodes; ++n) out.insert(out.end(), per, n);
    return out;
}

double cost(const Case& c, const Grid& g, const std::vector<int>& blocks,
            const std::vector<int>& node_of) {
    return layout_sweep_cost(c.dom, g, blocks, node_of, grid_demand(c.cfg), FixedCosts{},
                             network_link(c.cfg));
}

// The cheapest cost over every factorisation of the rank count that fits the grid and every
// order the search knows for it (the launcher's, and each node tile), enumerated here.
double cheapest_by_enumeration(const Case& c, const std::vector<int>& node_of) {
    const int ranks = static_cast<int>(node_of.size());
    const std::set<int> nodes(node_of.begin(), node_of.end());
    const int per = ranks / static_cast<int>(nodes.size());
    double best = 1e300;
    for (int px = 1; px <= ranks; ++px) {
        for (int py = 1; px * py <= ranks; ++py) {
            if (ranks % (px * py) != 0) continue;
            const Grid g{px, py, ranks / (px * py)};
            if (c.dom.dims == 2 && g[2] != 1) continue;
            if (g[0] > c.dom.solved[0] || g[1] > c.dom.solved[1] || g[2] > c.dom.solved[2])
                continue;
            best = std::min(best, cost(c, g, blocks_of_ranks(g, {0, 0, 0}, node_of), node_of));
            for (const Grid& t : node_tiles(c.dom, g, per))
                best = std::min(best, cost(c, g, blocks_of_ranks(g, t, node_of), node_of));
        }
    }
    return best;
}

// Whether every node's blocks form one box of `tile` blocks.
bool nodes_compact(const Layout& l, const std::vector<int>& node_of) {
    const std::set<int> nodes(node_of.begin(), node_of.end());
    for (int n : nodes) {
        Grid lo{1 << 30, 1 << 30, 1 << 30}, hi{-1, -1, -1};
        int count = 0;
        for (std::size_t r = 0; r < node_of.size(); ++r) {
            if (node_of[r] != n) continue;
            const int b = l.block_of[r];
            const Grid c{b / (l.grid[1] * l.grid[2]), (b / l.grid[2]) % l.grid[1], b % l.grid[2]};
            for (int d = 0; d < 3; ++d) {
                lo[d] = std::min(lo[d], c[d]);
                hi[d] = std::max(hi[d], c[d]);
            }
            ++count;
        }
        if ((hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1) != count) return false;
    }
    return true;
}

// Every block taken once.
void expect_permutation(const Layout& l) {
    std::vector<int> sorted = l.block_of;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], static_cast<int>(i));
}

void expect_cheapest(const Case& c, const std::vector<int>& node_of, const Layout& l) {
    expect_permutation(l);
    EXPECT_NEAR(l.seconds, cost(c, l.grid, l.block_of, node_of), 1e-15);
    EXPECT_LE(l.seconds, cheapest_by_enumeration(c, node_of) * (1 + 1e-12));
}

}  // namespace

TEST(NodeLayout, OneNodeIsTheGridModelInTheLaunchersOrder) {
    for (const std::string& deck : {kJacobi16k, kHeat512}) {
        const Case c = make_case(deck);
        for (int ranks : {2, 4, 6, 8, 16}) {
            const std::vector<int> one(ranks, 0);
            const Layout l = choose_layout(c.cfg, c.dom, one);
            EXPECT_EQ(l.grid, choose_process_grid(c.cfg, c.dom, ranks)) << ranks;
            for (int r = 0; r < ranks; ++r) EXPECT_EQ(l.block_of[r], r);
            for (const Grid& g : {Grid{1, ranks, 1}, Grid{ranks, 1, 1}}) {
                EXPECT_NEAR(cost(c, g, blocks_of_ranks(g, {0, 0, 0}, one), one),
                            modelled_sweep_cost(c.dom, g, grid_demand(c.cfg)), 1e-15);
            }
        }
    }
}

TEST(NodeLayout, TwoNodesOfFourOnJacobi16k) {
    const Case c = make_case(kJacobi16k);
    const std::vector<int> nodes = blocked(2, 4);
    const Layout l = choose_layout(c.cfg, c.dom, nodes);
    expect_cheapest(c, nodes, l);
    EXPECT_TRUE(nodes_compact(l, nodes));
    // Rows of blocks: one face per node crosses the network, in the launcher's order already.
    EXPECT_EQ(l.grid, (Grid{1, 8, 1}));
    // A launcher that deals the ranks out round-robin: the nodes still take compact boxes, and
    // its own order would send every face across the network.
    const std::vector<int> dealt{0, 1, 0, 1, 0, 1, 0, 1};
    const Layout d = choose_layout(c.cfg, c.dom, dealt);
    expect_cheapest(c, dealt, d);
    EXPECT_TRUE(nodes_compact(d, dealt));
    EXPECT_LT(d.seconds, cost(c, d.grid, blocks_of_ranks(d.grid, {0, 0, 0}, dealt), dealt));
}

namespace {

// `nodes` nodes of `per` ranks on `deck`: the cheapest layout the search knows, each node a box,
// cheaper than the launcher's order on its grid, and the same again for the same job shape.
void expect_boxes_beat_the_launcher(const std::string& deck, int nodes, int per) {
    const Case c = make_case(deck);
    const std::vector<int> node_of = blocked(nodes, per);
    const Layout l = choose_layout(c.cfg, c.dom, node_of);
    expect_cheapest(c, node_of, l);
    EXPECT_TRUE(nodes_compact(l, node_of));
    EXPECT_NE(l.tile[0], 0);
    EXPECT_LT(l.seconds, cost(c, l.grid, blocks_of_ranks(l.grid, {0, 0, 0}, node_of), node_of));
    const Layout again = choose_layout(c.cfg, c.dom, node_of);
    EXPECT_EQ(again.grid, l.grid);
    EXPECT_EQ(again.block_of, l.block_of);
}

}  // namespace

TEST(NodeLayout, FourNodesOfFourOnHeat512) { expect_boxes_beat_the_launcher(kHeat512, 4, 4); }

TEST(NodeLayout, SixteenNodesOfEightOnHeat2048) {
    expect_boxes_beat_the_launcher(kHeat2048, 16, 8);
}

TEST(NodeLayout, UnevenNodesKeepTheLaunchersOrder) {
    const Case c = make_case(kHeat512);
    const std::vector<int> nodes{0, 0, 0, 1};
    const Layout l = choose_layout(c.cfg, c.dom, nodes);
    EXPECT_EQ(l.tile, (Grid{0, 0, 0}));
    EXPECT_EQ(l.block_of, (std::vector<int>{0, 1, 2, 3}));
}

TEST(NodeLayout, SlowerNetworkCostsMoreAcrossNodesOnly) {
    const Case c = make_case(kHeat512);
    const Case slow = make_case(
        kHeat512, {"parallel.network_latency_us=100", "parallel.network_bandwidth_GBps=1"});
    const std::vector<int> one(4, 0), two = blocked(2, 2);
    const Grid g{1, 2, 2};
    const std::vector<int> order = blocks_of_ranks(g, {0, 0, 0}, two);
    EXPECT_NEAR(cost(c, g, order, one), cost(slow, g, order, one), 1e-15);
    EXPECT_GT(cost(slow, g, order, two), cost(c, g, order, two));
}

TEST(NodeLayout, AGivenGridRunsAsAskedAndSaysWhatItCosts) {
    const Case c = make_case(kJacobi16k, {"parallel.process_grid=[8,1]"});
    const std::vector<int> nodes = blocked(2, 4);
    std::string note;
    const Layout l = choose_layout(c.cfg, c.dom, nodes, &note);
    EXPECT_EQ(l.grid, (Grid{8, 1, 1}));
    EXPECT_NE(note.find("the process grid the deck gives, 8x1x1, models"), std::string::npos)
        << note;
    EXPECT_NE(note.find("for 1x8x1"), std::string::npos) << note;
    std::string one_node;
    choose_layout(c.cfg, c.dom, std::vector<int>(8, 0), &one_node);
    EXPECT_EQ(one_node, "");  // on one node the deck's grid is the deck's business
    std::string none;
    const Case good = make_case(kJacobi16k, {"parallel.process_grid=[1,8]"});
    choose_layout(good.cfg, good.dom, nodes, &none);
    EXPECT_EQ(none, "");
}

// A deck's grid of another rank count than the run's (3 x 1 at 2 ranks, or 1 x 1): the layout
// takes it as given, unpriced, for the caller to refuse with decomposition_problem's words; the
// model itself refuses to price it rather than read past its rank table.
TEST(NodeLayout, AGivenGridOfOtherRanksIsLeftForTheCallerToRefuse) {
    for (const char* given : {"parallel.process_grid=[3,1]", "parallel.process_grid=[1,1]"}) {
        const Case c = make_case(kJacobi16k, {given});
        for (const std::vector<int>& nodes : {std::vector<int>{0, 0}, std::vector<int>{0, 1}}) {
            std::string note;
            const Layout l = choose_layout(c.cfg, c.dom, nodes, &note);
            EXPECT_EQ(l.grid, choose_process_grid(c.cfg, c.dom, 2)) << given;
            EXPECT_EQ(note, "");
            EXPECT_NE(decomposition_problem(c.dom, l.grid, 2, 1).find("ranks but the run has 2"),
                      std::string::npos)
                << given;
        }
        const Grid g = choose_process_grid(c.cfg, c.dom, 2);
        EXPECT_THROW(cost(c, g, {0, 1}, {0, 0}), std::logic_error) << given;
    }
}
