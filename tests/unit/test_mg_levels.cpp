// The multigrid levels (problems/mg_levels.hpp) and moves (kernels/multigrid.hpp): the coarsening
// rule's sizes written out by hand, every rank's coarse block lying on its fine block's even
// positions, restriction equal to 2^-h times the transpose of prolongation (the V-cycle's
// symmetry) built point by point, and the level spectrum against the Sturm-count eigenvalues of
// the 1D matrices.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/multigrid.hpp"
#include "problems/chebyshev.hpp"
#include "problems/mg_levels.hpp"

using namespace gridsim;

namespace {

Domain cube(int dims, std::array<int, 3> n, std::array<bool, 3> periodic = {}) {
    Domain d;
    d.dims = dims;
    d.cells = d.solved = n;
    d.periodic = periodic;
    return d;
}

std::vector<int> points_along(const std::vector<MgLevel>& levels, int axis) {
    std::vector<int> out;
    for (const MgLevel& l : levels) out.push_back(l.points[axis]);
    return out;
}

}  // namespace

TEST(MgLevels, DirichletAxesKeepTheEvenPositionsAndTheLast) {
    const auto levels = plan_levels(cube(3, {512, 65, 5}), {1, 1, 1}, {0, 0, 0}, 32);
    EXPECT_EQ(points_along(levels, 0), (std::vector<int>{512, 257, 129, 65, 33, 17, 9, 5, 3}));
    EXPECT_EQ(points_along(levels, 1), (std::vector<int>{65, 33, 17, 9, 5, 3, 3, 3, 3}));
    EXPECT_EQ(points_along(levels, 2), (std::vector<int>{5, 3, 3, 3, 3, 3, 3, 3, 3}));
    EXPECT_EQ(levels[1].halved, (std::array<int, 3>{1, 1, 1}));
    EXPECT_EQ(levels[2].halved, (std::array<int, 3>{1, 1, 0}));
    EXPECT_EQ(levels.back().halvings, (std::array<int, 3>{8, 5, 1}));
    EXPECT_EQ(plan_levels(cube(3, {512, 65, 5}), {1, 1, 1}, {0, 0, 0}, 3).size(), 3u);
}

TEST(MgLevels, PeriodicAxesHalveOnlyAnEvenCount) {
    const auto levels =
        plan_levels(cube(2, {48, 63, 1}, {true, true, false}), {1, 1, 1}, {0, 0, 0}, 32);
    EXPECT_EQ(points_along(levels, 0), (std::vector<int>{48, 24, 12, 6, 3}));
    EXPECT_EQ(points_along(levels, 1), (std::vector<int>{63, 63, 63, 63, 63}));
    EXPECT_FALSE(
        plan_levels(cube(2, {3, 5, 1}, {true, true, false}), {1, 1, 1}, {0, 0, 0}, 32).size() > 1);
}

