// The CUDA backend against the CPU backend and against itself. Every test first decides
// collectively whether every rank sees a GPU, and all ranks skip together if not (CI has none).
//  - GPU vs CPU: whole fields agree to a stated tolerance, not bitwise: nvcc contracts
//    a*b + c into fused multiply-adds (one rounding instead of two), the host compiler does not.
//  - kernel variants (stream, tiled, naive), overlap on vs off, 1 vs 2 vs 4 ranks: bitwise
//    identical on the GPU.
//  - the fused jacobi residual: equal to the stand-alone pass to rounding, and bitwise the
//    same on a rerun.
//  - a field staged for output while the sweeps go on: the state of its step, bitwise.
// Ranks may share a GPU here (parallel.share_gpus), so the suite runs on one-GPU hosts too.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/simulation.hpp"
#include "gpu/require_gpu.hpp"
#include "platform/backend_select.hpp"
#include "problems/problem.hpp"
#include "support/mpi_helpers.hpp"

using namespace gridsim;

namespace {

struct Deck {
    const char* name;
    std::string text;
    double tolerance;  // GPU vs CPU, relative to max |u|
};

void PrintTo(const Deck& d, std::ostream* os) { *os << d.name; }

const std::string kGpu = "[parallel]\nbackend = \"cuda\"\nshare_gpus = true\n";

// Sizes off every block shape, Dirichlet, periodic and mixed faces, both problems, 2D and 3D,
// float and double. Each axis that 4 ranks may split updates at least 32 points, so every time
// block the tests try (up to 8) decomposes on 1, 2 and 4 ranks.
const std::vector<Deck> kDecks = {
    {"heat2d_double",
     "[grid]\ncells = [37, 35]\n[boundary]\nx = \"periodic\"\n[initial]\nkind = "
     "\"hotspot\"\n[time]\nsteps = 30\n",
     1e-12},
    {"heat3d_double",
     "[grid]\ncells = [37, 29, 19]\n[initial]\nmodes = [1, 2, 1]\n[time]\nsteps = 25\n", 1e-12},
    {"heat3d_float_periodic",
     "[problem]\nprecision = \"float\"\n[grid]\ncells = [33, 34, 35]\n[boundary]\nkind = "
     "\"periodic\"\n"
     "[initial]\nkind = \"hotspot\"\nradius = 0.3\n[time]\nsteps = 25\n",
     2e-5},
    {"jacobi2d_benchmark_float",
     "[problem]\nname = \"jacobi\"\n[grid]\ncells = [45, 38]\n[boundary]\nkind = \"benchmark\"\n"
     "[time]\nsteps = 40\nnorm_every = 10\n",
     2e-5},
    // Wide enough (x >= 128 floats, 64 doubles) for the stream kernel's 16-byte packs, with
    // x ranges that start and end off a pack boundary.
    {"jacobi2d_wide_float",
     "[problem]\nname = \"jacobi\"\n[grid]\ncells = [301, 23]\n[boundary]\nkind = "
     "\"benchmark\"\n[time]\nsteps = 20\nnorm_every = 5\n",
     2e-5},
    // A residual every sweep over several tiles of the summing pass's x layout (PackGroups:
    // 252 float packs, 120 double packs apart, idle ring lanes between them).
    {"jacobi2d_tiles_float",
     "[problem]\nname = \"jacobi\"\n[grid]\ncells = [2101, 19]\n[boundary]\nkind = "
     "\"benchmark\"\n[time]\nsteps = 12\nnorm_every = 1\n",
     2e-5},
    {"jacobi2d_tiles_double",
     "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [1001, 19]\n"
     "[boundary]\nface_values = [1, 2, 3, 4]\n[time]\nsteps = 12\nnorm_every = 1\n",
     1e-12},
    {"heat3d_wide_double",
     "[grid]\ncells = [135, 9, 11]\n[initial]\nkind = \"hotspot\"\nradius = 0.4\n[time]\nsteps = "
     "15\n",
     1e-12},
    {"jacobi3d_double",
     "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [37, 35, 34]\n"
     "[boundary]\nface_values = [1, 2, 3, 4, 5, 6]\n[time]\nsteps = 30\n",
     1e-12},
};

std::vector<double> field(const std::string& deck, std::vector<std::string> sets, int ranks = 1) {
    return test::run_on_ranks(ranks, deck, sets).global_field;
}

double max_abs(const std::vector<double>& v) {
    double m = 0.0;
    for (double x : v) m = std::max(m, std::abs(x));
    return m;
}

std::size_t count_differences(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return std::max(a.size(), b.size());
    std::size_t n = 0;
    for (std::size_t p = 0; p < a.size(); ++p) n += a[p] != b[p] ? 1 : 0;  // NaN differs too
    return n;
}

class GpuDeck : public testing::TestWithParam<Deck> {};

}  // namespace

TEST_P(GpuDeck, AgreesWithTheCpuBackend) {
    GRIDSIM_REQUIRE_GPU();
    const Deck& d = GetParam();
    const auto cpu = field(d.text, {"parallel.backend=cpu"});
    const auto gpu = field(d.text + kGpu, {});
    if (test::world_rank() != 0) return;
    ASSERT_EQ(cpu.size(), gpu.size());
    double worst = 0.0;
    for (std::size_t p = 0; p < cpu.size(); ++p) worst = std::max(worst, std::abs(gpu[p] - cpu[p]));
    EXPECT_LE(worst, d.tolerance * std::max(1.0, max_abs(cpu))) << "max |gpu - cpu|";
    EXPECT_GT(max_abs(cpu), 0.0);
}

