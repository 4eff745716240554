// The CUDA backend's passes of several sweeps: the 3D levels kernel, the summing passes (a
// residual every sweep) and blocks deeper than a pass, each bitwise one sweep per pass, and what
// "auto" chooses from its trials. Ranks may share a GPU here (parallel.share_gpus).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/simulation.hpp"
#include "gpu/gpu_test_support.hpp"
#include "gpu/require_gpu.hpp"
#include "platform/backend_select.hpp"
#include "problems/problem.hpp"
#include "support/mpi_helpers.hpp"

using namespace gridsim;
using namespace gridsim::test;

// The 3D levels kernel over boxes of several tiles along x and y (a tile writes 32 V - 2k
// columns and 48 - 2k rows) and chunks along z (level_chunk_rows: on a GPU of 132
// multiprocessors the 280 x 270 x 120 deck has fewer tiles than multiprocessors, the
// 512 x 650 x 128 one a few more at k = 3, in several waves of chunks), and "auto": a start-up
// trial of k = 2..4 where the x-y cross-section has at least 128^2 points (2D: 2..8), else 1
// sweep per pass. Fields and norms bitwise those of k = 1 at k = 2, 3 and 4; "auto" takes the
// fastest k of the trial it reports.
TEST(GpuLevels3d, AutoAndTilesAreBitwiseOneSweepPerPass) {
    GRIDSIM_REQUIRE_GPU();
    struct Case {
        const char* deck;
        std::vector<int> trial;  // the candidates "auto" times, none: it takes k = 1
    };
    const std::vector<Case> cases = {
        {"[grid]\ncells = [131, 133, 9]\n[time]\nsteps = 13\n", {2, 3, 4}},
        {"[problem]\nprecision = \"float\"\n[grid]\ncells = [137, 129, 10]\n[boundary]\nkind = "
         "\"periodic\"\n[initial]\nkind = \"hotspot\"\nradius = 0.3\n[time]\nsteps = 14\n",
         {2, 3, 4}},
        {"[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [70, 240, 6]\n"
         "[boundary]\nface_values = [1, 2, 3, 4, 5, 6]\n[time]\nsteps = 11\n",
         {2, 3, 4}},
        {"[grid]\ncells = [100, 100, 12]\n[time]\nsteps = 10\n", {}},
        {"[grid]\ncells = [280, 270, 120]\n[time]\nsteps = 12\n", {2, 3, 4}},
        {"[problem]\nname = \"jacobi\"\nprecision = \"float\"\n[grid]\ncells = [512, 650, 128]\n"
         "[boundary]\nface_values = [1, 2, 3, 4, 5, 6]\n[time]\nsteps = 12\n",
         {2, 3, 4}},
        {"[problem]\nname = \"jacobi\"\n[grid]\ncells = [300, 200]\n[boundary]\nkind = "
         "\"benchmark\"\n[time]\nsteps = 17\nnorm_every = 5\n",
         {2, 3, 4, 5, 6, 7, 8}},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.deck);
        const RunResult one = test::run_on_ranks(1, c.deck + kGpu, {"parallel.time_block=1"});
        EXPECT_TRUE(one.time_block_trial.empty());
        for (const char* k : {"2", "3", "4", "\"auto\""}) {
            const RunResult r =
                test::run_on_ranks(1, c.deck + kGpu, {fmt::format("parallel.time_block={}", k)});
            if (test::world_rank() != 0) continue;
            SCOPED_TRACE(fmt::format("time_block {}", k));
            if (k[0] != '"') {
                EXPECT_EQ(r.time_block, std::stoi(k));
                EXPECT_TRUE(r.time_block_trial.empty());
            } else {
                expect_fastest_of(r, c.trial);
            }
            EXPECT_EQ(count_differences(r.global_field, one.global_field), 0u);
            EXPECT_EQ(r.residual_history, one.residual_history);
            EXPECT_EQ(r.final_norm, one.final_norm);
        }
    }
}

