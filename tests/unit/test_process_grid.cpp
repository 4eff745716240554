// The automatic process grid: the cheapest factorisation under the fixed-cost model, checked
// against the orderings measured on GPU hosts (docs/tuning.md, "Process grid") and against what
// the model must do by construction (periodic axes send two faces, every rank keeps a point, ties
// go to the contiguous-face axes, an explicit grid wins, a summing pass shares its messages and
// read-back only where it can run), with costs of the tests' own where the rule is about costs.
#include <gtest/gtest.h>

#include <array>

#include "config/config.hpp"
#include "kernels/levels_3d_tile.hpp"
#include "mesh/domain.hpp"
#include "parallel/grid_model.hpp"
#include "parallel/plane_pass_model.hpp"
#include "problems/problem.hpp"
#include "support/deck_case.hpp"

using namespace gridsim;

namespace {

using Grid = std::array<int, 3>;

using Case = test::DeckCase;
using test::make_case;

const std::string kHeat512 = "[grid]\ncells = [512, 512, 512]\n";

// The model's cost of `grid` for a problem without a residual (heat): its halos alone.
double modelled_halo_cost(const Domain& dom, const Grid& grid, int value_bytes) {
    GridDemand heat;
    heat.value_bytes = value_bytes;
    return modelled_sweep_cost(dom, grid, heat);
}

}  // namespace

// 2 x H200, NCCL, heat 512^3 double: z split 0.386 ms/step, x split 0.462.
TEST(ProcessGrid, TwoGpusSplitZNotX) {
    const Case c = make_case(kHeat512);
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 2), (Grid{1, 1, 2}));
    EXPECT_LT(modelled_halo_cost(c.dom, {1, 1, 2}, 8), modelled_halo_cost(c.dom, {2, 1, 1}, 8));
}

// 4 x H200, NCCL, weak scaling 1024 x 1024 x 512 double: 1x2x2 0.783 ms/step, 2x2x1 0.856,
// 4x1x1 far slower.
TEST(ProcessGrid, FourGpusWeakPicksTheMeasuredFastest) {
    const Case c = make_case("[grid]\ncells = [1024, 1024, 512]\n");
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 4), (Grid{1, 2, 2}));
    const double best = modelled_halo_cost(c.dom, {1, 2, 2}, 8);
    const double auto_before = modelled_halo_cost(c.dom, {2, 2, 1}, 8);
    EXPECT_LT(best, auto_before);
    EXPECT_LT(auto_before, modelled_halo_cost(c.dom, {4, 1, 1}, 8));
}

TEST(ProcessGrid, EqualCostsGoToTheSlowerAxis) {
    const Case c = make_case("[grid]\ncells = [64, 64, 64]\n");
    EXPECT_EQ(modelled_halo_cost(c.dom, {1, 2, 1}, 8), modelled_halo_cost(c.dom, {1, 1, 2}, 8));
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 2), (Grid{1, 1, 2}));
}

// A periodic axis split over two ranks sends both faces (to the same neighbour): twice the
// messages of a Dirichlet axis, so the model splits the Dirichlet axis instead.
TEST(ProcessGrid, PeriodicAxesCostTwoFaces) {
    const Case c = make_case("[grid]\ncells = [64, 64, 64]\n[boundary]\nz = \"periodic\"\n");
    EXPECT_GT(modelled_halo_cost(c.dom, {1, 1, 2}, 8), modelled_halo_cost(c.dom, {1, 2, 1}, 8));
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 2), (Grid{1, 2, 1}));
}

TEST(ProcessGrid, EveryRankKeepsAPointOnEveryAxis) {
    // The benchmark's 3 points in y (rows 1..ny-2 of 5) cannot take 4 ranks: x must be split.
    const Case c = make_case(
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [1024, 5]\n[boundary]\nkind = "
        "\"benchmark\"\n");
    const Grid g = choose_process_grid(c.cfg, c.dom, 4);
    EXPECT_EQ(g[0] * g[1], 4);
    EXPECT_LE(g[1], c.dom.solved[1]);
    EXPECT_EQ(decomposition_problem(c.dom, g, 4, 1), "");
}