// Every variant, block shape (thin shapes included) and walk length against naive rows 1.
TEST_P(GpuDeck, AllKernelVariantsAreBitwiseIdentical) {
    GRIDSIM_REQUIRE_GPU();
    const Deck& d = GetParam();
    const auto reference =
        field(d.text + kGpu, {"parallel.kernel=naive", "parallel.rows_per_thread=1"});
    for (const char* block : {"[0, 0]", "[16, 4]", "[1, 32]"}) {
        for (const char* kernel : {"stream", "tiled", "naive"}) {
            for (int points : {1, 3, 16}) {
                if (std::string(kernel) == "naive" && points == 3) continue;  // 1, 2, 4, 8 only
                if (std::string(kernel) == "naive" && points == 16) points = 4;
                const auto got =
                    field(d.text + kGpu, {fmt::format("parallel.kernel={}", kernel),
                                          fmt::format("parallel.block={}", block),
                                          fmt::format("parallel.rows_per_thread={}", points)});
                if (test::world_rank() == 0)
                    EXPECT_EQ(count_differences(got, reference), 0u)
                        << kernel << ", block " << block << ", points " << points;
            }
        }
    }
}

// overlap on, off, auto (one launch per sweep where no face goes to another rank: at one
// rank always, with its periodic self-copy, on the GPU with the residual's partials of the
// split) and fused (one launch, then the halos, on every rank), at one rank and at all:
// bitwise the same fields and residual histories.
TEST_P(GpuDeck, OverlapOnOffAutoAndFusedAreBitwiseIdentical) {
    GRIDSIM_REQUIRE_GPU();
    const Deck& d = GetParam();
    for (int n : {1, test::world_size()}) {
        const RunResult on = test::run_on_ranks(n, d.text + kGpu, {"parallel.overlap=true"});
        for (const char* mode : {"false", "\"auto\"", "\"fused\""}) {
            const RunResult r =
                test::run_on_ranks(n, d.text + kGpu, {fmt::format("parallel.overlap={}", mode)});
            if (test::world_rank() != 0) continue;
            SCOPED_TRACE(fmt::format("{} rank(s), overlap {}", n, mode));
            EXPECT_EQ(count_differences(r.global_field, on.global_field), 0u);
            EXPECT_EQ(r.residual_history, on.residual_history);
        }
        if (n == test::world_size()) break;
    }
}

// Sweeps in one launch (overlap "auto" at one rank: BoxSweeps::apply_boxes) against the split
// sweeps of overlap true, with a residual every sweep, recorded (the fold a dependent launch of
// the sweep) and not: a periodic walk axis copied into its halo by the sweep itself (3D z, packed
// and scalar x; 2D benchmark y, packed x); every axis periodic, where the shell's x slabs take
// the scalar kernel and the rest the packed one (two launches, then the fold); boxes that walk
// different rows per thread in one launch. Bitwise the same fields and residual histories, one
// residual per sweep.
TEST(GpuFused, OneLaunchSweepsAreBitwiseTheSplitOnes) {
    GRIDSIM_REQUIRE_GPU();
    const std::string jacobi3d =
        "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [70, 9, 21]\n"
        "[time]\nsteps = 24\nnorm_every = 1\n";
    const std::vector<std::pair<std::string, std::size_t>> decks = {
        {jacobi3d + "[boundary]\nz = \"periodic\"\nface_values = [1, 2, 3, 4, 5, 6]\n", 24},
        // Narrower than a row of packs: the scalar walk stores the periodic copy.
        {"[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [23, 17, 13]\n"
         "[time]\nsteps = 24\nnorm_every = 1\n[boundary]\nz = \"periodic\"\n"
         "face_values = [1, 2, 3, 4, 5, 6]\n",
         24},
        {jacobi3d + "[boundary]\nkind = \"periodic\"\n[initial]\nkind = \"hotspot\"\n", 24},
        {"[problem]\nname = \"jacobi\"\n[grid]\ncells = [301, 23]\n[boundary]\nkind = "
         "\"benchmark\"\n[time]\nsteps = 30\nnorm_every = 1\n",
         30},
        // An interior of more than 2^21 points: its summing launch walks twice the rows per
        // thread, the shell slabs the usual number.
        {"[problem]\nname = \"jacobi\"\n[grid]\ncells = [2050, 1040]\n[boundary]\nkind = "
         "\"benchmark\"\n[time]\nsteps = 6\nnorm_every = 1\n",
         6},
    };
    for (const auto& [deck, sweeps] : decks) {
        const RunResult split =
            test::run_on_ranks(1, deck + kGpu, {"parallel.overlap=true", "parallel.graphs=off"});
        for (const char* graphs : {"off", "on"}) {
            const RunResult fused = test::run_on_ranks(
                1, deck + kGpu,
                {fmt::format("parallel.graphs={}", graphs), "parallel.phase_every=3"});
            if (test::world_rank() != 0) continue;
            SCOPED_TRACE(deck + "graphs " + graphs);
            EXPECT_EQ(fused.residual_history.size(), sweeps);
            EXPECT_EQ(count_differences(fused.global_field, split.global_field), 0u);
            EXPECT_EQ(fused.residual_history, split.residual_history);
        }
    }
}