// On several ranks, halving goes on from the level where no block can halve, gathered whole on
// rank 0: 17 x 17 on 1 x 2 ranks (y blocks 9 and 8) halves both axes twice (y blocks 3 and 2 at
// 5 points), x once more (3 x 5), then rank 0 gathers 3 x 5 and halves y alone (3 x 3), the
// size one rank reaches.
TEST(MgLevels, TheLevelNoRankCanHalveIsGatheredOntoRankZero) {
    const Domain dom = cube(2, {17, 17, 1});
    for (int p = 0; p < 2; ++p) {
        const auto levels = plan_levels(dom, {1, 2, 1}, {0, p, 0}, 32);
        EXPECT_EQ(points_along(levels, 0), (std::vector<int>{17, 9, 5, 3, 3, 3}));
        EXPECT_EQ(points_along(levels, 1), (std::vector<int>{17, 9, 5, 5, 5, 3}));
        std::vector<bool> gathered;
        for (const MgLevel& l : levels) gathered.push_back(l.gathered);
        EXPECT_EQ(gathered, (std::vector<bool>{false, false, false, false, true, true}));
        EXPECT_EQ(levels[3].sub.size[1], p == 0 ? 3 : 2);
        for (std::size_t l = 4; l < levels.size(); ++l) {  // every rank plans rank 0's whole grid
            EXPECT_EQ(levels[l].sub.offset, (std::array<int, 3>{0, 0, 0}));
            EXPECT_EQ(levels[l].sub.size, levels[l].points);
            EXPECT_TRUE(levels[l].sub.fixed_face[2] && levels[l].sub.fixed_face[3]);
            EXPECT_FALSE(levels[l].sub.has_neighbour[2] || levels[l].sub.has_neighbour[3]);
        }
        EXPECT_EQ(levels[4].halved, (std::array<int, 3>{0, 0, 0}));
        EXPECT_EQ(levels[5].halved, (std::array<int, 3>{0, 1, 0}));
        EXPECT_EQ(levels.back().halvings, (std::array<int, 3>{3, 3, 0}));
    }
    // Gathering is kept where the ranks' coarsest level is hard to solve there (many Chebyshev
    // applications, each an exchange), dropped where a few solve it. 33 x 33 on 1 x 4 ranks:
    // the ranks share 3 x 9 (y blocks of 3 and 2), and rank 0 halves y to 5 and 3.
    auto hard = plan_levels(cube(2, {33, 33, 1}), {1, 4, 1}, {0, 0, 0}, 32);
    EXPECT_EQ(points_along(hard, 1), (std::vector<int>{33, 17, 9, 9, 9, 9, 5, 3}));
    drop_gathering_that_does_not_pay(hard, {1e6, 1e6, 0.0}, 1e-3, 8);
    EXPECT_TRUE(hard.back().gathered);
    auto easy = hard;
    drop_gathering_that_does_not_pay(easy, {1e-3, 1e-3, 0.0}, 1e-3, 8);
    EXPECT_EQ(points_along(easy, 1), (std::vector<int>{33, 17, 9, 9, 9}));
    EXPECT_FALSE(easy.back().gathered);
    // One rank never gathers; a periodic axis is its own neighbour on rank 0.
    for (const MgLevel& l : plan_levels(dom, {1, 1, 1}, {0, 0, 0}, 32)) EXPECT_FALSE(l.gathered);
    const auto ring =
        plan_levels(cube(2, {8, 8, 1}, {true, false, false}), {2, 2, 1}, {1, 1, 0}, 32);
    EXPECT_TRUE(ring.back().gathered);
    EXPECT_TRUE(ring.back().sub.has_neighbour[0] && ring.back().sub.has_neighbour[1]);
    EXPECT_FALSE(ring.back().sub.has_neighbour[2]);
}

// Each rank's coarse block: contiguous with its neighbours', covering the coarse axis, and
// coarse point c over fine position 2c (the last over the last on an odd-ended Dirichlet axis).
TEST(MgLevels, RankBlocksTileTheCoarseAxisOverTheFineBlocks) {
    for (const bool periodic : {false, true}) {
        for (const int n : {64, 65, 100, 37}) {
            if (periodic && n % 2 != 0) continue;
            for (const int parts : {1, 2, 3, 5}) {
                const Domain dom = cube(3, {n, 9, 9}, {periodic, false, false});
                const auto first = plan_levels(dom, {parts, 1, 1}, {0, 0, 0}, 32);
                for (std::size_t l = 1; l < first.size(); ++l) {
                    if (first[l].halved[0] == 0 || first[l].gathered) continue;
                    int next = 0;
                    for (int p = 0; p < parts; ++p) {
                        const auto levels = plan_levels(dom, {parts, 1, 1}, {p, 0, 0}, 32);
                        const Subdomain& fine = levels[l - 1].sub;
                        const Subdomain& coarse = levels[l].sub;
                        EXPECT_EQ(coarse.offset[0], next);
                        EXPECT_GE(coarse.size[0], 2);
                        EXPECT_EQ(levels[l].shift[0], 2 * coarse.offset[0] - fine.offset[0]);
                        EXPECT_TRUE(levels[l].shift[0] == 0 || levels[l].shift[0] == 1);
                        for (int c = coarse.offset[0]; c < coarse.offset[0] + coarse.size[0]; ++c) {
                            const bool last = c == levels[l].points[0] - 1;
                            const int on = last && !periodic ? levels[l - 1].points[0] - 1 : 2 * c;
                            EXPECT_GE(on, fine.offset[0]);
                            EXPECT_LT(on, fine.offset[0] + fine.size[0]);
                        }
                        next = coarse.offset[0] + coarse.size[0];
                    }
                    EXPECT_EQ(next, first[l].points[0]) << n << " " << parts << " " << l;
                }
            }
        }
    }
}

