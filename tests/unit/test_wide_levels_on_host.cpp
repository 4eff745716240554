// The CUDA backend's wide levels kernel (kernels/cuda/wide_levels_3d.cuh) built by the host
// compiler and run block by block, each CUDA thread on a host thread of its own
// (host_cuda/cuda_pipeline_primitives.h): its pass of 2 levels is bitwise 2 sweeps of the CPU
// backend and their reflections (support/pass_against_sweeps.hpp), on subdomains with any set of
// fixed faces, odd sizes, several tiles and chunks, in float and double. It checks the kernel's
// indexing, its levels' order and its reflections on machines without a GPU; the GPU suite runs
// the same kernel on the device (gpu/test_gpu_wide_passes.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

// The host stand-in for CUDA's keywords and pipeline primitives, before the kernel.
#include <cuda_pipeline_primitives.h>

#include "kernels/cuda/wide_levels_3d.cuh"
#include "support/pass_against_sweeps.hpp"

namespace gridsim {
namespace {

using test::Layout;
using Order4 = HeatOrderStencil<2>;

// The kernel's pass of L levels from `start` over the updated box of `l`, in chunks of `planes`
// planes: its launch's grid, a block at a time.
template <class T, int L>
std::vector<T> host_pass(const std::vector<T>& start, const FieldExtents& e, const Layout& l,
                         int planes, const StencilParams<T>& p, const FaceMoves<T>& reflections) {
    using Tile = cuda::WideLevelsTile<T, Order4::kRadius, L>;
    static_assert(Tile::kBytes <= cuda::kHostSharedBytes);
    const std::vector<T> in = start;
    std::vector<T> out(start.size(), T(0));
    host_cuda::readable().only(in.data(), in.size() * sizeof(T));
    const Box b = l.updated();
    const HostDim3 grid{
        static_cast<unsigned>(cuda::wide_levels_tiles<T, Order4::kRadius, L>(b.lo[0], b.hi[0], 0) *
                              cuda::wide_levels_tiles<T, Order4::kRadius, L>(b.lo[1], b.hi[1], 1)),
        1, static_cast<unsigned>((b.hi[2] - b.lo[2] + planes - 1) / planes)};
    const cuda::WideMirrors m = cuda::wide_mirrors(reflections);
    host_cuda::run_grid(grid, 32, cuda::kWideThreadRows, [&] {
        cuda::stencil_wide_levels_3d_kernel<T, Order4, L>(
            {in.data(), e}, {out.data(), e}, b, l.live(), point_coeffs<Order4, 3>(p.r), planes, m);
    });
    return out;
}

// The kernel's pass of 2 levels against 2 sweeps of the CPU backend: how many points of the
// updated box differ, and how many outside it the pass wrote (its field started as zeros).
template <class T>
int host_pass_against_sweeps(const Layout& l, int planes, bool reflect) {
    auto be = make_cpu_backend<T>();
    const FieldExtents e = FieldExtents::make(3, l.n, l.halo);
    const std::vector<T> start = test::random_values<T>(static_cast<std::size_t>(e.total), 3);
    const StencilParams<T> p = test::params_of<T>(StencilKind::heat_order4, nullptr);
    const FaceMoves<T> reflections = test::mirrors<T>(l, Order4::kRadius - 1);
    const std::vector<T> got =
        host_pass<T, 2>(start, e, l, planes, p, reflect ? reflections : FaceMoves<T>{});
    const std::vector<T> want = test::sweeps_of(*be, p, e, start, l, 2, reflections);
    int outside = 0;
    for (std::size_t i = 0; i < got.size(); ++i) outside += got[i] != T(0) ? 1 : 0;
    const Box u = l.updated();
    for (int k = u.lo[2]; k < u.hi[2]; ++k)
        for (int j = u.lo[1]; j < u.hi[1]; ++j)
            for (int i = u.lo[0]; i < u.hi[0]; ++i)
                outside -= got[static_cast<std::size_t>(e.index(i, j, k))] != T(0) ? 1 : 0;
    return test::differing_points(got, want, e, l) + outside;
}

TEST(WideLevelsOnHost, APassIsBitwiseItsSweepsWithTheirReflections) {
    std::mt19937 pick(5);
    auto upto = [&](int n) { return static_cast<int>(pick() % static_cast<unsigned>(n)); };
    for (int t = 0; t < 12; ++t) {
        const Layout l{3,
                       {3 + upto(120), 3 + upto(64), 3 + upto(24)},
                       4 + upto(2),
                       static_cast<unsigned>(upto(64))};
        const int planes = 1 + upto(16);
        SCOPED_TRACE(testing::Message()
                     << l.n[0] << " x " << l.n[1] << " x " << l.n[2] << ", halo " << l.halo
                     << ", fixed faces " << l.fixed << ", chunks of " << planes << " planes");
        EXPECT_EQ(host_pass_against_sweeps<double>(l, planes, true), 0);
        EXPECT_EQ(host_pass_against_sweeps<float>(l, planes, true), 0);
    }
    // Tiles between the sides: 3 x 3 and more.
    EXPECT_EQ(host_pass_against_sweeps<double>(Layout{3, {150, 70, 9}, 4, 0b110011u}, 5, true), 0);
    EXPECT_EQ(host_cuda::readable().outside.load(), 0) << "copies read outside the fields";
}

// A chunk's blocks take each of its tiles once, those at the box's sides first.
TEST(WideLevelsOnHost, BlocksTakeEveryTileOnceTheSidesFirst) {
    for (int nx = 1; nx <= 7; ++nx) {
        for (int ny = 1; ny <= 7; ++ny) {
            SCOPED_TRACE(testing::Message() << nx << " x " << ny << " tiles");
            const int sides = nx <= 2 || ny <= 2 ? nx * ny : 2 * nx + 2 * (ny - 2);
            std::vector<int> taken(static_cast<std::size_t>(nx * ny), 0);
            for (int b = 0; b < nx * ny; ++b) {
                const cuda::WideTile t = cuda::wide_tile_of(b, nx, ny);
                ASSERT_TRUE(t.x >= 0 && t.x < nx && t.y >= 0 && t.y < ny) << "block " << b;
                ++taken[static_cast<std::size_t>(t.y * nx + t.x)];
                const bool side = t.x == 0 || t.y == 0 || t.x == nx - 1 || t.y == ny - 1;
                EXPECT_EQ(side, b < sides) << "block " << b;
            }
            EXPECT_EQ(std::count(taken.begin(), taken.end(), 1), nx * ny);
        }
    }
}

// Without the reflections the levels beside the fixed faces differ: the test above holds them.
TEST(WideLevelsOnHost, TheLevelsReadTheirReflections) {
    const Layout l{3, {40, 30, 12}, 4, 0b111111u};
    EXPECT_GT(host_pass_against_sweeps<double>(l, 12, false), 0);
    EXPECT_GT(host_pass_against_sweeps<float>(l, 5, false), 0);
}

// The pass sets one point a thread beyond the faces across x and y: its launch takes the R - 1
// layers the engine lays out there and refuses thicker ones; faces across z any thickness.
TEST(WideLevelsOnHost, ALaunchTakesFacesAcrossXAndYOfRMinusOneLayers) {
    const int fits = Order4::kRadius - 1;
    const Layout every{3, {40, 30, 12}, 4, 0b111111u};
    EXPECT_TRUE(
        cuda::wide_mirrors_fit(cuda::wide_mirrors(test::mirrors<double>(every, fits)), fits));
    EXPECT_FALSE(
        cuda::wide_mirrors_fit(cuda::wide_mirrors(test::mirrors<double>(every, fits + 1)), fits));
    const Layout y_low{3, {40, 30, 12}, 4, 0b000100u};
    EXPECT_FALSE(
        cuda::wide_mirrors_fit(cuda::wide_mirrors(test::mirrors<double>(y_low, fits + 1)), fits));
    const Layout z_only{3, {40, 30, 12}, 4, 0b110000u};
    EXPECT_TRUE(
        cuda::wide_mirrors_fit(cuda::wide_mirrors(test::mirrors<double>(z_only, fits + 2)), fits));
}

}  // namespace
}  // namespace gridsim
