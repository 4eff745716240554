// The CUDA backend's plane walk (kernels/cuda/wide_plane_kernel.cuh) built by the host compiler
// and run block by block, each CUDA thread on a host thread of its own
// (host_cuda/cuda_pipeline_primitives.h): its sweep of order 8 heat is bitwise the CPU backend's
// over the same box, and it writes nothing outside it, for boxes that start anywhere against the
// rows' memory sectors (its tiles start on one), with partial tiles and chunks. The GPU suite runs
// the same kernel on the device (gpu/test_gpu_backend.cpp, the order 8 decks).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

// The host stand-in for CUDA's keywords and pipeline primitives, before the kernel.
#include <cuda_pipeline_primitives.h>

#include "kernels/cuda/wide_plane_kernel.cuh"
#include "support/pass_against_sweeps.hpp"

namespace gridsim {
namespace {

using Order8 = HeatOrderStencil<4>;
using Tile = cuda::PlaneTile<double, Order8::kRadius>;
static_assert(Tile::kBytes <= cuda::kHostSharedBytes);

// The walk's sweep of `in` over `b` into a field of zeros, in chunks of `planes` planes: its
// launch's grid, a block at a time.
std::vector<double> host_sweep(const std::vector<double>& in, const FieldExtents& e, const Box& b,
                               int planes, const AxisCoeffs<double>& r) {
    std::vector<double> out(in.size(), 0.0);
    host_cuda::readable().only(in.data(), in.size() * sizeof(double));
    const auto tiles = [](int from, int to, int size) {
        return static_cast<unsigned>((to - from + size - 1) / size);
    };
    const HostDim3 grid{tiles(pack_start<kSectorPoints<double>>(b.lo[0]), b.hi[0], Tile::kX),
                        tiles(b.lo[1], b.hi[1], Tile::kY), tiles(b.lo[2], b.hi[2], planes)};
    host_cuda::run_grid(grid, 32, cuda::kPlaneThreadRows, [&] {
        cuda::stencil_wide_plane_kernel<double, Order8>({in.data(), e}, {out.data(), e}, b,
                                                        point_coeffs<Order8, 3>(r), planes);
    });
    return out;
}

// How many points of the walk's sweep over `b` differ from the CPU backend's (both into a field
// of zeros, so a point written outside `b` differs too).
int walk_against_cpu(const std::array<int, 3>& n, int halo, int align, const Box& b, int planes) {
    auto be = make_cpu_backend<double>();
    const FieldExtents e = FieldExtents::make(3, n, halo, align);
    const std::vector<double> start = test::random_values<double>(std::size_t(e.total), 7);
    const StencilParams<double> p = test::params_of<double>(StencilKind::heat_order8, nullptr);
    const std::vector<double> got = host_sweep(start, e, b, planes, p.r);
    Field<double> in = be->allocate_field(e);
    Field<double> out = be->allocate_field(e);
    be->upload(start, in.view());
    be->upload(std::vector<double>(start.size(), 0.0), out.view());
    be->apply(p, in.view(), out.view(), b, Lane::boundary, StencilSum::none);
    std::vector<double> want;
    be->download(out.view(), want);
    int differ = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i]) ++differ;
    return differ;
}

TEST(PlaneWalkOnHost, ASweepIsBitwiseTheCpusFromAnyColumn) {
    std::mt19937 pick(11);
    auto upto = [&](int m) { return static_cast<int>(pick() % static_cast<unsigned>(m)); };
    constexpr int R = Order8::kRadius;
    for (int t = 0; t < 8; ++t) {
        const std::array<int, 3> n{20 + upto(60), 20 + upto(50), 8 + upto(12)};
        const int halo = R + upto(4);
        const int align = t % 2 == 0 ? 1 : 16;
        // The owned box, less up to a point at each end (a fixed face) or grown into the halo as
        // far as its ring stays in the field.
        Box b{{0, 0, 0}, {n[0], n[1], n[2]}};
        for (int a = 0; a < 3; ++a) {
            b.lo[a] -= upto(halo - R + 2) - 1;
            b.hi[a] += upto(halo - R + 2) - 1;
        }
        const int planes = 1 + upto(12);
        SCOPED_TRACE(testing::Message()
                     << n[0] << " x " << n[1] << " x " << n[2] << ", halo " << halo << ", align "
                     << align << ", box from " << b.lo[0] << ", " << b.lo[1] << ", " << b.lo[2]
                     << ", chunks of " << planes << " planes");
        EXPECT_EQ(walk_against_cpu(n, halo, align, b, planes), 0);
    }
    EXPECT_EQ(host_cuda::readable().outside.load(), 0) << "copies read outside the field";
}

}  // namespace
}  // namespace gridsim
