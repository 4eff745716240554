// The CUDA backend against the CPU backend and against itself, deck by deck. Every test first
// decides collectively whether every rank sees a GPU, and all ranks skip together if not (CI has
// none).
//  - GPU vs CPU: whole fields agree to a stated tolerance, not bitwise: nvcc contracts
//    a*b + c into fused multiply-adds (one rounding instead of two), the host compiler does not.
//  - kernel variants (stream, tiled, naive), overlap on vs off, fused sweeps, 1 vs 2 vs 4 ranks,
//    the transports, graphs and time blocks: bitwise identical on the GPU.
// Passes of several sweeps are in test_gpu_passes.cpp; the CG, thin subdomains, graphs and
// convergence, reductions, the fused residual and staged fields in test_gpu_solvers.cpp.
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
#include "gpu/gpu_test_support.hpp"
#include "gpu/require_gpu.hpp"
#include "platform/backend_select.hpp"
#include "problems/problem.hpp"
#include "support/mpi_helpers.hpp"

using namespace gridsim;
using namespace gridsim::test;

namespace {

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
    // Heat of orders 4 and 8 (stars of radius 2 and 4, reflected beyond the Dirichlet faces).
    {"heat3d_order4_double",
     "[problem]\norder = 4\n[grid]\ncells = [37, 29, 19]\n[boundary]\ny = \"periodic\"\n"
     "face_values = [0.5, -1, 0, 0, 2, 1]\n[initial]\nkind = \"hotspot\"\nradius = 0.3\n"
     "[time]\nsteps = 20\n",
     1e-12},
    {"heat2d_order8_float",
     "[problem]\norder = 8\nprecision = \"float\"\n[grid]\ncells = [45, 38]\n[boundary]\n"
     "face_values = [1, 2, 3, 4]\n[initial]\nkind = \"hotspot\"\n[time]\nsteps = 20\n",
     2e-5},
    // Large enough for the plane walk of the widest stars in 3D (tiles of 32 x 32, partial ones
    // at the ends; on 2 ranks too for the first).
    {"heat3d_order8_planes_double",
     "[problem]\norder = 8\nprecision = \"double\"\n[grid]\ncells = [100, 67, 35]\n"
     "[boundary]\nz = \"periodic\"\nface_values = [1, 0, -0.5, 2, 0, 0]\n[initial]\nkind = "
     "\"hotspot\"\nradius = 0.3\n[time]\nsteps = 12\n",
     1e-12},
    {"heat3d_order8_planes_x_periodic_double",
     "[problem]\norder = 8\nprecision = \"double\"\n[grid]\ncells = [41, 35, 33]\n"
     "[boundary]\nx = \"periodic\"\nface_values = [0, 0, 1, 2, -1, 0.5]\n[initial]\nkind = "
     "\"hotspot\"\n[time]\nsteps = 12\n",
     1e-12},
    // Heat with density conductivity (a coefficient field: a box and a sphere of densities).
    {"heat3d_conduction_double",
     "[problem]\nconductivity = \"density\"\n[grid]\ncells = [37, 29, 19]\n[boundary]\n"
     "z = \"periodic\"\nface_values = [0.5, -1, 0, 2, 0, 0]\n[initial]\nkind = \"hotspot\"\n"
     "density = 2.0\nregions = [{shape = \"box\", lo = [0.1, 0.2, 0.0], hi = [0.6, 0.9, 0.5], "
     "density = 8.0}, {shape = \"sphere\", center = [0.7, 0.4, 0.5], radius = 0.3, density = "
     "0.5}]\n[time]\nsteps = 20\n",
     1e-12},
    {"heat2d_conduction_float",
     "[problem]\nconductivity = \"density\"\nprecision = \"float\"\n[grid]\ncells = [45, 38]\n"
     "[boundary]\nx = \"periodic\"\n[initial]\nkind = \"hotspot\"\nregions = [{shape = "
     "\"box\", lo = [0.0, 0.3], hi = [0.5, 0.8], density = 0.2}]\n[time]\nsteps = 20\n",
     2e-5},
    {"heat2d_conduction_double",
     "[problem]\nconductivity = \"density\"\nprecision = \"double\"\n[grid]\ncells = [291, 41]\n"
     "[boundary]\ny = \"periodic\"\nface_values = [1, -0.5, 0, 0]\n[initial]\nkind = "
     "\"hotspot\"\nregions = [{shape = \"sphere\", center = [0.3, 0.5], radius = 0.25, density "
     "= 4.0}]\n[time]\nsteps = 24\n",
     1e-12},
};

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
// a + b, with more equal to rounding (their order is theirs). Ranks sharing a GPU put every face
// as a meeting kernel, copies and a telling kernel (IpcTransport::launch); without MPS they
// time-slice the GPU, so every handshake waits for the other process's turn: slow.
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
    // Auto takes ipc where the ranks' kernels run side by side: a GPU each (every one reaching
    // every other: the forced runs above succeeded with two ranks), or GPUs shared through MPS
    // (ranks sharing GPUs ran ipc above only where every rank reaches every other); staged where
    // ranks sharing a GPU take turns on it.
    const bool mps = every_gpu_shared_by_mps();
    const RunResult automatic = test::run_on_ranks(n, d.text + kGpu, {});
    if (test::world_rank() != 0 || (own && n != 2)) return;
    EXPECT_EQ(automatic.transport, own || mps ? "ipc" : "staged") << (mps ? "MPS" : "no MPS");
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
// over k-deep halos; density conduction: passes of up to 2 levels in 3D and 4 in 2D; heat of
// order 4 and 8: single sweeps over k x radius-deep halos, each followed by the reflection
// beyond the Dirichlet faces, or in 3D order 4's passes of 2 levels where its trial takes them),
// with graphs and every overlap mode (with several ranks "auto" times the exchanging pass split,
// fused and, in 3D, faces first at start-up; "faces_first" in 3D for stars of radius 1), against
// k = 1: the same fields and residual histories, bitwise, on one rank (its periodic
// self-exchange) and on all of them.
TEST_P(GpuDeck, TimeBlocksAreBitwiseIdentical) {
    GRIDSIM_REQUIRE_GPU();
    const Deck& d = GetParam();
    if (d.text.find("implicit") != std::string::npos)
        GTEST_SKIP() << "one sweep per exchange: the implicit scheme";
    const int radius = load_config(d.text + kGpu, "test.toml", {}).stencil_radius;
    for (int n : {1, test::world_size()}) {
        const RunResult one = test::run_on_ranks(n, d.text + kGpu, {"parallel.time_block=1"});
        int deeper = 0;  // the k > 1 that ran
        for (int k : {2, 3, 4, 5, 8}) {
            // Every deck takes the halos of k = 4 on its automatic grid of up to 4 ranks (the
            // summing pass the grid is modelled for); a deeper k only where its rows fit (a thin
            // deck split into rows). On more ranks, the k whose halos fit the thinner subdomains.
            if (!test::takes_halos(d.text + kGpu, n, k)) {
                if (n <= 4) ASSERT_GT(k, 4) << n << " ranks";
                continue;
            }
            ++deeper;
            std::vector<const char*> overlaps = {"true", "false", "\"auto\"", "\"fused\""};
            // Faces first: 3D stars of radius 1 (a wider star's overlap "faces_first" is an
            // error).
            if (std::string(d.name).find("3d") != std::string::npos && radius == 1)
                overlaps.push_back("\"faces_first\"");
            for (const char* graphs : {"off", "auto"}) {
                for (const char* overlap : overlaps) {
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
        EXPECT_GT(deeper, 0) << n << " ranks: no k > 1 fits";
        if (n == test::world_size()) break;
    }
}

INSTANTIATE_TEST_SUITE_P(Decks, GpuDeck, testing::ValuesIn(kDecks),
                         [](const testing::TestParamInfo<Deck>& info) { return info.param.name; });

// The run's launch line names the kernel its stencil's sweeps take: the configured variant for a
// plain star, the plane walk or the wide stream kernel for a wider one, the tiled kernel with
// its ring where asked for.
TEST(GpuLaunchLine, NamesTheKernelTheStencilTakes) {
    GRIDSIM_REQUIRE_GPU();
    const std::string deck = "[grid]\ncells = [40, 36, 34]\n[time]\nsteps = 2\n" + kGpu;
    const auto launch = [&](std::vector<std::string> sets) {
        return test::run_on_ranks(1, deck, sets).launch;
    };
    const std::string plain = launch({});
    const std::string order8 = launch({"problem.order=8", "problem.precision=\"double\""});
    const std::string order4 = launch({"problem.order=4"});
    const std::string tiled = launch({"problem.order=4", "parallel.kernel=\"tiled\""});
    const std::string density = launch({"problem.conductivity=\"density\""});
    if (test::world_rank() != 0) return;
    EXPECT_EQ(plain.rfind("stream 2D", 0), 0u) << plain;
    EXPECT_EQ(order8.rfind("plane walk 32x32 tiles", 0), 0u) << order8;
    EXPECT_NE(order8.find("16 planes or more; the others: wide stream 3D 64x4"), std::string::npos)
        << order8;
    EXPECT_EQ(order4, "wide stream 3D 64x4 points 8");
    EXPECT_EQ(tiled.rfind("tiled 3D 64x4 points 8, a ring of 2", 0), 0u) << tiled;
    EXPECT_EQ(density, "wide stream 3D 64x4 points 8");
}