TEST_P(GpuDeck, OneTwoAndFourRanksAreBitwiseIdentical) {
    GRIDSIM_REQUIRE_GPU();
    const Deck& d = GetParam();
    const auto one = field(d.text + kGpu, {}, 1);
    for (int n : {2, 4}) {
        if (n > test::world_size()) continue;
        const auto many = field(d.text + kGpu, {}, n);
        if (test::world_rank() == 0) EXPECT_EQ(count_differences(many, one), 0u) << n << " ranks";
    }
}

// Whether every rank has a GPU of its own (NCCL needs that), decided collectively.
bool every_rank_has_its_own_gpu() {
    const DevicePlan plan = plan_device(MPI_COMM_WORLD);
    int mine = plan.info.device >= 0 && !plan.shared ? 1 : 0;
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
}

TEST_P(GpuDeck, NcclAndStagedAreBitwiseIdentical) {
    GRIDSIM_REQUIRE_GPU();
    const int n = test::world_size();
    if (n < 2 || !every_rank_has_its_own_gpu())
        GTEST_SKIP() << "NCCL needs 2 or more ranks with a GPU each";
    const Deck& d = GetParam();
    const auto one = field(d.text + kGpu, {}, 1);
    const auto staged = field(d.text + kGpu, {"parallel.transport=staged"}, n);
    const auto nccl = field(d.text + kGpu, {"parallel.transport=nccl"}, n);
    if (test::world_rank() != 0) return;
    EXPECT_EQ(count_differences(nccl, staged), 0u);
    EXPECT_EQ(count_differences(nccl, one), 0u);
}

// Direct peer stores (transport ipc) against NCCL (staged where ranks share a GPU): the same
// bytes land in the same halos, so the same fields, bitwise; with one-deep halos (one exchange
// of every face) and 3-deep ones (an exchange per axis, edges and corners carried), replayed as
// CUDA graphs or not. The handshake counters advance on the device, so a replay that reused a
// stale count would hang or read old halos here. The sums over the ranks go by IPC mailboxes
// (every rank reaches every other here) in rank order: with two ranks bitwise NCCL's and MPI's
// a + b, with more equal to rounding (their order is theirs). Ranks sharing a GPU time-slice it,
// so every handshake waits for the other process's turn: slow, but the same code.
TEST_P(GpuDeck, IpcIsBitwiseIdenticalToTheOtherTransports) {
    GRIDSIM_REQUIRE_GPU();
    const int n = test::world_size();
    if (n < 2) GTEST_SKIP() << "needs several ranks";
    const Deck& d = GetParam();
    const bool own = every_rank_has_its_own_gpu();
    const char* reference = own ? "nccl" : "staged";
    for (const char* k : {"1", "3"}) {
        const RunResult ref =
            test::run_on_ranks(n, d.text + kGpu,
                               {fmt::format("parallel.time_block={}", k), "parallel.graphs=off",
                                fmt::format("parallel.transport={}", reference)});
        for (const char* graphs : {"off", "on"}) {
            RunResult ipc;
            try {
                ipc = test::run_on_ranks(n, d.text + kGpu,
                                         {fmt::format("parallel.time_block={}", k),
                                          fmt::format("parallel.graphs={}", graphs),
                                          "parallel.phase_every=3", "parallel.transport=ipc"});
            } catch (const ConfigError& e) {  // thrown on every rank alike
                GTEST_SKIP() << "these GPUs do not reach each other: " << e.what();
            }
            if (test::world_rank() != 0) continue;
            SCOPED_TRACE(fmt::format("{} ranks, time_block {}, graphs {}, against {}", n, k, graphs,
                                     reference));
            EXPECT_EQ(ipc.transport, "ipc");
            EXPECT_EQ(ipc.graphs, std::string(graphs) == "on");
            EXPECT_EQ(count_differences(ipc.global_field, ref.global_field), 0u);
            ASSERT_EQ(ipc.residual_history.size(), ref.residual_history.size());
            for (std::size_t i = 0; i < ref.residual_history.size(); ++i) {
                const auto& [step, r] = ref.residual_history[i];
                EXPECT_EQ(ipc.residual_history[i].first, step);
                if (n == 2) {
                    EXPECT_EQ(ipc.residual_history[i].second, r) << "step " << step;
                } else {
                    EXPECT_NEAR(ipc.residual_history[i].second, r, 1e-13 * std::abs(r))
                        << "step " << step;
                }
            }
        }
    }
    if (!own) return;
    // A GPU each, every one reaching every other (the forced runs above succeeded with two
    // ranks): auto takes ipc.
    const RunResult automatic = test::run_on_ranks(n, d.text + kGpu, {});
    if (test::world_rank() == 0 && n == 2) EXPECT_EQ(automatic.transport, "ipc");
}

