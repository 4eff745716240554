// Temporal blocking (parallel.time_block = k): k sweeps between halo exchanges over k-deep halos
// must give bitwise the fields, the residual history and the stop sweep of k = 1 on the same
// process grid, for every deck kind (Dirichlet faces and edges, the benchmark's mirror rows,
// periodic axes, mixed), float and double, step counts k does not divide, k up to 16 (on CUDA
// several passes over memory between two exchanges), on 1, 2 and 4 ranks,
// with every overlap mode ("auto" on several ranks times the exchanging pass split and fused at
// start-up, and takes the faster); subdomains thinner than k are refused with a message that
// names the key.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>

#include "config/config.hpp"
#include "mesh/domain.hpp"
#include "support/mpi_helpers.hpp"

using namespace gridsim;

namespace {

struct Case {
    const char* name;
    std::string deck;
    std::vector<std::vector<int>> grids;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

int product(const std::vector<int>& g) {
    int p = 1;
    for (int v : g) p *= v;
    return p;
}

const std::vector<std::vector<int>> k3D = {{1, 1, 1}, {2, 1, 1}, {1, 1, 2}, {2, 2, 1}, {1, 2, 2}};
const std::vector<std::vector<int>> k2D = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 1}};

const std::vector<Case> kCases = {
    {"heat3d_dirichlet_sine", "[grid]\ncells = [19, 17, 18]\n[time]\nsteps = 23\n", k3D},
    {"heat3d_periodic_hotspot_float",
     "[problem]\nprecision = \"float\"\n[grid]\ncells = [18, 17, 19]\n[boundary]\nkind = "
     "\"periodic\"\n[initial]\nkind = \"hotspot\"\nradius = 0.3\n[time]\nsteps = 21\n",
     k3D},
    {"heat2d_mixed_faces",
     "[grid]\ncells = [37, 33]\n[boundary]\nx = \"periodic\"\nface_values = [0, 0, 1.5, -0.5]\n"
     "[initial]\nkind = \"hotspot\"\ncenter = [0.2, 0.6]\n[time]\nsteps = 29\n",
     k2D},
    {"jacobi2d_benchmark_float",
     "[problem]\nname = \"jacobi\"\n[grid]\ncells = [38, 36]\n[boundary]\nkind = \"benchmark\"\n"
     "[time]\nsteps = 31\nnorm_every = 1\n",
     k2D},
    {"jacobi2d_benchmark_double",
     "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [35, 38]\n"
     "[boundary]\nkind = \"benchmark\"\n[time]\nsteps = 27\nnorm_every = 4\n",
     k2D},
    {"jacobi3d_residual_every_sweep",
     "[problem]\nname = \"jacobi\"\n[grid]\ncells = [17, 18, 19]\n[boundary]\nface_values = "
     "[0, 1, 0, -1, 2, 0]\n[time]\nsteps = 13\nnorm_every = 1\n",
     k3D},
    {"jacobi3d_face_values",
     "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [18, 17, 19]\n"
     "[boundary]\nface_values = [1, 2, 3, 4, 5, 6]\n[time]\nsteps = 19\nnorm_every = 3\n",
     k3D},
};

class TimeBlock : public testing::TestWithParam<Case> {};

std::size_t differing(const std::vector<double>& a, const std::vector<double>& b) {
    std::size_t n = 0;
    for (std::size_t p = 0; p < a.size(); ++p) n += a[p] != b[p] ? 1 : 0;
    return n;
}

// Runs `deck` (a converging jacobi deck) at k = 1 and k = 3, 5, 8 on every rank: the same stop
// sweep, residual history and field.
void check_stop_sweep(const std::string& deck) {
    SCOPED_TRACE(deck);
    const int n = test::world_size();
    const RunResult one = test::run_on_ranks(n, deck, {"parallel.time_block=1"});
    ASSERT_TRUE(one.converged);
    ASSERT_LT(one.steps, 5000);
    for (int k : {3, 5, 8}) {
        const RunResult r = test::run_on_ranks(n, deck, {fmt::format("parallel.time_block={}", k)});
        SCOPED_TRACE(fmt::format("time_block {}", k));
        EXPECT_TRUE(r.converged);
        EXPECT_EQ(r.steps, one.steps);
        EXPECT_EQ(r.residual_history, one.residual_history);
        if (test::world_rank() == 0) EXPECT_EQ(differing(r.global_field, one.global_field), 0u);
    }
}

}  // namespace