// Passes that write the faces first (overlap "faces_first": the blocks that write a point an
// exchange reads go first, and the exchange waits only for them, beside the rest of the pass) at
// k = 2, 3 and 4: fields and norms bitwise those of k = 1 on the same ranks. On one rank with no
// face read, with one periodic axis copied into its own halos, and with every axis periodic; on
// this run's ranks split along each axis and (4 ranks) on 2x2 grids, through the automatic
// transport, and staged and NCCL where the ranks can. Every deck has several tiles and chunks on
// every axis, so that blocks that write no face run after the face blocks.
TEST(GpuFacesFirst, PassesThatWriteTheFacesFirstAreBitwiseOneSweepPerPass) {
    GRIDSIM_REQUIRE_GPU();
    const std::string heat =
        "[grid]\ncells = [150, 140, 96]\n[initial]\nkind = \"hotspot\"\nradius = 0.3\n"
        "[time]\nsteps = 13\n";
    const std::vector<std::string> decks = {
        heat,
        heat + "[boundary]\nkind = \"periodic\"\n",
        "[problem]\nname = \"jacobi\"\nprecision = \"float\"\n[grid]\ncells = [200, 100, 90]\n"
        "[boundary]\nz = \"periodic\"\nface_values = [1, 2, 3, 4, 5, 6]\n[time]\nsteps = 11\n"
        "norm_every = 5\n",
    };
    const int n = test::world_size();
    std::vector<Split> splits = {{1, "[1,1,1]", "\"auto\""}};
    if (n > 1) {
        for (const char* grid : {"[1,1,{}]", "[1,{},1]", "[{},1,1]"})
            splits.push_back({n, fmt::format(fmt::runtime(grid), n), "\"auto\""});
        if (n == 4) {
            for (const char* grid : {"[1,2,2]", "[2,2,1]"}) splits.push_back({n, grid, "\"auto\""});
        }
        splits.push_back({n, fmt::format("[1,1,{}]", n), "\"staged\""});
        if (every_rank_has_its_own_gpu())
            splits.push_back({n, fmt::format("[1,1,{}]", n), "\"nccl\""});
    }
    for (const std::string& deck : decks) {
        for (const Split& s : splits) {
            SCOPED_TRACE(fmt::format("{}{} rank(s) on {}, transport {}", deck, s.ranks, s.grid,
                                     s.transport));
            const RunResult one = run_split(deck, s, "1", "true");
            for (const char* k : {"2", "3", "4"}) {
                const RunResult r = run_split(deck, s, k, "\"faces_first\"");
                if (test::world_rank() != 0) continue;
                SCOPED_TRACE(fmt::format("time_block {}", k));
                EXPECT_EQ(r.time_block, std::stoi(k));
                EXPECT_LT(r.passes, one.passes) << "no sweeps shared a pass";
                EXPECT_EQ(count_differences(r.global_field, one.global_field), 0u);
                EXPECT_EQ(r.residual_history, one.residual_history);
                EXPECT_EQ(r.final_norm, one.final_norm);
            }
        }
    }
}

