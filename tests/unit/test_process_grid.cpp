// The automatic process grid: the cheapest factorisation under the halo-cost model, checked
// against the orderings measured on GPU hosts (the git history of docs/performance.md, "Process
// grid") and against what the model must do by construction (periodic axes send two faces, every
// rank keeps a point, ties go to the contiguous-face axes, an explicit grid wins).
#include <gtest/gtest.h>

#include <array>

#include "config/config.hpp"
#include "mesh/domain.hpp"
#include "parallel/cart_topology.hpp"
#include "problems/problem.hpp"

using namespace gridsim;

namespace {

using Grid = std::array<int, 3>;

struct Case {
    Config cfg;
    Domain dom;
};

Case make(const std::string& deck, const std::vector<std::string>& sets = {}) {
    Case c{load_config(deck, "t.toml", sets), {}};
    c.dom = make_domain(c.cfg);
    return c;
}

const std::string kHeat512 = "[grid]\ncells = [512, 512, 512]\n";

}  // namespace

// 2 x H200, NCCL, heat 512^3 double: z split 0.386 ms/step, x split 0.462.
TEST(ProcessGrid, TwoGpusSplitZNotX) {
    const Case c = make(kHeat512);
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 2), (Grid{1, 1, 2}));
    EXPECT_LT(modelled_halo_cost(c.dom, {1, 1, 2}, 8), modelled_halo_cost(c.dom, {2, 1, 1}, 8));
}

// 4 x H200, NCCL, weak scaling 1024 x 1024 x 512 double: 1x2x2 0.783 ms/step, 2x2x1 0.856,
// 4x1x1 far slower.
TEST(ProcessGrid, FourGpusWeakPicksTheMeasuredFastest) {
    const Case c = make("[grid]\ncells = [1024, 1024, 512]\n");
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 4), (Grid{1, 2, 2}));
    const double best = modelled_halo_cost(c.dom, {1, 2, 2}, 8);
    const double auto_before = modelled_halo_cost(c.dom, {2, 2, 1}, 8);
    EXPECT_LT(best, auto_before);
    EXPECT_LT(auto_before, modelled_halo_cost(c.dom, {4, 1, 1}, 8));
}

TEST(ProcessGrid, EqualCostsGoToTheSlowerAxis) {
    const Case c = make("[grid]\ncells = [64, 64, 64]\n");
    EXPECT_EQ(modelled_halo_cost(c.dom, {1, 2, 1}, 8), modelled_halo_cost(c.dom, {1, 1, 2}, 8));
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 2), (Grid{1, 1, 2}));
}

// A periodic axis split over two ranks sends both faces (to the same neighbour): twice the
// messages of a Dirichlet axis, so the model splits the Dirichlet axis instead.
TEST(ProcessGrid, PeriodicAxesCostTwoFaces) {
    const Case c = make("[grid]\ncells = [64, 64, 64]\n[boundary]\nz = \"periodic\"\n");
    EXPECT_GT(modelled_halo_cost(c.dom, {1, 1, 2}, 8), modelled_halo_cost(c.dom, {1, 2, 1}, 8));
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 2), (Grid{1, 2, 1}));
}

TEST(ProcessGrid, EveryRankKeepsAPointOnEveryAxis) {
    // The benchmark's 3 points in y (rows 1..ny-2 of 5) cannot take 4 ranks: x must be split.
    const Case c = make(
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [1024, 5]\n[boundary]\nkind = "
        "\"benchmark\"\n");
    const Grid g = choose_process_grid(c.cfg, c.dom, 4);
    EXPECT_EQ(g[0] * g[1], 4);
    EXPECT_LE(g[1], c.dom.solved[1]);
    EXPECT_EQ(decomposition_problem(c.dom, g, 4, 1), "");
}

TEST(ProcessGrid, AnExplicitGridWins) {
    const Case c = make(kHeat512, {"parallel.process_grid=[4, 1, 1]"});
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 4), (Grid{4, 1, 1}));
}

TEST(ProcessGrid, XFacesCountWholeSectors) {
    // One message each. Halving the value size halves a y face's bytes, so 2 (y8 - y4) is a
    // double y face's transfer term; an x face of the same size moves 32 bytes per 8-byte point,
    // four times that, so it costs three such terms more.
    const Case c = make(kHeat512);
    const double y8 = modelled_halo_cost(c.dom, {1, 2, 1}, 8);
    const double y4 = modelled_halo_cost(c.dom, {1, 2, 1}, 4);
    const double x8 = modelled_halo_cost(c.dom, {2, 1, 1}, 8);
    EXPECT_GT(y8, y4);
    EXPECT_NEAR(x8 - y8, 3 * 2 * (y8 - y4), 1e-12 * x8);
}