// Dense restriction and prolongation of one block with halos, each column or row built by
// moving a unit vector; restriction must be 2^-h prolongation's transpose.
TEST(MgTransfer, RestrictionIsAScaledTransposeOfProlongation) {
    for (const int shift : {0, 1}) {
        const auto fe = FieldExtents::make(2, {7, 5, 1}, 1);
        // A fine block of 7 points from an even offset holds 4 coarse ones, from an odd one 3.
        const auto ce = FieldExtents::make(2, {shift == 0 ? 4 : 3, 3, 1}, 1);
        std::vector<double> f(fe.total), c(ce.total);
        GridTransfer<double> t{{f.data(), fe}, {c.data(), ce}, {1, 1, 0}, {shift, 0, 0}};
        // Fine points read by restriction, halos included; coarse points, halos included.
        auto each = [](const FieldExtents& e, auto fn) {
            for (int j = -1; j <= e.n[1]; ++j)
                for (int i = -1; i <= e.n[0]; ++i) fn(i, j);
        };
        each(fe, [&](int fi, int fj) {
            each(ce, [&](int ci, int cj) {
                // P[(fi,fj), (ci,cj)]: prolong a unit coarse vector, read the fine point.
                std::fill(f.begin(), f.end(), 0.0);
                std::fill(c.begin(), c.end(), 0.0);
                c[ce.index(ci, cj, 0)] = 1.0;
                double p = 0.0;
                if (fi >= 0 && fi < fe.n[0] && fj >= 0 && fj < fe.n[1]) {
                    p = prolong_value(t, fi, fj, 0);
                }
                // R[(ci,cj), (fi,fj)]: restrict a unit fine vector, read the coarse point.
                std::fill(f.begin(), f.end(), 0.0);
                std::fill(c.begin(), c.end(), 0.0);
                f[fe.index(fi, fj, 0)] = 1.0;
                double r = 0.0;
                if (ci >= 0 && ci < ce.n[0] && cj >= 0 && cj < ce.n[1]) {
                    r = restrict_value(t, ci, cj, 0);
                }
                // Pairs where both points are owned: the operators on the blocks themselves.
                const bool owned = fi >= 0 && fi < fe.n[0] && fj >= 0 && fj < fe.n[1] && ci >= 0 &&
                                   ci < ce.n[0] && cj >= 0 && cj < ce.n[1];
                if (owned) EXPECT_EQ(r, 0.25 * p) << fi << "," << fj << " " << ci << "," << cj;
            });
        });
        // Linear interpolation reproduces a linear function exactly.
        each(ce, [&](int ci, int cj) { c[ce.index(ci, cj, 0)] = 3.0 * ci - 2.0 * cj; });
        std::fill(f.begin(), f.end(), 0.0);
        for (int j = 0; j < fe.n[1]; ++j)
            for (int i = 0; i < fe.n[0]; ++i) {
                EXPECT_DOUBLE_EQ(prolong_value(t, i, j, 0),
                                 3.0 * (i - shift) / 2.0 - 2.0 * j / 2.0);
            }
    }
}

TEST(MgLevels, SpectrumMatchesTheOneDimensionalMatrices) {
    // 1 + sum_d r_d mu_d: the extremes of each axis's 1D matrix, by Sturm counts.
    auto extremes = [](int n, bool periodic) {
        if (periodic) {  // circulant: 2 - 2 cos(2 pi k / n)
            double lo = 4.0, hi = 0.0;
            for (int k = 0; k < n; ++k) {
                const double mu = 2.0 - 2.0 * std::cos(2.0 * std::acos(-1.0) * k / n);
                lo = std::min(lo, mu);
                hi = std::max(hi, mu);
            }
            return std::pair<double, double>{lo, hi};
        }
        return tridiagonal_extremes(std::vector<double>(n - 2, 2.0),
                                    std::vector<double>(n - 3, -1.0));
    };
    const auto levels =
        plan_levels(cube(3, {40, 17, 6}, {false, false, true}), {1, 1, 1}, {0, 0, 0}, 32);
    const std::array<double, 3> r{3.0, 0.5, 7.0};
    for (const MgLevel& g : levels) {
        double lo = 1.0, hi = 1.0;
        for (int d = 0; d < 3; ++d) {
            const auto [l, h] = extremes(g.points[d], g.periodic[d]);
            const double rd = r[d] / std::pow(4.0, g.halvings[d]);
            lo += rd * l;
            hi += rd * h;
        }
        const LevelSpectrum s = level_spectrum(g, r);
        EXPECT_NEAR(s.lo, lo, 1e-10 * hi);
        EXPECT_NEAR(s.hi, hi, 1e-10 * hi);
    }
}

TEST(MgLevels, ChebyshevDegreeMeetsItsBound) {
    const LevelSpectrum s{1.0, 50.0};
    const int k = chebyshev_degree_for(s, 1e-3);
    const double sigma = 51.0 / 49.0;
    EXPECT_LE(1.0 / std::cosh(k * std::acosh(sigma)), 1e-3);
    EXPECT_GT(1.0 / std::cosh((k - 1) * std::acosh(sigma)), 1e-3);
    EXPECT_EQ(chebyshev_degree_for({2.0, 2.0}, 1e-3), 0);
}