TEST(ProcessGrid, AnExplicitGridWins) {
    const Case c = make_case(kHeat512, {"parallel.process_grid=[4, 1, 1]"});
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 4), (Grid{4, 1, 1}));
}

TEST(ProcessGrid, XFacesPayTheirPackingAndWholeSectors) {
    // One message each. Halving the value size halves a y face's bytes, so 2 (y8 - y4) is a
    // double y face's transfer term; an x face of the same size moves 32 bytes per 8-byte point,
    // four times that, so it costs three such terms more, and its packing.
    const Case c = make_case(kHeat512);
    const double y8 = modelled_halo_cost(c.dom, {1, 2, 1}, 8);
    const double y4 = modelled_halo_cost(c.dom, {1, 2, 1}, 4);
    const double x8 = modelled_halo_cost(c.dom, {2, 1, 1}, 8);
    EXPECT_GT(y8, y4);
    EXPECT_NEAR(x8 - y8, 3 * 2 * (y8 - y4) + FixedCosts{}.packing, 1e-12 * x8);
}

// The jacobi benchmark at 16384^2 float with the residual every sweep (y periodic): on 2 ranks
// an x split sends one face where a y split sends two, but the x face is packed and unpacked,
// which costs more than the second message, as measured (docs/tuning.md, "Process grid").
const std::string kJacobi16k =
    "[problem]\nname = \"jacobi\"\nprecision = \"float\"\n[grid]\ncells = [16384, 16384]\n"
    "[boundary]\nkind = \"benchmark\"\n[time]\nnorm_every = 1\n";

TEST(ProcessGrid, AResidualEverySweepSplitsRowsForTheSummingPass) {
    const Case c = make_case(kJacobi16k);
    const GridDemand d = grid_demand(c.cfg);
    EXPECT_TRUE(d.sums_residual);
    EXPECT_EQ(d.summing_pass_levels, kModelSummingLevels);
    EXPECT_LT(modelled_sweep_cost(c.dom, {1, 2, 1}, d), modelled_sweep_cost(c.dom, {2, 1, 1}, d));
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 2), (Grid{1, 2, 1}));
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 4), (Grid{1, 4, 1}));
    // A residual every 100 sweeps gets the grid of a residual every sweep: the cadence changes
    // no bits.
    const Case every100 = make_case(kJacobi16k, {"time.norm_every=100"});
    EXPECT_EQ(choose_process_grid(every100.cfg, every100.dom, 2), (Grid{1, 2, 1}));
}

// A summing pass runs on any 2D grid whose ranks take its halos: x splits and 2 x 2 grids share
// their messages and read-back among its levels as row splits do.
TEST(ProcessGrid, ASummingPassCountsOnEveryGridOfItsHalos) {
    const Case c = make_case(kJacobi16k);
    const GridDemand d = grid_demand(c.cfg);
    GridDemand no_pass = d;
    no_pass.summing_pass_levels = 1;
    for (const Grid& g : {Grid{2, 1, 1}, Grid{2, 2, 1}, Grid{4, 1, 1}}) {
        SCOPED_TRACE(g[0] * 10 + g[1]);
        const double with_pass = modelled_sweep_cost(c.dom, g, d);
        EXPECT_LT(with_pass, modelled_sweep_cost(c.dom, g, no_pass));
    }
}