// A residual every sweep in passes of several sweeps (the levels kernel summing every level as
// the stream kernel sums that sweep, partial for partial): fields, residual histories and the
// stop sweep bitwise those of one sweep per pass, with overlap "auto", on one rank and on this
// run's ranks split along y (each level's sum added over the ranks on the host, as a sweep's:
// transports staged, ipc and nccl, at every rank count). On several ranks "auto" times the
// exchanging pass split (the sweep's shell slabs, then the halos beside the interior) against
// fused, and overlap = true always splits it: both launch one layout's partials from two lanes.
// The decks cover interiors that sum 8 rows per thread (2^21 points or more) and 4, float
// interiors summed in blocks of 32 x 2 threads (2^23 points or more on every rank) beside shell
// slabs in 32 x 4, widths off the 16-byte packs, the benchmark's periodic rows (shell slabs summed
// before the interior) and Dirichlet faces, float and double, and a tolerance met inside a pass;
// "auto" times one sweep per pass (on one rank replayed from recordings where the run records its
// residual sweeps) against summing passes of 2 to 4 sweeps, and takes the fastest it reports.
TEST(GpuSummingPasses, ResidualEverySweepIsBitwiseOneSweepPerPass) {
    GRIDSIM_REQUIRE_GPU();
    const std::vector<std::string> decks = {
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [1530, 1450]\n[boundary]\nkind = "
        "\"benchmark\"\n[time]\nsteps = 37\nnorm_every = 1\n",
        "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [1530, 1450]\n"
        "[boundary]\nkind = \"benchmark\"\n[time]\nsteps = 23\nnorm_every = 1\n",
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [2100, 16400]\n[boundary]\nkind = "
        "\"benchmark\"\n[time]\nsteps = 11\nnorm_every = 1\n",
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [301, 123]\n[boundary]\nkind = "
        "\"benchmark\"\n[time]\nsteps = 29\nnorm_every = 1\n",
        "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [517, 260]\n"
        "[boundary]\nface_values = [1, 2, 3, 4]\n[time]\nsteps = 31\nnorm_every = 1\n",
        "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [200, 180]\n"
        "[boundary]\nkind = \"benchmark\"\n[time]\nsteps = 5000\nnorm_every = 1\n"
        "tolerance = 3e-3\n",
    };
    struct Ranks {
        int n;
        const char* transport;
    };
    std::vector<Ranks> runs = {{1, "\"auto\""}};
    if (test::world_size() > 1) {
        for (const char* t : {"\"staged\"", "\"ipc\""}) runs.push_back({test::world_size(), t});
        if (every_rank_has_its_own_gpu()) runs.push_back({test::world_size(), "\"nccl\""});
    }
    for (const std::string& deck : decks) {
        for (const Ranks& on : runs) {
            SCOPED_TRACE(fmt::format("{}{} rank(s), transport {}", deck, on.n, on.transport));
            const std::vector<std::string> where = {
                fmt::format("parallel.process_grid=[1,{}]", on.n),
                fmt::format("parallel.transport={}", on.transport)};
            auto with = [&](std::vector<std::string> keys) {
                keys.insert(keys.end(), where.begin(), where.end());
                return keys;
            };
            const RunResult one =
                test::run_on_ranks(on.n, deck + kGpu, with({"parallel.time_block=1"}));
            const std::vector<int> trial = {1, 2, 3, 4};
            for (const char* k : {"2", "3", "5", "8", "\"auto\""}) {
                std::vector<std::pair<const char*, const char*>> modes = {{"off", "\"auto\""},
                                                                          {"auto", "\"auto\""}};
                if (on.n > 1 && (k[0] == '3' || k[0] == '8')) modes.push_back({"off", "true"});
                for (const auto& [graphs, overlap] : modes) {
                    const RunResult r = test::run_on_ranks(
                        on.n, deck + kGpu,
                        with({fmt::format("parallel.time_block={}", k), "parallel.phase_every=3",
                              fmt::format("parallel.graphs={}", graphs),
                              fmt::format("parallel.overlap={}", overlap)}));
                    if (test::world_rank() != 0) continue;
                    SCOPED_TRACE(
                        fmt::format("time_block {}, graphs {}, overlap {}", k, graphs, overlap));
                    if (k[0] == '"') {
                        expect_fastest_of(r, trial);
                    } else {
                        EXPECT_EQ(r.time_block, std::stoi(k));
                        EXPECT_TRUE(r.time_block_trial.empty());
                    }
                    if (r.time_block > 1)
                        EXPECT_LT(r.passes, one.passes) << "no sweeps shared a pass";
                    if (r.time_block > 1 && on.n > 1 && overlap[0] == '"')
                        EXPECT_TRUE(r.exchange_trial.ran) << "the summing pass was not timed";
                    EXPECT_EQ(r.steps, one.steps);
                    EXPECT_EQ(r.converged, one.converged);
                    EXPECT_EQ(count_differences(r.global_field, one.global_field), 0u);
                    EXPECT_EQ(r.residual_history, one.residual_history);
                }
            }
        }
    }
}

