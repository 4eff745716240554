// Decomposition rules: block sizes, neighbours, the overlap split and the exchange boxes.
#include <gtest/gtest.h>

#include <numeric>

#include "config/config.hpp"
#include "mesh/domain.hpp"
#include "problems/problem.hpp"

using namespace gridsim;

// Boxes grow on their first dims axes only and clip to what both hold.
TEST(Box, GrowsAndClips) {
    const Box b{{2, 3, 0}, {6, 8, 1}};
    EXPECT_EQ(b.grown(2, 2), (Box{{0, 1, 0}, {8, 10, 1}}));
    EXPECT_EQ(b.grown(1, 3), (Box{{1, 2, -1}, {7, 9, 2}}));
    EXPECT_EQ(b.clipped(Box{{4, 0, 0}, {9, 5, 1}}), (Box{{4, 3, 0}, {6, 5, 1}}));
    EXPECT_TRUE(b.clipped(Box{{7, 0, 0}, {9, 9, 1}}).empty());
}

TEST(BlockRange, SpreadsRemaindersOverTheFirstBlocks) {
    // 10 points over 4 parts: 3 3 2 2.
    const int expect_size[] = {3, 3, 2, 2};
    const int expect_start[] = {0, 3, 6, 8};
    for (int c = 0; c < 4; ++c) {
        EXPECT_EQ(block_range(10, 4, c).size, expect_size[c]);
        EXPECT_EQ(block_range(10, 4, c).start, expect_start[c]);
    }
}

TEST(BlockRange, TilesEveryLengthExactly) {
    for (int n = 1; n < 40; ++n) {
        for (int p = 1; p <= n; ++p) {
            int next = 0;
            for (int c = 0; c < p; ++c) {
                const BlockRange r = block_range(n, p, c);
                EXPECT_EQ(r.start, next);
                EXPECT_TRUE(r.size == n / p || r.size == n / p + 1);
                next += r.size;
            }
            EXPECT_EQ(next, n);
        }
    }
}

namespace {
Domain domain_3d(std::array<int, 3> n, std::array<bool, 3> periodic) {
    Domain d;
    d.dims = 3;
    d.cells = d.solved = n;
    d.periodic = periodic;
    return d;
}
}  // namespace

TEST(Subdomain, NeighboursAndFixedFaces) {
    const Domain dom = domain_3d({10, 9, 8}, {false, true, false});
    const Subdomain first = make_subdomain(dom, {2, 2, 1}, {0, 1, 0});
    EXPECT_EQ(first.offset, (std::array<int, 3>{0, 5, 0}));
    EXPECT_EQ(first.size, (std::array<int, 3>{5, 4, 8}));
    EXPECT_FALSE(first.has_neighbour[0]);  // x_lo: global Dirichlet face
    EXPECT_TRUE(first.fixed_face[0]);
    EXPECT_TRUE(first.has_neighbour[1]);
    EXPECT_FALSE(first.fixed_face[1]);
    EXPECT_TRUE(first.has_neighbour[2] && first.has_neighbour[3]);  // periodic y: always
    EXPECT_FALSE(first.fixed_face[2] || first.fixed_face[3]);
    EXPECT_FALSE(first.has_neighbour[4] || first.has_neighbour[5]);
    EXPECT_TRUE(first.fixed_face[4] && first.fixed_face[5]);
}

TEST(Subdomain, UpdatedBoxSkipsDirichletPointsOnly) {
    const Domain dom = domain_3d({10, 9, 8}, {false, true, false});
    const Subdomain s = make_subdomain(dom, {2, 1, 1}, {1, 0, 0});
    const Box b = updated_box(s);
    EXPECT_EQ(b.lo, (std::array<int, 3>{0, 0, 1}));
    EXPECT_EQ(b.hi, (std::array<int, 3>{4, 9, 7}));
}