// What the problem asks of a pass, whatever the keys that choose how the sweeps run and the
// residual's cadence: they change no bits, and a grid that followed them would change the
// residual's.
TEST(ProcessGrid, TheDemandIsTheProblemsNotTheKeys) {
    const Case plain = make_case(kJacobi16k);
    for (const char* set :
         {"parallel.time_block=1", "parallel.time_block=6", "parallel.overlap=true",
          "parallel.overlap=false", "parallel.graphs=\"off\"", "parallel.transport=\"staged\"",
          "time.norm_every=7"}) {
        SCOPED_TRACE(set);
        const Case c = make_case(kJacobi16k, {set});
        EXPECT_EQ(grid_demand(c.cfg).summing_pass_levels, kModelSummingLevels);
        EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 2),
                  choose_process_grid(plain.cfg, plain.dom, 2));
    }
    const GridDemand heat = grid_demand(make_case(kHeat512).cfg);
    EXPECT_FALSE(heat.sums_residual);
    EXPECT_EQ(heat.summing_pass_levels, 1);
    EXPECT_EQ(heat.value_bytes, 8);
    // 3D: no pass sums in 3D, so every grid pays a read-back per sweep alike.
    const Case j3 = make_case(
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [64, 64, 64]\n[time]\nnorm_every = 1\n");
    EXPECT_EQ(grid_demand(j3.cfg).summing_pass_levels, 1);
    EXPECT_EQ(choose_process_grid(j3.cfg, j3.dom, 2), (Grid{1, 1, 2}));
}

// With costs of the test's own: a read-back, messages and packing free of charge leave only the
// bytes, where an x face's sectors cost more, so the y split wins; with packing free and no pass,
// the x split's single message wins; with the x face's packing the y split's second message is
// cheaper.
TEST(ProcessGrid, TheChoiceIsAFunctionOfTheCostsAlone) {
    const Case c = make_case(kJacobi16k);
    GridDemand d = grid_demand(c.cfg);
    auto chosen = [&](const FixedCosts& costs, const GridDemand& demand) {
        return cheapest_grid(
            c.dom, 2, [&](const Grid& g) { return modelled_sweep_cost(c.dom, g, demand, costs); });
    };
    FixedCosts bytes_only;
    bytes_only.message = 0.0;
    bytes_only.packing = 0.0;
    bytes_only.read_back = 0.0;
    EXPECT_EQ(chosen(bytes_only, d), (Grid{1, 2, 1}));
    GridDemand no_pass = d;
    no_pass.summing_pass_levels = 1;
    FixedCosts free_packing;
    free_packing.packing = 0.0;
    EXPECT_EQ(chosen(free_packing, no_pass), (Grid{2, 1, 1}));
    EXPECT_EQ(chosen(free_packing, d), (Grid{2, 1, 1}));
    EXPECT_EQ(chosen(FixedCosts{}, no_pass), (Grid{1, 2, 1}));
    // Per sweep the pass shares its messages and read-back among its levels, never its bytes.
    const FixedCosts costs;
    const double with_pass = modelled_sweep_cost(c.dom, {1, 2, 1}, d, costs);
    const double without = modelled_sweep_cost(c.dom, {1, 2, 1}, no_pass, costs);
    const double bytes = modelled_sweep_cost(c.dom, {1, 2, 1}, d, bytes_only);
    EXPECT_NEAR(without - bytes, d.summing_pass_levels * (with_pass - bytes), 1e-12 * without);
    EXPECT_NEAR(without - bytes, 2 * costs.message + costs.read_back, 1e-12 * without);
}

// A y split whose rows are fewer than the pass's halos cannot take the pass: the model credits
// it with none (the benchmark's 14 solved rows over 4 ranks leave 3 or 4 rows each).
TEST(ProcessGrid, APassCountsOnlyWhereTheRanksTakeItsHalos) {
    const Case c = make_case(
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [1024, 16]\n[boundary]\nkind = "
        "\"benchmark\"\n[time]\nnorm_every = 1\n");
    GridDemand d = grid_demand(c.cfg);
    GridDemand no_pass = d;
    no_pass.summing_pass_levels = 1;
    EXPECT_EQ(modelled_sweep_cost(c.dom, {1, 4, 1}, d),
              modelled_sweep_cost(c.dom, {1, 4, 1}, no_pass));
    EXPECT_LT(modelled_sweep_cost(c.dom, {1, 2, 1}, d),
              modelled_sweep_cost(c.dom, {1, 2, 1}, no_pass));
}