TEST_P(TimeBlock, FieldsAndResidualsAreBitwiseThoseOfOneSweepPerExchange) {
    const Case& c = GetParam();
    int deep_runs = 0;  // with halos deeper than 8, where the subdomains take them
    for (const auto& grid : c.grids) {
        const int n = product(grid);
        if (n > test::world_size()) continue;
        const std::string pg = fmt::format("parallel.process_grid=[{}]", fmt::join(grid, ","));
        const RunResult one = test::run_on_ranks(n, c.deck, {pg, "parallel.time_block=1"});
        // "fused" runs every sweep as one launch, then the halos, on ranks with a neighbour on
        // another rank too, where "auto" splits a sweep of one exchange: the shell's phase
        // (timed on every pass on the CPU) is empty and not. At k = 1 only, where no ring of a
        // deeper halo is updated in that phase; heat decks only, as a residual sweep splits where
        // the backend cannot keep its partials in one launch.
        if (n > 1 && c.deck.find("jacobi") == std::string::npos) {
            const RunResult fused = test::run_on_ranks(
                n, c.deck, {pg, "parallel.time_block=1", "parallel.overlap=\"fused\""});
            const int shell = static_cast<int>(Phase::boundary);
            if (test::world_rank() == 0) {  // one of the run's ranks wherever n < world size
                EXPECT_EQ(fused.phases[shell], 0.0) << "\"fused\": a shell ran on its own";
                EXPECT_GT(one.phases[shell], 0.0) << "\"auto\": no shell ran on its own";
                EXPECT_EQ(differing(fused.global_field, one.global_field), 0u);
            }
        }
        for (int k : {2, 3, 4, 5, 6, 7, 8, 12, kMaxTimeBlock}) {
            for (const char* overlap : {"true", "false", "\"auto\"", "\"fused\""}) {
                // Blocks deeper than 8 take the exchanging pass's paths of the shallower ones:
                // the split and the trial (which may take the fused pass) suffice there.
                const std::string mode = overlap;
                if (k > 8 && (mode == "false" || mode == "\"fused\"")) continue;
                // Every subdomain takes halos 8 deep; a deeper one is refused where a subdomain
                // is thinner (TimeBlockThinSubdomains).
                if (k > 8 && !test::takes_halos(c.deck, n, k, {pg})) break;
                const RunResult r =
                    test::run_on_ranks(n, c.deck,
                                       {pg, fmt::format("parallel.time_block={}", k),
                                        fmt::format("parallel.overlap={}", overlap)});
                if (k > 8) ++deep_runs;
                if (test::world_rank() != 0) continue;
                SCOPED_TRACE(fmt::format("process grid {} time_block {} overlap {}",
                                         fmt::join(grid, "x"), k, overlap));
                EXPECT_EQ(r.time_block, k);
                EXPECT_EQ(r.steps, one.steps);
                ASSERT_EQ(r.global_field.size(), one.global_field.size());
                EXPECT_EQ(differing(r.global_field, one.global_field), 0u)
                    << "points that differ from time_block = 1";
                EXPECT_EQ(r.residual_history, one.residual_history);
                // Sweeps that each sum their residual run as summing passes (the CPU backend
                // runs their levels one by one) with every overlap mode, on every process grid
                // (Simulation::sums_in_passes): split into the sweep's shell and interior where
                // the split pass is taken and fused where not, bitwise alike.
                const bool auto_overlap = std::string(overlap) == "\"auto\"";
                const bool summing = c.deck.find("norm_every = 1\n") != std::string::npos;
                if (summing) EXPECT_LT(r.passes, one.passes) << "no residual sweeps shared a pass";
                // "auto" on several ranks times the exchanging pass split and fused at start-up
                // and takes the faster on the slowest rank, the split where they tie; summing
                // passes only where their shell, the sweep's 8-deep one, holds the halos sent.
                const ExchangeTrial& t = r.exchange_trial;
                EXPECT_EQ(t.ran, auto_overlap && n > 1 && (!summing || k <= 8));
                if (t.ran) {
                    // A time_block the deck fixes is timed at its own depth only.
                    ASSERT_EQ(t.depths.size(), 1u);
                    const ExchangeTrial::Depth& d = t.depths[0];
                    EXPECT_EQ(d.time_block, k);
                    EXPECT_GT(d.split_seconds_per_sweep, 0.0);
                    EXPECT_GT(d.fused_seconds_per_sweep, 0.0);
                    // The CPU backend's passes write no faces first.
                    EXPECT_FALSE(t.timed_faces_first);
                    EXPECT_EQ(t.pass, d.fused_seconds_per_sweep < d.split_seconds_per_sweep
                                          ? ExchangePass::fused
                                          : ExchangePass::split);
                }
            }
        }
    }
    EXPECT_GT(deep_runs, 0) << "no process grid took halos deeper than 8";
}

