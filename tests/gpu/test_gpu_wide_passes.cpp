// The CUDA backend's passes of levels against its own sweeps and their reflections beyond the
// fixed faces (support/pass_against_sweeps.hpp), bitwise, for every stencil kind whose 3D passes
// take several levels: the wide levels kernel's stars (radius 2) read the reflections, radius 1
// none. Then the engine: a run of heat of order 4 with time blocks against one sweep per exchange,
// on 1 and 2 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <string>

#include "gpu/gpu_test_support.hpp"
#include "gpu/require_gpu.hpp"
#include "kernels/device_runtime.hpp"
#include "support/pass_against_sweeps.hpp"
#include "support/stencil_kinds.hpp"

namespace gridsim {
namespace {

using test::Layout;

template <class T>
int cuda_pass_against_sweeps(StencilKind kind, const Layout& l, int levels, bool reflect) {
    DeviceRuntime& rt = *device_runtime();
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    rt.select(rank % rt.visible_devices());
    auto be = make_device_backend<T>(rt, LaunchConfig{});
    return test::pass_against_sweeps(*be, kind, l, levels, reflect);
}

template <class T>
int most_levels_3d(StencilKind kind) {
    return make_device_backend<T>(*device_runtime(), LaunchConfig{})
        ->time_blocking()
        ->max_levels(3, kind);
}

// One tile and chunk, then several of each (the wide tile writes 56 x 24 points at 2 levels), in
// each precision whose passes of the kind take several levels.
template <class T>
int passes_against_sweeps(StencilKind kind) {
    int checked = 0;
    const int radius = stencil_radius(kind);
    const int most = std::min(most_levels_3d<T>(kind), 3);
    for (int levels = 2; levels <= most; ++levels) {
        for (const std::array<int, 3> n : {std::array<int, 3>{11, 9, 10}, {131, 61, 45}}) {
            const Layout l{3, n, levels * radius};
            SCOPED_TRACE(testing::Message()
                         << "radius " << radius << ", levels " << levels << ", " << n[0] << "x"
                         << n[1] << "x" << n[2] << ", " << sizeof(T) << "-byte values");
            EXPECT_EQ(cuda_pass_against_sweeps<T>(kind, l, levels, true), 0);
            ++checked;
        }
    }
    return checked;
}

TEST(GpuWidePasses, APassIsBitwiseItsSweepsWithTheirReflections) {
    GRIDSIM_REQUIRE_GPU();
    int checked = 0;
    for (const StencilKind kind : test::kStencilKinds)
        checked += passes_against_sweeps<double>(kind) + passes_against_sweeps<float>(kind);
    EXPECT_GT(checked, 0);
    EXPECT_GT(most_levels_3d<double>(StencilKind::heat_order4), 1)
        << "order 4 in double takes passes of levels in 3D";
    EXPECT_EQ(most_levels_3d<float>(StencilKind::heat_order4), 1) << "float sweeps one by one";
}

// Order 4 beside every set of fixed faces (none, one, opposite pairs, all), over several tiles.
TEST(GpuWidePasses, EverySetOfFixedFacesHoldsToItsSweeps) {
    GRIDSIM_REQUIRE_GPU();
    for (unsigned fixed = 0; fixed < 64; ++fixed) {
        const Layout l{3, {75, 33, 14}, 4, fixed};
        SCOPED_TRACE(testing::Message() << "fixed faces " << fixed);
        EXPECT_EQ(cuda_pass_against_sweeps<double>(StencilKind::heat_order4, l, 2, true), 0);
    }
}

// 2D passes of orders 4 and 8 (the 2D wide levels kernel, 2 and 3 levels) beside every set of
// fixed faces, over several tiles, in double and float.
TEST(GpuWidePasses, TwoDimensionalPassesHoldToTheirSweeps) {
    GRIDSIM_REQUIRE_GPU();
    for (const StencilKind kind : {StencilKind::heat_order4, StencilKind::heat_order8}) {
        const int radius = stencil_radius(kind);
        for (int levels = 2; levels <= 3; ++levels) {
            for (unsigned fixed = 0; fixed < 16; ++fixed) {
                const Layout l{2, {131, 97, 1}, levels * radius, fixed};
                SCOPED_TRACE(testing::Message() << "radius " << radius << ", levels " << levels
                                                << ", fixed faces " << fixed);
                EXPECT_EQ(cuda_pass_against_sweeps<double>(kind, l, levels, true), 0);
                EXPECT_EQ(cuda_pass_against_sweeps<float>(kind, l, levels, true), 0);
            }
        }
    }
}

// Without the reflections the levels of order 4 read other values beyond the fixed faces.
TEST(GpuWidePasses, TheLevelsReadTheirReflections) {
    GRIDSIM_REQUIRE_GPU();
    const Layout l{3, {131, 61, 45}, 4};
    EXPECT_GT(cuda_pass_against_sweeps<double>(StencilKind::heat_order4, l, 2, false), 0);
}

// The engine's blocks of order 4 (time_block 2 and 4: one and two passes, or their sweeps, as the
// start-up trial of passes against sweeps decides) against one sweep per exchange, bitwise, with
// Dirichlet faces of values other than 0 beside a periodic axis, on one rank and on two that
// split x and z; fewer passes over memory where passes won the trial.
TEST(GpuWidePasses, RunsOfOrderFourAreBitwiseOneSweepPerExchange) {
    GRIDSIM_REQUIRE_GPU();
    const std::string deck =
        "[problem]\norder = 4\n[grid]\ncells = [75, 61, 52]\n[boundary]\ny = \"periodic\"\n"
        "face_values = [0.5, -1, 0, 0, 2, 0.25]\n[initial]\nkind = \"hotspot\"\n"
        "center = [0.3, 0.6, 0.4]\n[time]\nsteps = 12\n" +
        test::kGpu;
    struct Split {
        const char* grid;
        int ranks;
    };
    for (const Split split : {Split{"[1,1,1]", 1}, Split{"[2,1,1]", 2}, Split{"[1,1,2]", 2}}) {
        const int ranks = split.ranks;
        if (ranks > test::world_size()) continue;
        const std::string pg = std::string("parallel.process_grid=") + split.grid;
        const RunResult one = test::run_on_ranks(ranks, deck, {pg, "parallel.time_block=1"});
        for (int k : {2, 4}) {
            const RunResult r =
                test::run_on_ranks(ranks, deck, {pg, "parallel.time_block=" + std::to_string(k)});
            if (test::world_rank() != 0) continue;
            SCOPED_TRACE(testing::Message() << split.grid << " time_block " << k);
            EXPECT_EQ(r.time_block, k);
            EXPECT_EQ(test::count_differences(r.global_field, one.global_field), 0u);
            // The trial of passes of 2 levels against sweeps decides how the blocks run.
            ASSERT_EQ(r.time_block_trial.size(), 2u);
            const bool passes =
                r.time_block_trial[1].seconds_per_sweep < r.time_block_trial[0].seconds_per_sweep;
            if (passes) {
                EXPECT_LT(r.memory_passes, one.memory_passes);
            } else {
                EXPECT_EQ(r.memory_passes, one.memory_passes);
            }
        }
    }
}

}  // namespace
}  // namespace gridsim