// A 3D pass of several levels streams one x-y tile per block along z and runs only where every
// rank keeps kLevels3dMinCrossSection points of cross-section. The orderings measured on 4 x H200
// (docs/tuning.md, "Process grid"): heat 128^3 faster on 1x1x4 (the pass runs) than on 1x2x2
// (cross-section 128 x 64: one sweep per exchange); 256^3 faster on 1x2x2 than on 1x1x4.
TEST(ProcessGrid, A3dPassCountsOnlyWhereEveryRankKeepsItsCrossSection) {
    const std::string heat128 = "[grid]\ncells = [128, 128, 128]\n";
    const Case c = make_case(heat128);
    const GridDemand d = grid_demand(c.cfg);
    EXPECT_EQ(d.plane_pass_levels, kMaxLevels3d);
    EXPECT_EQ(smallest_cross_section(c.dom, {1, 2, 2}), 128 * 64);
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 4), (Grid{1, 1, 4}));
    EXPECT_EQ(choose_process_grid(c.cfg, c.dom, 2), (Grid{1, 1, 2}));
    const Case c256 = make_case("[grid]\ncells = [256, 256, 256]\n");
    EXPECT_EQ(choose_process_grid(c256.cfg, c256.dom, 4), (Grid{1, 2, 2}));
    // Without the pass a sweep is its block read and written once plus every message; with it,
    // the fastest k's pass with the messages shared among its levels.
    GridDemand no_pass = d;
    no_pass.plane_pass_levels = 1;
    auto one_sweep_per_pass = [&](const Case& k, const Grid& g) {
        const std::array<long long, 3> b{k.dom.solved[0] / g[0], k.dom.solved[1] / g[1],
                                         k.dom.solved[2] / g[2]};
        return modelled_single_sweep_seconds(b, 8) + modelled_sweep_cost(k.dom, g, no_pass);
    };
    EXPECT_DOUBLE_EQ(modelled_sweep_cost(c.dom, {1, 2, 2}, d), one_sweep_per_pass(c, {1, 2, 2}));
    EXPECT_LT(modelled_sweep_cost(c.dom, {1, 1, 4}, d), one_sweep_per_pass(c, {1, 1, 4}));
    // A pass deeper than a rank's planes does not fit: 4 planes over 4 ranks leave 1 each, 8
    // leave 2, as deep as the shallowest pass.
    const Case thin = make_case("[grid]\ncells = [256, 256, 4]\n");
    const GridDemand deep = grid_demand(thin.cfg);
    EXPECT_DOUBLE_EQ(modelled_sweep_cost(thin.dom, {1, 1, 4}, deep),
                     one_sweep_per_pass(thin, {1, 1, 4}));
    const Case eight = make_case("[grid]\ncells = [256, 256, 8]\n");
    EXPECT_LT(modelled_sweep_cost(eight.dom, {1, 1, 4}, deep),
              one_sweep_per_pass(eight, {1, 1, 4}));
    // The implicit scheme's CG exchanges inside every operator: no pass, its halos' bytes decide.
    const Case cg = make_case(heat128 + "[problem]\nscheme = \"implicit\"\n");
    EXPECT_EQ(grid_demand(cg.cfg).plane_pass_levels, 1);
    EXPECT_EQ(choose_process_grid(cg.cfg, cg.dom, 4), (Grid{1, 2, 2}));
    // 2D has no plane pass.
    EXPECT_EQ(grid_demand(make_case(kJacobi16k).cfg).plane_pass_levels, 1);
}