// Summing passes where a rank's sweep has x faces: a periodic x on one rank, and this run's ranks
// split along x (and 2 x 2 on four ranks). The faces' strips, 8 columns and narrower than a warp
// of packs, are summed apart from the middle columns (where the y faces' slabs and the interior
// are row slabs of the same columns), one launch of the pass per column range. Fields, residual
// histories and the stop sweep bitwise those of one sweep per pass at k = 2, 3 and 8, overlap
// "auto", true (the pass split into the sweep's shell and interior) and off, through the staged
// and ipc transports, float and double, widths off the packs; the passes share sweeps. A check
// every 20 steps ends blocks there, so that some passes are shorter than the halos and run into
// them without an exchange (at k = 8: 20 = 2 x 8 + 4), x halos included.
TEST(GpuSummingPasses, RanksThatSplitXAreBitwiseOneSweepPerPass) {
    GRIDSIM_REQUIRE_GPU();
    const std::vector<std::string> decks = {
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [701, 300]\n[boundary]\nkind = "
        "\"periodic\"\n[initial]\nkind = \"hotspot\"\nradius = 0.3\n[time]\nsteps = 19\n"
        "norm_every = 1\n",
        "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [517, 260]\n"
        "[boundary]\nx = \"periodic\"\nface_values = [1, 2, 3, 4]\n[time]\nsteps = 17\n"
        "norm_every = 1\n",
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [1030, 650]\n[boundary]\nkind = "
        "\"benchmark\"\n[time]\nsteps = 400\nnorm_every = 1\ntolerance = 1e-2\n[output]\n"
        "check_every = 20\n",
    };
    const int n = test::world_size();
    std::vector<std::string> grids = {"[1,1]"};
    if (n > 1) grids.push_back(fmt::format("[{},1]", n));
    if (n == 4) grids.push_back("[2,2]");
    for (const std::string& deck : decks) {
        for (const std::string& grid : grids) {
            const int ranks = grid == "[1,1]" ? 1 : n;
            for (const char* transport : {"\"staged\"", "\"ipc\""}) {
                if (ranks == 1 && transport[1] == 'i') continue;
                SCOPED_TRACE(fmt::format("{}grid {}, transport {}", deck, grid, transport));
                auto run = [&](const std::string& k, const char* overlap) {
                    return test::run_on_ranks(
                        ranks, deck + kGpu,
                        {"parallel.process_grid=" + grid,
                         fmt::format("parallel.transport={}", transport),
                         "parallel.time_block=" + k, fmt::format("parallel.overlap={}", overlap),
                         "parallel.graphs=\"off\""});
                };
                const RunResult one = run("1", "\"auto\"");
                for (const auto& [k, overlap] : std::vector<std::pair<const char*, const char*>>{
                         {"2", "false"}, {"3", "\"auto\""}, {"3", "true"}, {"8", "true"}}) {
                    const RunResult r = run(k, overlap);
                    if (test::world_rank() != 0) continue;
                    SCOPED_TRACE(fmt::format("time_block {}, overlap {}", k, overlap));
                    EXPECT_EQ(r.time_block, std::stoi(k));
                    EXPECT_TRUE(r.sums_in_passes);
                    EXPECT_LT(r.passes, one.passes) << "no sweeps shared a pass";
                    EXPECT_EQ(r.steps, one.steps);
                    EXPECT_EQ(count_differences(r.global_field, one.global_field), 0u);
                    EXPECT_EQ(r.residual_history, one.residual_history);
                }
            }
        }
    }
}

// A float summing pass over a box tall enough for several waves of its shortest chunks
// (sum_pass_chunk_rows: 5 tiles of 32768 rows make 128-row chunks at 3 levels on 132
// multiprocessors, 1280 blocks for 396 slots) sums what one sweep per pass sums: the same field
// and residual history, bitwise, at 3 and 4 levels.
TEST(GpuSummingPasses, ManyWavesOfShortChunksAreBitwiseOneSweepPerPass) {
    GRIDSIM_REQUIRE_GPU();
    const std::string deck =
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [4096, 32768]\n[boundary]\nkind = "
        "\"benchmark\"\n[time]\nsteps = 12\nnorm_every = 1\n";
    const RunResult one = test::run_on_ranks(1, deck + kGpu, {"parallel.time_block=1"});
    for (const char* k : {"3", "4"}) {
        const RunResult r =
            test::run_on_ranks(1, deck + kGpu, {fmt::format("parallel.time_block={}", k)});
        if (test::world_rank() != 0) continue;
        SCOPED_TRACE(fmt::format("time_block {}", k));
        EXPECT_LT(r.passes, one.passes) << "no sweeps shared a pass";
        EXPECT_EQ(count_differences(r.global_field, one.global_field), 0u);
        EXPECT_EQ(r.residual_history, one.residual_history);
    }
}

