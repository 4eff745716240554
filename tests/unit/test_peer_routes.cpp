// The ipc transport's routes from synthetic machine tables: which faces go by direct stores into
// the neighbour's GPU, and the one-line reason where one cannot (another node, a GPU hidden from
// the process by per-task binding, no peer access in one direction, no GPU); ranks sharing a GPU
// can.
#include <gtest/gtest.h>

#include "parallel/peer_routes.hpp"

using namespace gridsim;

namespace {

const std::string kA = "0000:19:00.0";
const std::string kB = "0000:3B:00.0";
const std::string kC = "0000:5D:00.0";
const std::string kD = "0000:DB:00.0";

// Four ranks, one GPU each, every process sees all four GPUs and they all reach each other
// (an NVLink node launched without per-task binding).
std::vector<RankGpu> one_nvlink_node() {
    const std::vector<std::string> all = {kA, kB, kC, kD};
    std::vector<RankGpu> ranks;
    for (const std::string& mine : all) {
        RankGpu r{"gpu01", mine, {}};
        for (const std::string& other : all)
            if (other != mine) r.reaches.push_back(other);
        ranks.push_back(r);
    }
    return ranks;
}

constexpr std::array<int, 6> kNoPeers = {-1, -1, -1, -1, -1, -1};

}  // namespace

TEST(PeerRoutes, ReachableGpusOnOneNodeHaveNoObstacle) {
    const auto ranks = one_nvlink_node();
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b)
            if (a != b) EXPECT_EQ(ipc_obstacle(ranks, a, b), "") << a << " " << b;
}

TEST(PeerRoutes, AnotherNodeIsNamed) {
    auto ranks = one_nvlink_node();
    ranks[2].node = "gpu02";
    EXPECT_EQ(ipc_obstacle(ranks, 1, 2), "ranks 1 and 2 are on different nodes (gpu01, gpu02)");
    EXPECT_EQ(ipc_obstacle(ranks, 2, 1), "ranks 2 and 1 are on different nodes (gpu02, gpu01)");
    EXPECT_EQ(ipc_obstacle(ranks, 0, 1), "");
}

// Per-task binding: each process sees only its own GPU, so it can open no other's memory.
TEST(PeerRoutes, AGpuHiddenFromTheProcessCannotBeReached) {
    auto ranks = one_nvlink_node();
    for (auto& r : ranks) r.reaches.clear();
    const std::string why = ipc_obstacle(ranks, 0, 1);
    EXPECT_NE(why.find("rank 0's GPU (" + kA + ") cannot reach rank 1's GPU (" + kB + ")"),
              std::string::npos)
        << why;
}

// What a run loses inside its nodes: nothing across nodes alone (2 nodes of 2 ranks whose GPUs
// reach each other), a pair of one node under per-task binding.
TEST(PeerRoutes, SameNodeObstacleIgnoresOtherNodes) {
    auto ranks = one_nvlink_node();
    ranks[2].node = ranks[3].node = "gpu02";
    EXPECT_EQ(same_node_obstacle(ranks), "");
    EXPECT_NE(ipc_everywhere(ranks), "");
    for (auto& r : ranks) r.reaches.clear();  // per-task binding
    const std::string why = same_node_obstacle(ranks);
    EXPECT_NE(why.find("rank 0's GPU (" + kA + ") cannot reach rank 1's GPU (" + kB + ")"),
              std::string::npos)
        << why;
}

// Peer access in one direction only refuses the pair from both ends (each end stores into the
// other's memory).
TEST(PeerRoutes, OneWayAccessIsRefusedFromBothEnds) {
    auto ranks = one_nvlink_node();
    ranks[1].reaches = {kC, kD};  // rank 1's GPU cannot reach rank 0's
    for (auto [a, b] : {std::pair{0, 1}, std::pair{1, 0}}) {
        const std::string why = ipc_obstacle(ranks, a, b);
        EXPECT_NE(why.find("rank 1's GPU (" + kB + ") cannot reach rank 0's GPU (" + kA + ")"),
                  std::string::npos)
            << why;
    }
    EXPECT_EQ(ipc_obstacle(ranks, 0, 2), "");
}

// Two ranks on one GPU (parallel.share_gpus): its memory is local to both, whatever the
// process sees of other GPUs.
TEST(PeerRoutes, RanksSharingAGpuReachEachOther) {
    auto ranks = one_nvlink_node();
    ranks[3].bus_id = kC;
    ranks[2].reaches.clear();
    ranks[3].reaches.clear();
    EXPECT_EQ(ipc_obstacle(ranks, 2, 3), "");
    EXPECT_NE(ipc_obstacle(ranks, 1, 2), "");
}