INSTANTIATE_TEST_SUITE_P(Decks, TimeBlock, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

// Stars that are not plain take time blocks as passes on the CPU backend (level by level), a
// wider star's levels reflected beyond the fixed faces: orders 4 and 8 with fixed faces of other
// values than zero beside a periodic axis, and density conduction (a coefficient field), bitwise
// those of one sweep per exchange on every process grid and overlap, in fewer passes (each
// level still a pass over memory). A block deeper than a pass's 8 levels runs a pass that
// exchanges nothing first (its reflections made by the pass, not by an exchange).
TEST(TimeBlockWiderStars, PassesAreBitwiseOneSweepPerExchange) {
    const std::vector<Case> cases = {
        {"heat3d_order4_double",
         "[problem]\norder = 4\n[grid]\ncells = [23, 21, 22]\n[boundary]\nz = \"periodic\"\n"
         "face_values = [0.5, -1, 2, 0.25, 0, 0]\n[initial]\nkind = \"hotspot\"\n"
         "center = [0.3, 0.6, 0.4]\n[time]\nsteps = 11\n",
         {{1, 1, 1}, {2, 1, 1}, {1, 2, 2}}},
        {"heat2d_order8_float",
         "[problem]\norder = 8\nprecision = \"float\"\n[grid]\ncells = [41, 39]\n[boundary]\n"
         "y = \"periodic\"\nface_values = [1, -0.5, 0, 0]\n[initial]\nkind = \"hotspot\"\n"
         "center = [0.2, 0.7]\n[time]\nsteps = 9\n",
         {{1, 1}, {2, 1}, {2, 2}}},
        {"conduction3d_double",
         "[problem]\nconductivity = \"density\"\n[grid]\ncells = [19, 18, 17]\n[initial]\n"
         "kind = \"hotspot\"\ndensity = 2.0\n[[initial.regions]]\nshape = \"box\"\n"
         "lo = [0.2, 0.1, 0.3]\nhi = [0.6, 0.5, 0.9]\ndensity = 0.25\n[time]\nsteps = 11\n",
         {{1, 1, 1}, {2, 1, 1}, {1, 2, 2}}},
    };
    int deep_runs = 0;
    for (const Case& c : cases) {
        for (const auto& grid : c.grids) {
            const int n = product(grid);
            if (n > test::world_size()) continue;
            const std::string pg = fmt::format("parallel.process_grid=[{}]", fmt::join(grid, ","));
            const RunResult one = test::run_on_ranks(n, c.deck, {pg, "parallel.time_block=1"});
            for (int k : {2, 3, 10}) {
                if (k > 8 && !test::takes_halos(c.deck, n, k, {pg})) continue;
                for (const char* overlap : {"\"auto\"", "false", "\"fused\""}) {
                    deep_runs += k > 8 ? 1 : 0;
                    const RunResult r =
                        test::run_on_ranks(n, c.deck,
                                           {pg, fmt::format("parallel.time_block={}", k),
                                            fmt::format("parallel.overlap={}", overlap)});
                    if (test::world_rank() != 0) continue;
                    SCOPED_TRACE(fmt::format("{} process grid {} time_block {} overlap {}", c.name,
                                             fmt::join(grid, "x"), k, overlap));
                    EXPECT_EQ(r.time_block, k);
                    EXPECT_EQ(r.steps, one.steps);
                    EXPECT_EQ(differing(r.global_field, one.global_field), 0u)
                        << "points that differ from time_block = 1";
                    EXPECT_LT(r.passes, one.passes) << "no sweeps shared a pass";
                    EXPECT_EQ(r.memory_passes, one.memory_passes);
                }
            }
        }
    }
    EXPECT_GT(deep_runs, 0) << "no block was deeper than a pass";
}

// A convergence test that fires inside a time block stops at exactly the sweep k = 1 stops at:
// with the residual every sweep (every sweep of the block sums its change, in passes of several
// sweeps, of which the one that converged is redone up to that sweep) and
// every third sweep (blocks of sweeps without a residual run between the residual sweeps).
// The grid's y axis holds 8 rows per rank at any rank count, so that k = 8 fits wherever the
// ranks split y alone (as they do here).
TEST(TimeBlockTolerance, StopsAtTheSameSweep) {
    const int ny = std::max(42, 8 * test::world_size() + 2);
    for (int norm_every : {1, 3}) {
        check_stop_sweep(fmt::format(
            "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [40, {}]\n"
            "[boundary]\nkind = \"benchmark\"\n[time]\nsteps = 5000\nnorm_every = {}\n"
            "tolerance = 3e-3\n",
            ny, norm_every));
    }
}

// A rank with fewer points than k on an axis cannot fill k-deep halos: every rank refuses the
// deck alike (a pure function of the deck and the process grid), naming the key.
TEST(TimeBlockThinSubdomains, AreRefusedNamingTheKey) {
    const int n = test::world_size();
    const std::string deck = fmt::format("[grid]\ncells = [{}, 7, 9]\n[time]\nsteps = 3\n", 3 * n);
    try {
        (void)test::run_on_ranks(
            n, deck, {fmt::format("parallel.process_grid=[{},1,1]", n), "parallel.time_block=5"});
        FAIL() << "3-point subdomains ran with 5-deep halos";
    } catch (const ConfigError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("parallel.time_block"), std::string::npos) << what;
        EXPECT_NE(what.find("3 per rank"), std::string::npos) << what;
    }
}

// The implicit scheme exchanges inside every CG iteration: a time block is refused at load.
TEST(TimeBlockImplicitHeat, IsRefused) {
    EXPECT_THROW((void)load_config("[problem]\nscheme = \"implicit\"\n[grid]\ncells = [8, 8, "
                                   "8]\n[parallel]\ntime_block = 2\n",
                                   "t.toml", {}),
                 ConfigError);
    EXPECT_NO_THROW(
        (void)load_config("[problem]\nscheme = \"implicit\"\n[grid]\ncells = [8, 8, "
                          "8]\n[parallel]\ntime_block = \"auto\"\n",
                          "t.toml", {}));
}