// Sweeps replayed as CUDA graphs (recorded at the second sweep of each kind; every 3rd pass runs
// unrecorded for its phase timing, so recorded and unrecorded sweeps alternate irregularly)
// against the plain path: the same fields and residual histories, bitwise. One rank records its
// periodic self-exchange; several ranks record their NCCL messages and all-reduces.
TEST_P(GpuDeck, GraphReplayIsBitwiseIdentical) {
    GRIDSIM_REQUIRE_GPU();
    const Deck& d = GetParam();
    std::vector<std::pair<int, std::string>> runs = {{1, "staged"}};
    if (test::world_size() >= 2 && every_rank_has_its_own_gpu())
        runs.push_back({test::world_size(), "nccl"});
    for (const auto& [n, transport] : runs) {
        const std::vector<std::string> common = {"parallel.transport=" + transport};
        auto with = [&](std::vector<std::string> sets) {
            sets.insert(sets.end(), common.begin(), common.end());
            return test::run_on_ranks(n, d.text + kGpu, sets);
        };
        const RunResult plain = with({"parallel.graphs=off", "parallel.phase_every=1"});
        const RunResult replayed = with({"parallel.graphs=on", "parallel.phase_every=3"});
        const RunResult auto_mode = with({});
        if (test::world_rank() != 0) continue;
        SCOPED_TRACE(fmt::format("{} rank(s), {}", n, transport));
        EXPECT_FALSE(plain.graphs);
        EXPECT_TRUE(replayed.graphs);
        EXPECT_TRUE(auto_mode.graphs);
        EXPECT_EQ(count_differences(replayed.global_field, plain.global_field), 0u);
        EXPECT_EQ(count_differences(auto_mode.global_field, plain.global_field), 0u);
        EXPECT_EQ(replayed.residual_history, plain.residual_history);
        EXPECT_EQ(auto_mode.residual_history, plain.residual_history);
    }
}

// Temporal blocking: k sweeps per halo exchange, the sweeps between residuals in one pass over
// memory (2D: the levels kernel, on shells, interiors and the halo rings; 3D: one sweep per pass
// over k-deep halos), with graphs and every overlap mode (with several ranks "auto" times the
// exchanging pass split and fused at start-up), against k = 1: the same fields and residual
// histories, bitwise, on one rank (its periodic self-exchange) and on all of them.
TEST_P(GpuDeck, TimeBlocksAreBitwiseIdentical) {
    GRIDSIM_REQUIRE_GPU();
    const Deck& d = GetParam();
    for (int n : {1, test::world_size()}) {
        const RunResult one = test::run_on_ranks(n, d.text + kGpu, {"parallel.time_block=1"});
        for (int k : {2, 3, 4, 5, 8}) {
            // Every deck takes 4-deep halos on its automatic grid of up to 4 ranks (the summing
            // pass the grid is modelled for); a deeper k only where its rows fit (a thin deck
            // split into rows).
            if (!test::takes_halos(d.text + kGpu, n, k)) {
                ASSERT_GT(k, 4) << n << " ranks";
                continue;
            }
            for (const char* graphs : {"off", "auto"}) {
                for (const char* overlap : {"true", "false", "\"auto\"", "\"fused\""}) {
                    const RunResult r = test::run_on_ranks(
                        n, d.text + kGpu,
                        {fmt::format("parallel.time_block={}", k), "parallel.phase_every=3",
                         fmt::format("parallel.graphs={}", graphs),
                         fmt::format("parallel.overlap={}", overlap)});
                    if (test::world_rank() != 0) continue;
                    SCOPED_TRACE(fmt::format("{} rank(s), time_block {}, graphs {}, overlap {}", n,
                                             k, graphs, overlap));
                    EXPECT_EQ(r.time_block, k);
                    EXPECT_EQ(count_differences(r.global_field, one.global_field), 0u);
                    EXPECT_EQ(r.residual_history, one.residual_history);
                }
            }
        }
        if (n == test::world_size()) break;
    }
}

INSTANTIATE_TEST_SUITE_P(Decks, GpuDeck, testing::ValuesIn(kDecks),
                         [](const testing::TestParamInfo<Deck>& info) { return info.param.name; });

// "auto" timed exactly `candidates` (none: it took k = 1 without a trial), in that order, and
// took the first of the fastest.
static void expect_fastest_of(const RunResult& r, const std::vector<int>& candidates) {
    std::vector<int> timed;
    int fastest = 1;
    double best = 0.0;
    for (const TimeBlockTrial& t : r.time_block_trial) {
        timed.push_back(t.k);
        EXPECT_GT(t.seconds_per_sweep, 0.0);
        if (timed.size() == 1 || t.seconds_per_sweep < best) {
            fastest = t.k;
            best = t.seconds_per_sweep;
        }
    }
    EXPECT_EQ(timed, candidates);
    EXPECT_EQ(r.time_block, fastest);
}