// The deep-halo test's decks, each with its process grid split along the walk axis (faces of
// long rows); z as long as 16-deep halos need over the ranks (80 points up to 5 ranks).
namespace {
struct DeepHaloCase {
    std::string deck;
    const char* split;
};
std::vector<DeepHaloCase> deep_halo_cases() {
    return {
        {"[problem]\nname = \"jacobi\"\n[grid]\ncells = [600, 301]\n[boundary]\nkind = "
         "\"benchmark\"\n[time]\nsteps = 61\nnorm_every = 7\n",
         "[1,{}]"},
        {"[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [517, 260]\n"
         "[boundary]\nface_values = [1, 2, 3, 4]\n[time]\nsteps = 45\nnorm_every = 11\n",
         "[1,{}]"},
        {fmt::format("[grid]\ncells = [140, 131, {}]\n[initial]\nkind = \"hotspot\"\nradius = "
                     "0.3\n[time]\nsteps = 29\n",
                     std::max(80, 16 * test::world_size())),
         "[1,1,{}]"},
    };
}
}  // namespace

// Halos deeper than a pass (a 2D pass takes 8 levels, a 3D one 4): blocks of up to 16 sweeps
// between exchanges run as several passes of even length (9 = 5 + 4, 14 = 7 + 7 in 2D; 12 = 4 x 3
// in 3D), bitwise the fields and residual histories of k = 1, on one rank and on all of them
// through every transport the ranks can use; and time_block "auto" on several ranks: the
// exchange trial times the pass trial's k and 2k, split and fused, and takes the fastest.
TEST(GpuDeepHalos, BlocksOfSeveralPassesAndAutoDepthAreBitwiseOneSweepPerPass) {
    GRIDSIM_REQUIRE_GPU();
    const std::vector<DeepHaloCase> cases = deep_halo_cases();
    std::vector<std::pair<int, const char*>> runs = {{1, "\"auto\""}};
    if (test::world_size() > 1) {
        runs.push_back({test::world_size(), "\"staged\""});
        if (every_rank_has_its_own_gpu()) {
            for (const char* t : {"\"nccl\"", "\"ipc\""}) runs.push_back({test::world_size(), t});
        }
    }
    for (const DeepHaloCase& c : cases) {
        for (const auto& [n, transport] : runs) {
            SCOPED_TRACE(fmt::format("{}{} rank(s), transport {}", c.deck, n, transport));
            const std::string pg = "parallel.process_grid=" + fmt::format(fmt::runtime(c.split), n);
            auto run = [&](const std::string& k) {
                return test::run_on_ranks(n, c.deck + kGpu,
                                          {pg, "parallel.transport=" + std::string(transport),
                                           "parallel.time_block=" + k});
            };
            const RunResult one = run("1");
            for (const char* k : {"9", "12", "14", "16", "\"auto\""}) {
                const RunResult r = run(k);
                if (test::world_rank() != 0) continue;
                SCOPED_TRACE(fmt::format("time_block {}", k));
                EXPECT_EQ(count_differences(r.global_field, one.global_field), 0u);
                EXPECT_EQ(r.residual_history, one.residual_history);
                EXPECT_EQ(r.steps, one.steps);
                if (k[0] != '"') {
                    EXPECT_EQ(r.time_block, std::stoi(k));
                    EXPECT_LT(r.passes, one.passes) << "no sweeps shared a pass";
                    continue;
                }
                // The pass trial's k, then (several ranks) the exchange trial's depth.
                ASSERT_FALSE(r.time_block_trial.empty());
                int k0 = r.time_block_trial[0].k;
                double fastest = r.time_block_trial[0].seconds_per_sweep;
                for (const TimeBlockTrial& t : r.time_block_trial) {
                    if (t.seconds_per_sweep < fastest) {
                        k0 = t.k;
                        fastest = t.seconds_per_sweep;
                    }
                }
                const ExchangeTrial& x = r.exchange_trial;
                if (n == 1) {
                    EXPECT_FALSE(x.ran);
                    EXPECT_EQ(r.time_block, k0);
                    continue;
                }
                ASSERT_TRUE(x.ran);
                // 3D passes also time the pass that writes the faces first, and through ipc
                // (every rank on its own GPU, split along z) passes of a pipeline.
                const bool three_d = c.deck.find("hotspot") != std::string::npos;
                const bool pipelines = three_d && std::string(transport) == "\"ipc\"";
                EXPECT_EQ(x.timed_faces_first, three_d);
                EXPECT_EQ(x.timed_pipelined, pipelines);
                std::vector<int> depths;
                int taken = 0;
                ExchangePass pass = ExchangePass::split;
                double best = std::numeric_limits<double>::infinity();
                for (const ExchangeTrial::Depth& d : x.depths) {
                    depths.push_back(d.time_block);
                    EXPECT_GT(d.split_seconds_per_sweep, 0.0);
                    EXPECT_GT(d.fused_seconds_per_sweep, 0.0);
                    EXPECT_EQ(d.faces_first_seconds_per_sweep > 0.0, three_d);
                    EXPECT_EQ(d.pipelined_seconds_per_sweep > 0.0, pipelines);
                    const std::pair<ExchangePass, double> times[] = {
                        {ExchangePass::split, d.split_seconds_per_sweep},
                        {ExchangePass::fused, d.fused_seconds_per_sweep},
                        {ExchangePass::faces_first, d.faces_first_seconds_per_sweep},
                        {ExchangePass::pipelined, d.pipelined_seconds_per_sweep}};
                    for (const auto& [p, t] : times) {
                        const bool timed = p == ExchangePass::faces_first ? three_d
                                           : p == ExchangePass::pipelined ? pipelines
                                                                          : true;
                        if (timed && t < best) {
                            best = t;
                            taken = d.time_block;
                            pass = p;
                        }
                    }
                }
                const std::vector<int> expected =
                    2 * k0 <= 16 ? std::vector<int>{k0, 2 * k0} : std::vector<int>{k0};
                EXPECT_EQ(depths, expected);
                EXPECT_EQ(r.time_block, taken);
                EXPECT_EQ(x.taken_depth().time_block, taken);
                EXPECT_EQ(x.pass, pass);
            }
        }
    }
}