// The 3D pass's tiles fill the waves of the GPU better on some grids than on others, which the
// model counts (plane_pass_model.hpp). Measured on 4 x H200, heat 512^3, us per step with default
// settings otherwise (docs/performance.md): double 1x2x2 118.2, 1x1x4 102.4, 2x1x2 98.7;
// float 61.2, 57.1, 56.7. On 2 GPUs 512^3 splits z: 1x1x2 166.9, 2x1x1 175.2, 1x2x1 204.4.
TEST(ProcessGrid, A3dGridFillsThePasssWaves) {
    const Case d512 = make_case(kHeat512);
    const Grid g = choose_process_grid(d512.cfg, d512.dom, 4);
    EXPECT_TRUE(g == (Grid{1, 1, 4}) || g == (Grid{2, 1, 2})) << g[0] << g[1] << g[2];
    const Case f512 = make_case(kHeat512 + "[problem]\nprecision = \"float\"\n");
    const Grid f = choose_process_grid(f512.cfg, f512.dom, 4);
    EXPECT_TRUE(f == (Grid{1, 1, 4}) || f == (Grid{2, 1, 2})) << f[0] << f[1] << f[2];
    EXPECT_EQ(choose_process_grid(d512.cfg, d512.dom, 2), (Grid{1, 1, 2}));
}

// The fixed costs rank the 2D grids by their ratios alone: every cost scaled alike (bandwidth
// inversely) gives every 2D grid the same order, so no jacobi 2D grid depends on their scale.
TEST(ProcessGrid, The2dChoicesFollowTheRatiosOfTheFixedCosts) {
    FixedCosts scaled;
    scaled.message *= 7.0;
    scaled.packing *= 7.0;
    scaled.read_back *= 7.0;
    scaled.bandwidth /= 7.0;
    for (const char* cells : {"[16384, 16384]", "[4096, 1024]", "[1024, 4096]", "[2048, 2048]"}) {
        SCOPED_TRACE(cells);
        const Case c = make_case(kJacobi16k, {std::string("grid.cells=") + cells});
        const GridDemand d = grid_demand(c.cfg);
        for (int ranks : {2, 4, 8}) {
            auto with = [&](const FixedCosts& costs) {
                return cheapest_grid(c.dom, ranks, [&](const Grid& g) {
                    return modelled_sweep_cost(c.dom, g, d, costs);
                });
            };
            EXPECT_EQ(with(scaled), with(FixedCosts{}));
        }
    }
}

// The search: the lowest cost wins, equal costs go to the larger factors on z, then y, and a
// grid that would leave a rank without a point on some axis is never costed.
TEST(ProcessGrid, TheSearchTakesTheCheapestFittingGrid) {
    const Case c = make_case("[grid]\ncells = [64, 64, 3]\n");
    std::vector<Grid> costed;
    auto table = [&](const Grid& g) {
        costed.push_back(g);
        return g == Grid{2, 2, 1} ? 1.0 : 2.0;
    };
    EXPECT_EQ(cheapest_grid(c.dom, 4, table), (Grid{2, 2, 1}));
    for (const Grid& g : costed) EXPECT_LE(g[2], 3) << "a z split of 4 planes over 3 points";
    EXPECT_EQ(cheapest_grid(c.dom, 4, [](const Grid&) { return 1.0; }), (Grid{1, 2, 2}));
    EXPECT_EQ(cheapest_grid(c.dom, 3, [](const Grid&) { return 1.0; }), (Grid{1, 1, 3}));
}

// The measured sizes below which 2 GPUs were slower than one: a grid of one rank never is; the
// largest block (the first blocks take the remainder points) decides.
TEST(ProcessGrid, SmallSubdomainsAreFlaggedByTheirLargestBlock) {
    const Case d2 = make_case("[grid]\ncells = [2048, 2048]\n");
    EXPECT_EQ(largest_block_points(d2.dom, {1, 2, 1}), std::int64_t{1} << 21);
    EXPECT_TRUE(below_paying_size(d2.dom, {1, 2, 1}));
    EXPECT_FALSE(below_paying_size(d2.dom, {1, 1, 1}));
    const Case big2 = make_case("[grid]\ncells = [4096, 4096]\n");
    EXPECT_FALSE(below_paying_size(big2.dom, {1, 2, 1}));
    EXPECT_EQ(largest_block_points(big2.dom, {1, 3, 1}), std::int64_t{4096} * 1366);
    const Case d3 = make_case("[grid]\ncells = [128, 128, 128]\n");
    EXPECT_FALSE(below_paying_size(d3.dom, {1, 1, 2}));  // 2^20 points each
    EXPECT_FALSE(below_paying_size(d3.dom, {1, 1, 4}));  // 2^19
    const Case small3 = make_case("[grid]\ncells = [64, 64, 64]\n");
    EXPECT_TRUE(below_paying_size(small3.dom, {1, 1, 2}));  // 2^17
}