// The 3D levels kernel over boxes of several tiles along x and y (a tile writes 32 V - 2k
// columns and 48 - 2k rows) and chunks along z, and "auto": a start-up trial of k = 2..4 where
// the x-y cross-section has at least 128^2 points (2D: 2..8), else 1 sweep per pass. Fields
// and norms bitwise those of k = 1; "auto" takes the fastest k of the trial it reports.
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
        {"[problem]\nname = \"jacobi\"\n[grid]\ncells = [300, 200]\n[boundary]\nkind = "
         "\"benchmark\"\n[time]\nsteps = 17\nnorm_every = 5\n",
         {2, 3, 4, 5, 6, 7, 8}},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.deck);
        const RunResult one = test::run_on_ranks(1, c.deck + kGpu, {"parallel.time_block=1"});
        EXPECT_TRUE(one.time_block_trial.empty());
        for (const char* k : {"2", "4", "\"auto\""}) {
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

// A residual every sweep in passes of several sweeps (the levels kernel summing every level as
// the stream kernel sums that sweep, partial for partial): fields, residual histories and the
// stop sweep bitwise those of one sweep per pass, with overlap "auto", on one rank and on this
// run's ranks split along y (each level's sum all-reduced on the host, as a sweep's: transports
// staged and ipc, and nccl on two ranks; nccl on more runs one sweep per pass, its order being
// its own). The decks cover interiors that sum 8 rows per thread (2^21 points or more)
// and 4, widths off the 16-byte packs, the benchmark's periodic rows (shell slabs summed before
// the interior) and Dirichlet faces, float and double, and a tolerance met inside a pass;
// "auto" times one sweep per pass against summing passes of 2 to 4 sweeps from 2^21 updated
// points on one rank (the 1530 x 1450 decks), at any size on several, and takes the fastest it
// reports, and takes 1 without a trial below.
TEST(GpuSummingPasses, ResidualEverySweepIsBitwiseOneSweepPerPass) {
    GRIDSIM_REQUIRE_GPU();
    const std::vector<std::string> decks = {
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [1530, 1450]\n[boundary]\nkind = "
        "\"benchmark\"\n[time]\nsteps = 37\nnorm_every = 1\n",
        "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [1530, 1450]\n"
        "[boundary]\nkind = \"benchmark\"\n[time]\nsteps = 23\nnorm_every = 1\n",
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
            const bool sums = on.n <= 2 || std::string(on.transport) != "\"nccl\"";
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
            const std::vector<int> trial =
                sums && (on.n > 1 || deck.find("1530") != std::string::npos)
                    ? std::vector<int>{1, 2, 3, 4}
                    : std::vector<int>{};
            for (const char* k : {"2", "3", "5", "8", "\"auto\""}) {
                for (const char* graphs : {"off", "auto"}) {
                    const RunResult r = test::run_on_ranks(
                        on.n, deck + kGpu,
                        with({fmt::format("parallel.time_block={}", k), "parallel.phase_every=3",
                              fmt::format("parallel.graphs={}", graphs)}));
                    if (test::world_rank() != 0) continue;
                    SCOPED_TRACE(fmt::format("time_block {}, graphs {}", k, graphs));
                    if (k[0] == '"') {
                        expect_fastest_of(r, trial);
                    } else {
                        EXPECT_EQ(r.time_block, std::stoi(k));
                        EXPECT_TRUE(r.time_block_trial.empty());
                    }
                    if (r.time_block > 1 && sums)
                        EXPECT_LT(r.passes, one.passes) << "no sweeps shared a pass";
                    if (!sums) EXPECT_EQ(r.passes, one.passes) << "nccl summed a pass's levels";
                    EXPECT_EQ(r.steps, one.steps);
                    EXPECT_EQ(r.converged, one.converged);
                    EXPECT_EQ(count_differences(r.global_field, one.global_field), 0u);
                    EXPECT_EQ(r.residual_history, one.residual_history);
                }
            }
        }
    }
}

// Halos deeper than a pass (a 2D pass takes 8 levels, a 3D one 4): blocks of up to 16 sweeps
// between exchanges run as several passes of even length (9 = 5 + 4, 14 = 7 + 7 in 2D; 12 = 4 x 3
// in 3D), bitwise the fields and residual histories of k = 1, on one rank and on all of them
// through every transport the ranks can use; and time_block "auto" on several ranks: the
// exchange trial times the pass trial's k and 2k, split and fused, and takes the fastest.
TEST(GpuDeepHalos, BlocksOfSeveralPassesAndAutoDepthAreBitwiseOneSweepPerPass) {
    GRIDSIM_REQUIRE_GPU();
    struct Case {
        std::string deck;
        const char* split;  // the process grid, split along the walk axis (faces of long rows)
    };
    const std::vector<Case> cases = {
        {"[problem]\nname = \"jacobi\"\n[grid]\ncells = [600, 301]\n[boundary]\nkind = "
         "\"benchmark\"\n[time]\nsteps = 61\nnorm_every = 7\n",
         "[1,{}]"},
        {"[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [517, 260]\n"
         "[boundary]\nface_values = [1, 2, 3, 4]\n[time]\nsteps = 45\nnorm_every = 11\n",
         "[1,{}]"},
        {"[grid]\ncells = [140, 131, 80]\n[initial]\nkind = \"hotspot\"\nradius = 0.3\n[time]\n"
         "steps = 29\n",
         "[1,1,{}]"},
    };
    std::vector<std::pair<int, const char*>> runs = {{1, "\"auto\""}};
    if (test::world_size() > 1) {
        runs.push_back({test::world_size(), "\"staged\""});
        if (every_rank_has_its_own_gpu()) {
            for (const char* t : {"\"nccl\"", "\"ipc\""}) runs.push_back({test::world_size(), t});
        }
    }
    for (const Case& c : cases) {
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
                std::vector<int> depths;
                int taken = 0;
                bool fused = false;
                double best = std::numeric_limits<double>::infinity();
                for (const ExchangeTrial::Depth& d : x.depths) {
                    depths.push_back(d.time_block);
                    EXPECT_GT(d.split_seconds_per_sweep, 0.0);
                    EXPECT_GT(d.fused_seconds_per_sweep, 0.0);
                    for (bool f : {false, true}) {
                        const double t = f ? d.fused_seconds_per_sweep : d.split_seconds_per_sweep;
                        if (t < best) {
                            best = t;
                            taken = d.time_block;
                            fused = f;
                        }
                    }
                }
                const std::vector<int> expected =
                    2 * k0 <= 16 ? std::vector<int>{k0, 2 * k0} : std::vector<int>{k0};
                EXPECT_EQ(depths, expected);
                EXPECT_EQ(r.time_block, taken);
                EXPECT_EQ(x.taken_depth().time_block, taken);
                EXPECT_EQ(x.fused, fused);
            }
        }
    }
}

