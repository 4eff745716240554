// The CUDA backend's 2D wide levels kernel (kernels/cuda/wide_levels_2d.cuh) built by the host
// compiler and run block by block, each CUDA thread on a host thread of its own
// (host_cuda/cuda_pipeline_primitives.h): its passes of 2 and 3 levels of orders 4 and 8 are
// bitwise as many sweeps of the CPU backend and their reflections
// (support/pass_against_sweeps.hpp), on subdomains with any set of fixed faces, odd sizes and
// several tiles, in float and double.
#include <gtest/gtest.h>

#include <random>
#include <vector>

// The host stand-in for CUDA's keywords and pipeline primitives, before the kernel.
#include <cuda_pipeline_primitives.h>

#include "kernels/cuda/wide_levels_2d.cuh"
#include "support/pass_against_sweeps.hpp"

namespace gridsim {
namespace {

using test::Layout;

// The kernel's pass of L levels of S from `start` over the updated box of `l`: its launch's
// grid, a block at a time.
template <class T, class S, int L>
std::vector<T> host_pass(const std::vector<T>& start, const FieldExtents& e, const Layout& l,
                         const StencilParams<T>& p, const FaceMoves<T>& reflections) {
    static_assert(cuda::WideTile2d<T, S::kRadius, L>::kBytes <= cuda::kHostSharedBytes);
    const std::vector<T> in = start;
    std::vector<T> out(start.size(), T(0));
    host_cuda::readable().only(in.data(), in.size() * sizeof(T));
    const Box b = l.updated();
    const HostDim3 grid{
        static_cast<unsigned>(cuda::wide_levels_2d_tiles<T, S::kRadius, L>(b.lo[0], b.hi[0], 0)),
        static_cast<unsigned>(cuda::wide_levels_2d_tiles<T, S::kRadius, L>(b.lo[1], b.hi[1], 1)),
        1};
    const cuda::WideMirrors m = cuda::wide_mirrors(reflections);
    host_cuda::run_grid(grid, 32, cuda::kWide2dThreadRows, [&] {
        cuda::stencil_wide_levels_2d_kernel<T, S, L>({in.data(), e}, {out.data(), e}, b, l.live(),
                                                     point_coeffs<S, 2>(p.r), m);
    });
    return out;
}

// The kernel's pass of L levels against L sweeps of the CPU backend: how many points differ.
template <class T, int Order, int L>
int host_pass_against_sweeps(const Layout& l, bool reflect) {
    using S = HeatOrderStencil<Order / 2>;
    const StencilKind kind = Order == 4 ? StencilKind::heat_order4 : StencilKind::heat_order8;
    auto be = make_cpu_backend<T>();
    const FieldExtents e = FieldExtents::make(2, l.n, l.halo);
    const std::vector<T> start = test::random_values<T>(static_cast<std::size_t>(e.total), 3);
    const StencilParams<T> p = test::params_of<T>(kind, nullptr);
    const FaceMoves<T> reflections = test::mirrors<T>(l, S::kRadius - 1);
    const std::vector<T> got =
        host_pass<T, S, L>(start, e, l, p, reflect ? reflections : FaceMoves<T>{});
    return test::differing_points(got, test::sweeps_of(*be, p, e, start, l, L, reflections), e, l);
}

TEST(WideLevels2dOnHost, APassIsBitwiseItsSweepsWithTheirReflections) {
    std::mt19937 pick(7);
    auto upto = [&](int n) { return static_cast<int>(pick() % static_cast<unsigned>(n)); };
    for (int t = 0; t < 10; ++t) {
        const unsigned fixed = static_cast<unsigned>(upto(16));
        const Layout l4{2, {3 + upto(150), 3 + upto(130), 1}, 6 + upto(2), fixed};
        const Layout l8{2, {5 + upto(150), 5 + upto(130), 1}, 12, fixed};
        SCOPED_TRACE(testing::Message() << l4.n[0] << " x " << l4.n[1] << " (order 4), " << l8.n[0]
                                        << " x " << l8.n[1] << " (order 8), fixed faces " << fixed);
        EXPECT_EQ((host_pass_against_sweeps<double, 4, 2>(l4, true)), 0);
        EXPECT_EQ((host_pass_against_sweeps<double, 4, 3>(l4, true)), 0);
        EXPECT_EQ((host_pass_against_sweeps<float, 4, 3>(l4, true)), 0);
        EXPECT_EQ((host_pass_against_sweeps<double, 8, 2>(l8, true)), 0);
        EXPECT_EQ((host_pass_against_sweeps<float, 8, 3>(l8, true)), 0);
    }
    EXPECT_EQ(host_cuda::readable().outside.load(), 0) << "copies read outside the fields";
}

// Without the reflections the levels beside the fixed faces differ: the test above holds them.
TEST(WideLevels2dOnHost, TheLevelsReadTheirReflections) {
    const Layout l{2, {70, 61, 1}, 6, 0b1111u};
    EXPECT_GT((host_pass_against_sweeps<double, 4, 2>(l, false)), 0);
    EXPECT_GT((host_pass_against_sweeps<float, 4, 3>(l, false)), 0);
}

}  // namespace
}  // namespace gridsim
