// The CUDA backend beyond the explicit sweep: implicit heat (CG), thin subdomains, graphs and
// convergence, reductions, the fused jacobi residual and a field staged for output while the
// sweeps go on. Ranks may share a GPU here (parallel.share_gpus).
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

// The owned points of a simulation's current field, x fastest.
template <class T>
std::vector<T> owned_points(Simulation<T>& s) {
    const FieldView<const T> u = s.host().current_on_host();
    std::vector<T> v;
    for (int k = 0; k < u.ext.n[2]; ++k)
        for (int j = 0; j < u.ext.n[1]; ++j)
            for (int i = 0; i < u.ext.n[0]; ++i) v.push_back(u(i, j, k));
    return v;
}

template <class T>
StencilParams<T> jacobi_params() {
    StencilParams<T> p;
    p.kind = StencilKind::jacobi;
    return p;
}

// check(float{}) or check(double{}), as the deck's precision says.
template <class Check>
void with_precision(const Config& cfg, Check&& check) {
    if (cfg.precision == Precision::float32) {
        check(float{});
    } else {
        check(double{});
    }
}

}  // namespace

// Implicit heat (CG): the GPU's cuBLAS sequence and its fused kernels each agree with the CPU
// backend within the CG tolerance, 2D and 3D, float and double, at this run's rank count (the
// ranks share the GPUs when there are fewer), NCCL included where every rank has a GPU, its
// sums all-reduced both on the device (NCCL) and on the host (MPI).
const std::vector<Deck> kDecks = {
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

class GpuImplicit : public testing::TestWithParam<Deck> {};

TEST_P(GpuImplicit, BothVectorKernelsAgreeWithTheCpuBackend) {
    GRIDSIM_REQUIRE_GPU();
    const Deck& d = GetParam();
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

INSTANTIATE_TEST_SUITE_P(Decks, GpuImplicit, testing::ValuesIn(kDecks),
                         [](const testing::TestParamInfo<Deck>& info) { return info.param.name; });

// Subdomains one point thicker than the halo (2 points per rank: along x over 2 ranks, along z
// over more), periodic and Dirichlet, against the one-rank GPU run and the CPU.
TEST(GpuThin, SubdomainsOnePointThickerThanTheHalo) {
    GRIDSIM_REQUIRE_GPU();
    const int n = test::world_size();
    if (n == 1) GTEST_SKIP() << "needs several ranks";
    for (const char* bc : {"dirichlet", "periodic"}) {
        const std::string deck = fmt::format(
            "[grid]\ncells = [{}, 11, {}]\n[boundary]\nkind = \"{}\"\n[initial]\n"
            "kind = \"hotspot\"\nradius = 0.4\n[time]\nsteps = 12\n",
            2 * n, 2 * n, bc);
        const std::string grid = n == 2 ? "[2, 1, 1]" : fmt::format("[1, 1, {}]", n);
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

// Groups of 2 to Recording::kMostReads residual sweeps replayed as one recording each
// (Simulation::residual_group), their residuals taken after the next replay is issued as a run
// takes them, against single sweeps that are not recorded: bitwise the same residuals and
// fields, 2D (benchmark, the periodic y stored by the sweep) and 3D, float and double, every
// group size in turn, sampled passes (phase timing) running single in between. Each rank runs its
// own one-rank simulations.
TEST(GpuGraphs, ResidualGroupsAreBitwiseSingleSweeps) {
    GRIDSIM_REQUIRE_GPU();
    const std::vector<std::string> decks = {
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [301, 123]\n[boundary]\nkind = "
        "\"benchmark\"\n",
        "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [70, 33, 21]\n"
        "[boundary]\nz = \"periodic\"\nface_values = [1, 2, 3, 4, 5, 6]\n"};
    for (const std::string& text : decks) {
        SCOPED_TRACE(text);
        const std::vector<std::string> keys = {"parallel.time_block=1", "parallel.phase_every=7"};
        const Config cfg = load_config(text + kGpu, "t.toml", keys);
        auto set = keys;
        set.push_back("parallel.graphs=off");
        const Config plain_cfg = load_config(text + kGpu, "t.toml", set);
        auto check = [&](auto precision_tag) {
            using T = decltype(precision_tag);
            const StencilParams<T> p = jacobi_params<T>();
            Simulation<T> sim(cfg, MPI_COMM_SELF);
            Simulation<T> plain(plain_cfg, MPI_COMM_SELF);
            sim.initialise();
            plain.initialise();
            std::vector<double> grouped, single;
            std::vector<int> groups(Recording::kMostReads + 1, 0);  // replays by group size
            int pending = 0;
            for (int sweeps = 0; sweeps < 240;) {
                const int size = 2 + static_cast<int>(sweeps % (Recording::kMostReads - 1));
                const int issued = sim.groups_residuals(size) ? size : 1;
                if (issued > 1) {
                    sim.residual_group(p, issued);
                } else {
                    sim.sweep(p, true);
                    sim.request_residual();
                }
                ++groups[static_cast<std::size_t>(issued)];
                for (; pending > 0; --pending) grouped.push_back(sim.take_residual());
                pending = issued;
                sweeps += issued;
            }
            for (; pending > 0; --pending) grouped.push_back(sim.take_residual());
            for (std::size_t s = 0; s < grouped.size(); ++s) {
                plain.sweep(p, true);
                plain.request_residual();
                single.push_back(plain.take_residual());
            }
            for (int size = 2; size <= Recording::kMostReads; ++size)
                EXPECT_GT(groups[static_cast<std::size_t>(size)], 10)
                    << "too few groups of " << size << " sweeps replayed";
            EXPECT_EQ(grouped, single);
            EXPECT_EQ(owned_points(sim), owned_points(plain));
        };
        with_precision(cfg, check);
    }
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

// The report's phases: the field checks (statistics, a host reduction; at step 1000 and the last)
// are timed as reductions, not the sweeps queued ahead of them, whose time the interior holds.
// Ranks that share a GPU take turns on it, so one rank's reduction would wait for the others'
// sweeps: there it runs on one rank.
TEST(GpuPhases, AHostReductionIsNotChargedTheSweepsQueuedBeforeIt) {
    GRIDSIM_REQUIRE_GPU();
    const int n = test::a_gpu_per_rank() ? test::world_size() : 1;
    const std::string deck = "[grid]\ncells = [256, 256, 256]\n[time]\nsteps = 1500\n" + kGpu;
    const RunResult r = test::run_on_ranks(n, deck, {});
    if (test::world_rank() >= n) return;
    const auto phase = [&](Phase p) { return r.phases[static_cast<int>(p)]; };
    EXPECT_GT(phase(Phase::interior), 0.0);
    EXPECT_LT(phase(Phase::reduction), 0.1 * phase(Phase::interior))
        << "reduction " << phase(Phase::reduction) << " s, interior " << phase(Phase::interior)
        << " s, loop " << r.loop_seconds_local << " s";
}

// The halo phases count only work that ran: one rank on a grid without periodic axes moves no
// halo, so no pack, transfer or unpack is timed (their events alone would read as microseconds
// a step), with time blocking (the default at this size) and without.
TEST(GpuPhases, ARankWithoutHalosToMoveReportsNone) {
    GRIDSIM_REQUIRE_GPU();
    const std::string deck = "[grid]\ncells = [192, 160, 96]\n[time]\nsteps = 300\n" + kGpu;
    for (const char* k : {"parallel.time_block=1", "parallel.time_block=\"auto\""}) {
        const RunResult r = test::run_on_ranks(1, deck, {k});
        if (test::world_rank() != 0) continue;
        SCOPED_TRACE(k);
        const auto phase = [&](Phase p) { return r.phases[static_cast<int>(p)]; };
        EXPECT_GT(phase(Phase::interior), 0.0);
        EXPECT_EQ(phase(Phase::pack), 0.0);
        EXPECT_EQ(phase(Phase::transfer), 0.0);
        EXPECT_EQ(phase(Phase::unpack), 0.0);
    }
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
                    const double separate = sim.measures().residual_separate_pass();
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
            const StencilParams<T> p = jacobi_params<T>();
            Simulation<T> sim(cfg, MPI_COMM_WORLD);
            Simulation<T> plain(cfg, MPI_COMM_WORLD);
            auto advance = [&](Simulation<T>& s, int blocks) {
                for (int b = 0; b < blocks; ++b) s.sweeps(p, s.most_sweeps());
            };
            const std::shared_ptr<void> memory1 = sim.host().allocate_staging();
            const std::shared_ptr<void> memory2 = sim.host().allocate_staging();
            sim.initialise();
            plain.initialise();
            // Two fields staged one pass apart (one of each buffer, both copies in flight),
            // then 40 passes issued at once; `plain` gives the expected states without staging.
            advance(sim, 3);
            advance(plain, 3);
            const std::vector<T> first = owned_points(plain);
            const StagedField staged1 = sim.host().stage_current(memory1.get());
            advance(sim, 1);
            const StagedField staged2 = sim.host().stage_current(memory2.get());
            advance(sim, 40);
            advance(plain, 1);
            const std::vector<T> second = owned_points(plain);
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
            EXPECT_EQ(owned_points(sim), owned_points(plain));
        };
        with_precision(cfg, check);
    }
}