TEST(PeerRoutes, AMissingGpuIsNamed) {
    auto ranks = one_nvlink_node();
    ranks[3].bus_id.clear();
    EXPECT_EQ(ipc_obstacle(ranks, 2, 3), "rank 3 has no GPU");
}

// The sums go by IPC only where every pair of ranks reaches each other, not only neighbours.
TEST(PeerRoutes, EverywhereNeedsEveryPair) {
    auto ranks = one_nvlink_node();
    EXPECT_EQ(ipc_everywhere(ranks), "");
    EXPECT_EQ(ipc_everywhere({}), "");
    EXPECT_EQ(ipc_everywhere({ranks[0]}), "");
    ranks[3].node = "gpu02";
    EXPECT_EQ(ipc_everywhere(ranks), "ranks 0 and 3 are on different nodes (gpu01, gpu02)");
    ranks[3].node = "gpu01";
    ranks[0].reaches = {kB, kC};  // a 4-GPU node without the link from 0 to 3
    EXPECT_NE(ipc_everywhere(ranks).find("rank 0's GPU (" + kA + ") cannot reach rank 3's"),
              std::string::npos);
}

// Two nodes of two GPUs, process grid 4 x 1 along x (non-periodic): rank 1's -x neighbour is on
// its node, its +x neighbour on the other one, and the reason names that face's pair.
TEST(PeerRoutes, ANeighbourOnAnotherNodeIsNamed) {
    auto ranks = one_nvlink_node();
    ranks[2].node = ranks[3].node = "gpu02";
    std::array<int, 6> peers = kNoPeers;
    peers[0] = 0;
    EXPECT_EQ(neighbour_obstacle(ranks, 1, peers), "");
    peers[1] = 2;
    EXPECT_EQ(neighbour_obstacle(ranks, 1, peers),
              "ranks 1 and 2 are on different nodes (gpu01, gpu02)");
}

// Two ranks on a periodic axis: both faces go to the same peer.
TEST(PeerRoutes, BothFacesToOnePeer) {
    auto ranks = one_nvlink_node();
    std::array<int, 6> peers = kNoPeers;
    peers[2] = peers[3] = 1;
    EXPECT_EQ(neighbour_obstacle(ranks, 0, peers), "");
    ranks[1].node = "gpu02";
    EXPECT_EQ(neighbour_obstacle(ranks, 0, peers),
              "ranks 0 and 1 are on different nodes (gpu01, gpu02)");
}

// Faces without another rank across them are not looked at, however the machine is.
TEST(PeerRoutes, NoPeersNoObstacle) {
    auto ranks = one_nvlink_node();
    for (auto& r : ranks) r.reaches.clear();
    EXPECT_EQ(neighbour_obstacle(ranks, 0, kNoPeers), "");
}

TEST(PeerRoutes, TheTableSurvivesItsTextForm) {
    const RankGpu r{"node-7.cluster", kB, {kA, kC}};
    const RankGpu back = decode_rank_gpu(encode(r));
    EXPECT_EQ(back.node, r.node);
    EXPECT_EQ(back.bus_id, r.bus_id);
    EXPECT_EQ(back.reaches, r.reaches);
    const RankGpu none = decode_rank_gpu(encode(RankGpu{"cpu01", "", {}}));
    EXPECT_EQ(none.node, "cpu01");
    EXPECT_EQ(none.bus_id, "");
    EXPECT_TRUE(none.reaches.empty());
}

// The transport "auto" takes, over every combination of what the ranks found: ipc only where
// every rank reaches every other and the ranks' kernels run side by side (a GPU each, or GPUs
// shared through MPS); NCCL only with a GPU per rank and NCCL built; staged otherwise, and always
// on one rank.
TEST(PeerRoutes, AutomaticTransportFollowsTheRanksGpus) {
    constexpr TransportKind S = TransportKind::staged;
    constexpr TransportKind I = TransportKind::ipc;
    constexpr TransportKind N = TransportKind::nccl;
    struct Case {
        bool own, mps, reach, nccl;
        TransportKind want;
    };
    const std::vector<Case> cases = {
        // own   mps    reach  nccl
        {false, false, false, false, S}, {false, false, false, true, S},
        {false, false, true, false, S},  {false, false, true, true, S},
        {false, true, false, false, S},  {false, true, false, true, S},
        {false, true, true, false, I},   {false, true, true, true, I},
        {true, false, false, false, S},  {true, false, false, true, N},
        {true, false, true, false, I},   {true, false, true, true, I},
        {true, true, false, false, S},   {true, true, false, true, N},
        {true, true, true, false, I},    {true, true, true, true, I},
    };
    for (int ranks : {1, 2, 4}) {
        for (const Case& c : cases) {
            RankGpuFacts f;
            f.ranks = ranks;
            f.own_gpus = c.own;
            f.shared_by_mps = c.mps;
            f.ipc_gap = c.reach ? "" : "no peer access";
            f.nccl_built = c.nccl;
            EXPECT_EQ(automatic_transport(f), ranks == 1 ? S : c.want)
                << ranks << " ranks, own " << c.own << ", mps " << c.mps << ", reach " << c.reach
                << ", nccl " << c.nccl;
        }
    }
}

