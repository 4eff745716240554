// The nodes of a run from made-up rank tables: ranks with one key share a node, nodes numbered by
// their lowest rank, names made unique, the launcher's numbering taken only where MPI separates
// every rank, and the text the header prints.
#include <gtest/gtest.h>

#include "parallel/node_map.hpp"

using namespace gridsim;

TEST(NodeMap, RanksWithOneKeyShareANodeNumberedByTheirLowestRank) {
    // Round-robin placement (mpirun --map-by node): ranks 0, 2 on one node, 1, 3 on the other.
    const NodeMap m = node_map_from({"0", "1", "0", "1"}, {"n01", "n02", "n01", "n02"});
    EXPECT_EQ(m.nodes(), 2);
    EXPECT_EQ(m.node_of, (std::vector<int>{0, 1, 0, 1}));
    EXPECT_EQ(m.ranks_on(1), (std::vector<int>{1, 3}));
    EXPECT_TRUE(m.uniform());
    EXPECT_EQ(m.text(), "2 nodes: n01 (ranks 0,2), n02 (ranks 1,3)");
}

TEST(NodeMap, UnevenNodesAndRepeatedHostNames) {
    const NodeMap m = node_map_from({"a", "a", "a", "b", "c"}, {"box", "box", "box", "box", "x"});
    EXPECT_EQ(m.nodes(), 3);
    EXPECT_EQ(m.names, (std::vector<std::string>{"box", "box#2", "x"}));
    EXPECT_EQ(m.most_ranks_on_a_node(), 3);
    EXPECT_FALSE(m.uniform());
    EXPECT_EQ(m.text(), "3 nodes: box (ranks 0-2), box#2 (ranks 3), x (ranks 4)");
}

TEST(NodeMap, LauncherIdsOnlyWhereMpiSeparatesEveryRank) {
    const std::vector<std::string> separate = {"0", "1", "2", "3"};
    EXPECT_EQ(node_keys(separate, {"0", "0", "1", "1"}),
              (std::vector<std::string>{"launcher:0", "launcher:0", "launcher:1", "launcher:1"}));
    EXPECT_EQ(node_keys(separate, {"0", "1", "2", "3"}), separate);  // one rank per node anyway
    EXPECT_EQ(node_keys(separate, {"0", "", "1", "1"}), separate);   // not set on every rank
    EXPECT_EQ(node_keys({"0", "0", "2", "2"}, {"0", "0", "0", "0"}),
              (std::vector<std::string>{"0", "0", "2", "2"}));  // MPI's word wins where it has one
}

TEST(NodeMap, RankRanges) {
    EXPECT_EQ(rank_ranges({0, 1, 2, 3}), "0-3");
    EXPECT_EQ(rank_ranges({0, 2, 4, 5}), "0,2,4-5");
    EXPECT_EQ(rank_ranges({7}), "7");
    EXPECT_EQ(rank_ranges({}), "");
}