// Implicit heat (CG): the GPU's cuBLAS sequence and its fused kernels each agree with the CPU
// backend within the CG tolerance, 2D and 3D, float and double, at this run's rank count (the
// ranks share the GPUs when there are fewer), NCCL included where every rank has a GPU, its
// sums all-reduced both on the device (NCCL) and on the host (MPI).
struct ImplicitDeck {
    const char* name;
    std::string text;
    double tolerance;  // GPU vs CPU, relative to max |u|
};

void PrintTo(const ImplicitDeck& d, std::ostream* os) { *os << d.name; }

const std::vector<ImplicitDeck> kImplicitDecks = {
    {"heat3d_double_mixed",
     "[problem]\nscheme = \"implicit\"\n[grid]\ncells = [37, 29, 19]\n[boundary]\nx = "
     "\"periodic\"\nface_values = [0, 0, 1, -0.5, 0.25, 0]\n[initial]\nkind = \"hotspot\"\n"
     "radius = 0.3\n[time]\ncfl = 20.0\nsteps = 4\ncg_tolerance = 1e-12\n",
     1e-9},
    {"heat3d_wide_double_jacobi",
     "[problem]\nscheme = \"implicit\"\n[grid]\ncells = [135, 9, 11]\n[initial]\nkind = "
     "\"hotspot\"\nradius = 0.4\n[time]\ncfl = 20.0\nsteps = 3\ncg_tolerance = 1e-12\n"
     "cg_preconditioner = \"jacobi\"\n",
     1e-9},
    {"heat2d_float_periodic",
     "[problem]\nscheme = \"implicit\"\nprecision = \"float\"\n[grid]\ncells = [301, 23]\n"
     "[boundary]\nkind = \"periodic\"\n[initial]\nkind = \"hotspot\"\nradius = 0.3\n[time]\n"
     "cfl = 20.0\nsteps = 4\ncg_tolerance = 1e-6\n",
     1e-4},
};

class GpuImplicit : public testing::TestWithParam<ImplicitDeck> {};