// Jacobi with a residual every few sweeps and blocks of sweeps between them: without a tolerance
// nothing is undone, so the sweeps after a residual sweep run as a block while its residual is
// read; with one, the sweep after a residual sweep runs alone (a convergence undoes it), a pass
// of its own. Fields and residual histories are bitwise those of one sweep per pass either way.
TEST(GpuJacobiBlocks, WithoutAToleranceTheSweepsAfterAResidualSweepRunAsABlock) {
    GRIDSIM_REQUIRE_GPU();
    const int n = test::world_size();
    const std::string deck =
        "[problem]\nname = \"jacobi\"\nprecision = \"float\"\n[grid]\ncells = [301, 203]\n"
        "[boundary]\nvalue = 1.0\n[time]\nsteps = 20\nnorm_every = 5\n[output]\n"
        "progress_every = 0\n" +
        kGpu;
    const std::vector<std::string> sets = {fmt::format("parallel.process_grid=[1,{}]", n),
                                           "parallel.transport=\"staged\""};
    auto run = [&](const char* block, const char* tolerance) {
        std::vector<std::string> s = sets;
        s.push_back(std::string("parallel.time_block=") + block);
        s.push_back(std::string("time.tolerance=") + tolerance);
        return test::run_on_ranks(n, deck, s);
    };
    const RunResult one = run("1", "0");
    const RunResult free_blocks = run("4", "0");
    const RunResult undoable = run("4", "1e-30");
    if (test::world_rank() != 0) return;
    EXPECT_EQ(one.passes, 20);
    EXPECT_LT(free_blocks.passes, undoable.passes) << "a sweep after a residual sweep ran alone";
    EXPECT_LT(undoable.passes, one.passes) << "no sweeps shared a pass";
    for (const RunResult* r : {&free_blocks, &undoable}) {
        EXPECT_EQ(r->steps, 20);
        EXPECT_EQ(count_differences(r->global_field, one.global_field), 0u);
        EXPECT_EQ(r->residual_history, one.residual_history);
    }
    EXPECT_EQ(one.residual_history.size(), 4u);
}
