// The nodes of a run from made-up rank tables: ranks with one key share a node, nodes numbered by
// their lowest rank, names made unique, the launcher's numbering taken only where MPI separates
// every rank, MPI's groups set aside where they disagree between ranks, and the header's text.
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
    const std::vector<std::string> hosts = {"a", "a", "b", "b"};
    EXPECT_EQ(node_keys(separate, {"0", "0", "1", "1"}, hosts),
              (std::vector<std::string>{"launcher:0", "launcher:0", "launcher:1", "launcher:1"}));
    EXPECT_EQ(node_keys(separate, {"0", "1", "2", "3"}, hosts), separate);  // one rank per node
    EXPECT_EQ(node_keys(separate, {"0", "", "1", "1"}, hosts), separate);   // not set everywhere
    const std::vector<std::string> pairs = {"0 1", "0 1", "2 3", "2 3"};
    EXPECT_EQ(node_keys(pairs, {"0", "0", "0", "0"}, hosts), pairs);  // MPI's word wins
}

TEST(NodeMap, GroupsThatDisagreeBetweenRanksGiveWayToTheLauncherOrTheHosts) {
    // Rank 0 counts rank 1 on its node, rank 1 counts itself alone: MPI's locality differs
    // from rank to rank (seen with PMIx's hash store over fake nodes).
    const std::vector<std::string> lopsided = {"0 1", "1", "2 3", "2 3"};
    EXPECT_FALSE(groups_agree(lopsided));
    EXPECT_FALSE(groups_agree({"1", "1"}));           // rank 0 not in its own group
    EXPECT_FALSE(groups_agree({"0 1", "0 1", "7"}));  // a rank that does not exist
    EXPECT_TRUE(groups_agree({"0 2", "1", "0 2"}));
    const std::vector<std::string> hosts = {"n0", "n0", "n1", "n1"};
    EXPECT_EQ(node_keys(lopsided, {"4", "4", "5", "5"}, hosts),
              (std::vector<std::string>{"launcher:4", "launcher:4", "launcher:5", "launcher:5"}));
    EXPECT_EQ(node_keys(lopsided, {"", "", "", ""}, hosts),
              (std::vector<std::string>{"host:n0", "host:n0", "host:n1", "host:n1"}));
    const NodeMap m = node_map_from(node_keys(lopsided, {"", "", "", ""}, hosts), hosts);
    EXPECT_EQ(m.text(), "2 nodes: n0 (ranks 0-1), n1 (ranks 2-3)");
}

TEST(NodeMap, RankRanges) {
    EXPECT_EQ(rank_ranges({0, 1, 2, 3}), "0-3");
    EXPECT_EQ(rank_ranges({0, 2, 4, 5}), "0,2,4-5");
    EXPECT_EQ(rank_ranges({7}), "7");
    EXPECT_EQ(rank_ranges({}), "");
}