TEST_P(GpuImplicit, BothVectorKernelsAgreeWithTheCpuBackend) {
    GRIDSIM_REQUIRE_GPU();
    const ImplicitDeck& d = GetParam();
    const int n = test::world_size();
    const auto cpu = field(d.text, {"parallel.backend=cpu"}, n);
    // {transport, parallel.cg_allreduce, the all-reduce that should run}.
    std::vector<std::array<std::string, 3>> paths{{"staged", "mpi", "mpi"},
                                                  {"staged", "nccl", "mpi"}};
    if (n >= 2 && every_rank_has_its_own_gpu()) {
        paths.push_back({"nccl", "nccl", "nccl"});
        paths.push_back({"nccl", "mpi", "mpi"});
    }
    // Every rank reaching every other (GPUs shared or linked): the sums through IPC mailboxes.
    if (n >= 2) paths.push_back({"ipc", "nccl", "ipc"});
    for (const char* kernels : {"cublas", "fused"}) {
        for (const auto& [transport, allreduce, expected] : paths) {
            const RunResult r =
                test::run_on_ranks(n, d.text + kGpu,
                                   {fmt::format("parallel.cg_kernels=\"{}\"", kernels),
                                    "parallel.transport=" + transport,
                                    fmt::format("parallel.cg_allreduce=\"{}\"", allreduce)});
            if (test::world_rank() != 0) continue;
            SCOPED_TRACE(fmt::format("{} kernels, {} transport, all-reduce {}", kernels, transport,
                                     allreduce));
            EXPECT_EQ(r.problem_report["cg"]["allreduce"].get<std::string>(), expected);
            const std::vector<double>& gpu = r.global_field;
            ASSERT_EQ(cpu.size(), gpu.size());
            double worst = 0.0;
            for (std::size_t p = 0; p < cpu.size(); ++p)
                worst = std::max(worst, std::abs(gpu[p] - cpu[p]));
            EXPECT_LE(worst, d.tolerance * std::max(1.0, max_abs(cpu))) << "max |gpu - cpu|";
            EXPECT_GT(max_abs(cpu), 0.0);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Decks, GpuImplicit, testing::ValuesIn(kImplicitDecks),
                         [](const testing::TestParamInfo<ImplicitDeck>& info) {
                             return info.param.name;
                         });

// Subdomains one point thicker than the halo (2 points per rank along z over 4 ranks, along x
// over 2), periodic and Dirichlet, against the one-rank GPU run and the CPU.
TEST(GpuThin, SubdomainsOnePointThickerThanTheHalo) {
    GRIDSIM_REQUIRE_GPU();
    const int n = test::world_size();
    if (n == 1) GTEST_SKIP() << "needs several ranks";
    for (const char* bc : {"dirichlet", "periodic"}) {
        const std::string deck = fmt::format(
            "[grid]\ncells = [{}, 11, {}]\n[boundary]\nkind = \"{}\"\n[initial]\n"
            "kind = \"hotspot\"\nradius = 0.4\n[time]\nsteps = 12\n",
            2 * n, 2 * n, bc);
        const std::string grid = n == 2 ? "[2, 1, 1]" : "[1, 1, 4]";
        const auto one = field(deck + kGpu, {}, 1);
        const auto thin = field(deck + kGpu, {"parallel.process_grid=" + grid}, n);
        const auto cpu = field(deck, {"parallel.backend=cpu", "parallel.process_grid=" + grid}, n);
        if (test::world_rank() != 0) continue;
        SCOPED_TRACE(bc);
        EXPECT_EQ(count_differences(thin, one), 0u);
        ASSERT_EQ(cpu.size(), thin.size());
        for (std::size_t p = 0; p < cpu.size(); ++p) ASSERT_NEAR(thin[p], cpu[p], 1e-12);
    }
}

// A jacobi run that converges, its residual read every sweep: replayed sweeps stop at the same
// sweep (the sweep issued beyond it undone) with the same history as the plain path.
TEST(GpuGraphs, ConvergenceStopsAtTheSameSweep) {
    GRIDSIM_REQUIRE_GPU();
    const std::string deck =
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [45, 38]\n[boundary]\nkind = "
        "\"benchmark\"\n[time]\nsteps = 5000\nnorm_every = 1\ntolerance = 1e-2\n";
    const RunResult plain =
        test::run_on_ranks(1, deck + kGpu, {"parallel.graphs=off", "parallel.phase_every=1"});
    const RunResult replayed = test::run_on_ranks(1, deck + kGpu, {"parallel.graphs=on"});
    if (test::world_rank() != 0) return;
    ASSERT_TRUE(plain.converged);
    EXPECT_TRUE(replayed.converged);
    EXPECT_LT(plain.steps, 5000);
    EXPECT_EQ(replayed.steps, plain.steps);
    EXPECT_EQ(replayed.residual_history, plain.residual_history);
    EXPECT_EQ(count_differences(replayed.global_field, plain.global_field), 0u);
}

// "on" where a step needs the host (staged MPI messages between ranks) is refused on every rank.
TEST(GpuGraphs, OnIsRefusedWhereTheExchangeNeedsTheHost) {
    GRIDSIM_REQUIRE_GPU();
    const int n = test::world_size();
    if (n < 2) GTEST_SKIP() << "needs several ranks";
    const std::string deck = "[grid]\ncells = [20, 18, 16]\n[time]\nsteps = 3\n" + kGpu;
    EXPECT_THROW(test::run_on_ranks(n, deck, {"parallel.graphs=on", "parallel.transport=staged"}),
                 ConfigError);
}

// The reductions: statistics and sums agree with the CPU backend (sums to rounding, as the
// order differs), count non-finite points exactly, and repeat bit for bit.
TEST(GpuReductions, MatchTheCpuAndRepeatExactly) {
    GRIDSIM_REQUIRE_GPU();
    const Config cfg = load_config("[grid]\ncells = [8, 8]\n" + kGpu, "t.toml", {});
    auto gpu = choose_backend<double>(cfg, MPI_COMM_WORLD).backend;
    auto cpu = make_cpu_backend<double>();
    const FieldExtents e = FieldExtents::make(3, {61, 37, 23}, 1);
    std::vector<double> host(e.total);
    std::mt19937 gen(7);
    std::uniform_real_distribution<double> dist(-3.0, 2.0);
    for (double& v : host) v = dist(gen);
    host[e.index(3, 4, 5)] = std::numeric_limits<double>::quiet_NaN();
    host[e.index(60, 36, 22)] = std::numeric_limits<double>::infinity();
    host[e.index(-1, 0, 0)] = std::numeric_limits<double>::quiet_NaN();  // a halo: outside the box
    Field<double> g = gpu->allocate_field(e);
    Field<double> c = cpu->allocate_field(e);
    gpu->upload(host, g.view());
    cpu->upload(host, c.view());
    const Box box{{0, 0, 0}, {61, 37, 23}};
    const FieldStats gs = gpu->reductions().stats(g.view(), box);
    const FieldStats cs = cpu->reductions().stats(c.view(), box);
    EXPECT_EQ(gs.nonfinite, 2);
    EXPECT_EQ(cs.nonfinite, 2);
    EXPECT_EQ(gs.min, cs.min);
    EXPECT_EQ(gs.max, cs.max);
    EXPECT_NEAR(gs.sum, cs.sum, 1e-12 * std::abs(cs.sum) + 1e-12);
    const FieldStats again = gpu->reductions().stats(g.view(), box);
    EXPECT_EQ(again.sum, gs.sum);

    const Box inner{{1, 1, 1}, {3, 4, 5}};  // finite points only
    const double gsq = gpu->reductions().sum_sq(g.view(), inner);
    EXPECT_NEAR(gsq, cpu->reductions().sum_sq(c.view(), inner), 1e-12 * gsq);
    EXPECT_EQ(gpu->reductions().sum_sq(g.view(), inner), gsq);
    EXPECT_EQ(gpu->reductions().sum_sq_diff(g.view(), g.view(), inner), 0.0);
}

// The residual summed inside the sweep (one partial per block, folded in a fixed order) against
// the stand-alone reduction over the same two fields, for every variant, 2D and 3D, with the
// overlap recipe's shell and interior boxes; and the whole residual history of a rerun.
TEST(GpuResidual, FusedEqualsTheSeparatePassAndRepeatsExactly) {
    GRIDSIM_REQUIRE_GPU();
    const std::vector<std::string> decks = {
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [45, 38]\n[boundary]\nkind = "
        "\"benchmark\"\n[time]\nsteps = 30\nnorm_every = 1\n",
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [1103, 38]\n[boundary]\nkind = "
        "\"benchmark\"\n[time]\nsteps = 30\nnorm_every = 1\n",
        "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [23, 17, 29]\n"
        "[boundary]\nface_values = [1, 2, 3, 4, 5, 6]\n[time]\nsteps = 30\nnorm_every = 1\n"};
    for (const std::string& text : decks) {
        for (const char* kernel : {"stream", "tiled", "naive"}) {
            SCOPED_TRACE(text + kernel);
            const std::vector<std::string> sets = {fmt::format("parallel.kernel={}", kernel)};
            const Config cfg = load_config(text + kGpu, "t.toml", sets);
            auto check = [&](auto precision_tag) {
                using T = decltype(precision_tag);
                Simulation<T> sim(cfg, MPI_COMM_WORLD);
                sim.initialise();
                StencilParams<T> p;
                p.kind = StencilKind::jacobi;
                for (int s = 0; s < 5; ++s) {
                    sim.sweep(p, true);
                    sim.request_residual();
                    const double fused = sim.take_residual();
                    const double separate = sim.residual_separate_pass();
                    EXPECT_GT(separate, 0.0);
                    EXPECT_NEAR(fused, separate, 1e-12 * separate) << "sweep " << s + 1;
                }
            };
            if (cfg.precision == Precision::float32) {
                check(float{});
            } else {
                check(double{});
            }
            const int n = test::world_size();
            const auto a = test::run_on_ranks(n, text + kGpu, sets).residual_history;
            const auto b = test::run_on_ranks(n, text + kGpu, sets).residual_history;
            if (test::world_rank() != 0) continue;
            ASSERT_EQ(a.size(), 30u);
            EXPECT_EQ(a, b);
        }
    }
}

// A snapshot's field staged for the background writer (Simulation::stage_current) is copied on
// a stream of its own beside the sweeps issued after it. The copy must hold the field of its
// own step although those sweeps go on (a staged field of 50-100 MB takes the copy engine
// milliseconds, a sweep tens of microseconds: without the wait before the first sweep that
// overwrites it, later values would land in the copy), and the sweeps must come out bitwise as
// without it. 3D in passes of time blocks, 2D in recorded pairs of single sweeps (graphs: both
// fields written by one replay) on one rank.
TEST(GpuStaging, AStagedFieldHoldsItsStepWhileTheSweepsGoOn) {
    GRIDSIM_REQUIRE_GPU();
    const std::vector<std::pair<std::string, std::string>> decks = {
        {"[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [256, 256, "
         "192]\n[boundary]\nface_values = [1, 2, 3, 4, 5, 6]\n",
         "parallel.time_block=4"},
        {"[problem]\nname = \"jacobi\"\n[grid]\ncells = [4096, 3072]\n[boundary]\nkind = "
         "\"benchmark\"\n",
         "parallel.time_block=1"}};
    for (const auto& [text, set] : decks) {
        SCOPED_TRACE(text + set);
        const Config cfg = load_config(text + kGpu, "t.toml", {set});
        auto check = [&](auto precision_tag) {
            using T = decltype(precision_tag);
            StencilParams<T> p;
            p.kind = StencilKind::jacobi;
            Simulation<T> sim(cfg, MPI_COMM_WORLD);
            Simulation<T> plain(cfg, MPI_COMM_WORLD);
            auto advance = [&](Simulation<T>& s, int blocks) {
                for (int b = 0; b < blocks; ++b) s.sweeps(p, s.most_sweeps());
            };
            auto owned = [](Simulation<T>& s) {
                const FieldView<const T> u = s.host().current_on_host();
                std::vector<T> v;
                for (int k = 0; k < u.ext.n[2]; ++k)
                    for (int j = 0; j < u.ext.n[1]; ++j)
                        for (int i = 0; i < u.ext.n[0]; ++i) v.push_back(u(i, j, k));
                return v;
            };
            const std::shared_ptr<void> memory1 = sim.host().allocate_staging();
            const std::shared_ptr<void> memory2 = sim.host().allocate_staging();
            sim.initialise();
            plain.initialise();
            // Two fields staged one pass apart (one of each buffer, both copies in flight),
            // then 40 passes issued at once; `plain` gives the expected states without staging.
            advance(sim, 3);
            advance(plain, 3);
            const std::vector<T> first = owned(plain);
            const StagedField staged1 = sim.host().stage_current(memory1.get());
            advance(sim, 1);
            const StagedField staged2 = sim.host().stage_current(memory2.get());
            advance(sim, 40);
            advance(plain, 1);
            const std::vector<T> second = owned(plain);
            advance(plain, 40);
            auto differences = [](const StagedField& staged, const std::vector<T>& expected) {
                EXPECT_TRUE(staged.landing->wait());
                EXPECT_EQ(staged.field.ext.sy, staged.field.ext.n[0]);  // packed
                const T* got = static_cast<const T*>(staged.field.data);
                std::size_t differ = 0;
                for (std::size_t q = 0; q < expected.size(); ++q) differ += got[q] != expected[q];
                return differ;
            };
            EXPECT_EQ(differences(staged1, first), 0u) << "of " << first.size() << " points";
            EXPECT_EQ(differences(staged2, second), 0u) << "of " << second.size() << " points";
            EXPECT_NE(first, second);
            EXPECT_EQ(owned(sim), owned(plain));
        };
        if (cfg.precision == Precision::float32) {
            check(float{});
        } else {
            check(double{});
        }
    }
}