// Ranks sharing one GPU: side by side through MPS they store into each other's memory; taking
// turns without MPS, a device handshake would wait a whole turn, so their halos go by MPI.
TEST(PeerRoutes, RanksSharingAGpuUseIpcOnlyThroughMps) {
    RankGpuFacts f;
    f.ranks = 2;
    f.ipc_gap.clear();  // every rank reaches every other
    f.nccl_built = true;
    EXPECT_EQ(automatic_transport(f), TransportKind::staged);
    f.shared_by_mps = true;
    EXPECT_EQ(automatic_transport(f), TransportKind::ipc);
}

namespace {

// `nodes` nodes of `per` GPUs, rank r on node r / per with the node's GPU r % per; every process
// sees its node's GPUs and reaches them (`visible`), or only its own (per-task binding).
std::vector<RankGpu> cluster(int nodes, int per, bool visible) {
    std::vector<RankGpu> ranks;
    for (int r = 0; r < nodes * per; ++r) {
        RankGpu g{
            "n" + std::to_string(r / per), "0000:" + std::to_string(10 + r % per) + ":00.0", {}};
        for (int o = 0; o < per && visible; ++o)
            if (o != r % per) g.reaches.push_back("0000:" + std::to_string(10 + o) + ":00.0");
        ranks.push_back(g);
    }
    return ranks;
}

RankGpuFacts gpus_of_their_own(int ranks, bool nccl) {
    RankGpuFacts f;
    f.ranks = ranks;
    f.own_gpus = true;
    f.nccl_built = nccl;
    return f;
}

}  // namespace

// Every pair of ranks of the tables: ipc inside a node where the GPUs reach each other, else
// NCCL, else CUDA-aware MPI, else staged; the same from both ends.
TEST(PeerRoutes, ARoutePerNeighbourOnClusterTables) {
    for (const auto [nodes, per] : {std::pair{2, 4}, std::pair{4, 4}, std::pair{16, 8}}) {
        const std::vector<RankGpu> all = cluster(nodes, per, true);
        const RankGpuFacts f = gpus_of_their_own(nodes * per, true);
        for (int a = 0; a < nodes * per; ++a) {
            for (int b = 0; b < nodes * per; ++b) {
                if (a == b) continue;
                const TransportKind k = route_between(all, a, b, f);
                EXPECT_EQ(k, a / per == b / per ? TransportKind::ipc : TransportKind::nccl);
                EXPECT_EQ(k, route_between(all, b, a, f));
            }
        }
        // Per-task binding: no GPU of another rank is visible, so no face goes by ipc.
        const std::vector<RankGpu> bound = cluster(nodes, per, false);
        for (int b = 1; b < nodes * per; ++b)
            EXPECT_EQ(route_between(bound, 0, b, f), TransportKind::nccl) << b;
    }
}

TEST(PeerRoutes, WithoutNcclAcrossNodesGoesByMpi) {
    const std::vector<RankGpu> ranks = cluster(2, 4, true);
    RankGpuFacts f = gpus_of_their_own(8, false);
    EXPECT_EQ(route_between(ranks, 0, 1, f), TransportKind::ipc);
    EXPECT_EQ(route_between(ranks, 3, 4, f), TransportKind::staged);
    f.cuda_aware = true;
    EXPECT_EQ(route_between(ranks, 3, 4, f), TransportKind::cuda_aware);
    // Ranks sharing GPUs run side by side only under MPS: ipc there, else staged everywhere.
    std::vector<RankGpu> shared = cluster(2, 2, true);
    for (RankGpu& g : shared) g.bus_id = "0000:10:00.0";
    RankGpuFacts s;
    s.ranks = 4;
    EXPECT_EQ(route_between(shared, 0, 1, s), TransportKind::staged);
    s.shared_by_mps = true;
    EXPECT_EQ(route_between(shared, 0, 1, s), TransportKind::ipc);
    EXPECT_EQ(route_between(shared, 1, 2, s), TransportKind::staged);  // another node
}