// Brute force: every updated point is in exactly one region, the interior never touches a
// halo (all its neighbours are owned), and the shell holds every point that needs a halo.
TEST(SweepRegions, PartitionTheUpdatedPointsForEveryShape) {
    for (int nx : {1, 2, 3, 7}) {
        for (int mask = 0; mask < 64; ++mask) {
            Subdomain s;
            s.dims = 3;
            s.size = {nx, 3, 5};
            for (int f = 0; f < 6; ++f) {
                s.has_neighbour[f] = (mask >> f) & 1;
                s.fixed_face[f] = !s.has_neighbour[f] && f % 3 == 0;
            }
            const Box u = updated_box(s);
            // `reflected`: a star of radius 2 also reads the reflected halos beyond fixed faces.
            for (const bool reflected : {false, true}) {
                const int reach = reflected ? 2 : 1;
                const SweepRegions r = split_for_overlap(u, s, reach, reflected);
                for (int k = -1; k <= 5; ++k)
                    for (int j = -1; j <= 3; ++j)
                        for (int i = -1; i <= nx; ++i) {
                            int hits = r.interior.contains(i, j, k) ? 1 : 0;
                            for (const Box& b : r.shell) hits += b.contains(i, j, k) ? 1 : 0;
                            ASSERT_EQ(hits, u.contains(i, j, k) ? 1 : 0)
                                << "point " << i << "," << j << "," << k;
                            if (!r.interior.contains(i, j, k)) continue;
                            const int at[3] = {i, j, k};
                            for (int d = 0; d < 3; ++d) {
                                const bool lo = s.has_neighbour[2 * d] || reflected;
                                const bool hi = s.has_neighbour[2 * d + 1] || reflected;
                                EXPECT_FALSE(lo && at[d] - reach < 0);
                                EXPECT_FALSE(hi && at[d] + reach >= s.size[d]);
                            }
                        }
            }
        }
    }
}

TEST(ExchangeBoxes, FacesAndHalos) {
    Subdomain s;
    s.dims = 3;
    s.size = {6, 5, 4};
    EXPECT_EQ(send_box(s, 0, 1), (Box{{0, 0, 0}, {1, 5, 4}}));
    EXPECT_EQ(send_box(s, 3, 1), (Box{{0, 4, 0}, {6, 5, 4}}));
    EXPECT_EQ(recv_box(s, 0, 1), (Box{{-1, 0, 0}, {0, 5, 4}}));
    EXPECT_EQ(recv_box(s, 5, 2), (Box{{0, 0, 4}, {6, 5, 6}}));
}

TEST(Decomposition, ExplainsWhatDoesNotFit) {
    const Domain dom = domain_3d({8, 8, 3}, {false, false, false});
    EXPECT_EQ(decomposition_problem(dom, {2, 2, 1}, 4, 1), "");
    EXPECT_NE(decomposition_problem(dom, {2, 2, 1}, 2, 1).find("has 4 ranks but the run has 2"),
              std::string::npos);
    EXPECT_NE(decomposition_problem(dom, {1, 1, 4}, 4, 1).find("axis z has 3 points over 4 ranks"),
              std::string::npos);
}

TEST(Domain, BenchmarkSolvesTheInnerRowsPeriodically) {
    const Config c = load_config(
        "[problem]\nname=\"jacobi\"\n[grid]\ncells=[12, 10]\n[boundary]\nkind=\"benchmark\"\n",
        "b.toml", {});
    const Domain d = make_domain(c);
    EXPECT_EQ(d.solved[1], 8);
    EXPECT_EQ(d.solved_origin[1], 1);
    EXPECT_TRUE(d.periodic[1]);
    EXPECT_FALSE(d.periodic[0]);
}

// Temporal blocking's regions: the updated box grown into the halos of faces with neighbours
// only, the slabs around it covering the grown box minus the updated one exactly once, and face
// boxes widened over the earlier axes' halos where those have neighbours.
TEST(TimeBlockRegions, GrowIntoNeighbourHalosAndPeelExactly) {
    Subdomain s;
    s.dims = 3;
    s.size = {7, 6, 5};
    s.has_neighbour = {true, false, true, true, false, true};
    s.fixed_face = {false, true, false, false, true, false};
    const Box u = updated_box(s);
    const Box grown = extend_into_halos(u, s, 2);
    EXPECT_EQ(grown, (Box{{-2, -2, 1}, {6, 8, 7}}));
    const std::vector<Box> slabs = peel(grown, u, 3);
    for (int k = -3; k <= 8; ++k)
        for (int j = -3; j <= 9; ++j)
            for (int i = -3; i <= 8; ++i) {
                int hits = 0;
                for (const Box& b : slabs) hits += b.contains(i, j, k) ? 1 : 0;
                const bool ring = grown.contains(i, j, k) && !u.contains(i, j, k);
                ASSERT_EQ(hits, ring ? 1 : 0) << "point " << i << "," << j << "," << k;
            }
    // Face y_lo of a 3-deep exchange: widened over x's halo on the side with a neighbour only.
    EXPECT_EQ(with_corners(send_box(s, 2, 3), s, 2, 3), (Box{{-3, 0, 0}, {7, 3, 5}}));
    // Face z_hi: over x's (one side) and y's (both sides) halos.
    EXPECT_EQ(with_corners(recv_box(s, 5, 3), s, 5, 3), (Box{{-3, -3, 5}, {7, 9, 8}}));
    // Face x_lo: the first axis, nothing before it to widen over.
    EXPECT_EQ(with_corners(send_box(s, 0, 3), s, 0, 3), send_box(s, 0, 3));
}