// On GPUs with the grid chosen, a run whose blocks would be at most the measured crossover (2D
// 2^21 points per GPU, 3D 2^17) uses the most ranks whose blocks hold more on average, or one:
// the sizes measured slower on more GPUs run on fewer. Elsewhere every launched rank runs, and
// parallel.ranks_used decides where set.
TEST(RanksUsed, SmallGridsRunOnTheRanksThatPay) {
    const Case j2048 = make_case("[grid]\ncells = [2048, 2048]\n");
    EXPECT_EQ(ranks_to_use(j2048.cfg, j2048.dom, 2, true), 1);   // 2^21 per GPU at 2
    EXPECT_EQ(ranks_to_use(j2048.cfg, j2048.dom, 4, true), 1);   // 2^20 at 4, 2^22 / 3 at 3
    EXPECT_EQ(ranks_to_use(j2048.cfg, j2048.dom, 4, false), 4);  // the CPU backend
    const Case j4096 = make_case("[grid]\ncells = [4096, 4096]\n");
    EXPECT_EQ(ranks_to_use(j4096.cfg, j4096.dom, 4, true), 4);  // 2^22 per GPU
    EXPECT_EQ(ranks_to_use(j4096.cfg, j4096.dom, 8, true), 7);  // 8: 2^21; 7: 4096 x 586 each
    const Case j4096x2048 = make_case("[grid]\ncells = [4096, 2048]\n");
    EXPECT_EQ(ranks_to_use(j4096x2048.cfg, j4096x2048.dom, 4, true), 3);
    const Case h64 = make_case("[grid]\ncells = [64, 64, 64]\n");
    EXPECT_EQ(ranks_to_use(h64.cfg, h64.dom, 2, true), 1);  // 2^17 per GPU
    const Case h128 = make_case("[grid]\ncells = [128, 128, 128]\n");
    EXPECT_EQ(ranks_to_use(h128.cfg, h128.dom, 4, true), 4);    // 2^19 per GPU
    EXPECT_EQ(ranks_to_use(h128.cfg, h128.dom, 16, true), 15);  // 2^17 at 16
    EXPECT_EQ(ranks_to_use(j2048.cfg, j2048.dom, 1, true), 1);
    EXPECT_EQ(ranks_to_use(j4096.cfg, j4096.dom, 1 << 12, true), 7);  // no search over counts
}

TEST(RanksUsed, TheDeckDecidesWhereItSetsTheCountOrTheGrid) {
    const Case set = make_case("[grid]\ncells = [2048, 2048]\n[parallel]\nranks_used = 3\n");
    EXPECT_EQ(ranks_to_use(set.cfg, set.dom, 4, true), 3);
    EXPECT_EQ(ranks_to_use(set.cfg, set.dom, 4, false), 3);
    const Case grid =
        make_case("[grid]\ncells = [2048, 2048]\n[parallel]\nprocess_grid = [2, 2]\n");
    EXPECT_EQ(ranks_to_use(grid.cfg, grid.dom, 4, true), 4);
    const Case partial =
        make_case("[grid]\ncells = [64, 64, 64]\n[parallel]\nprocess_grid = [0, 0, 2]\n");
    EXPECT_EQ(ranks_to_use(partial.cfg, partial.dom, 2, true), 2);
    const Case autom = make_case("[grid]\ncells = [64, 64]\n[parallel]\nranks_used = \"auto\"\n");
    EXPECT_EQ(autom.cfg.ranks_used, 0);
    EXPECT_EQ(ranks_to_use(autom.cfg, autom.dom, 2, true), 1);
}
