// The test tree's own stencils (support/extra_stencil.hpp) through the CUDA kernel families, by
// the templates the CUDA backend's run-time dispatch calls (StencilLaunches' *_stencil): the
// naive kernel against the CPU loops, and bitwise against it: the stream (or wide stream) and
// tiled kernels and a run of boxes for every star, passes of levels (2D and 3D) for those of
// radius 1, the star that reads a field included, and 3D passes for the star of radius 2. Each
// rank runs them on its own GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "gpu/require_gpu.hpp"
#include "kernels/cpu/stencil_loops.hpp"
#include "kernels/cuda/stencil_launches.cuh"
#include "support/extra_stencil.hpp"
#include "support/random_values.hpp"

namespace gridsim {
namespace {

using test::FourthOrderHeat;
using test::HarmonicConduction;
using test::WeightedJacobi;

// A CUDA backend for memory and one StencilLaunches of kernel `kind` for stencil S's launches.
template <class S>
class Launcher {
public:
    explicit Launcher(KernelKind kind) : cfg_{kind, 0, 0, 0} {
        DeviceRuntime& rt = *device_runtime();
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        rt.select(rank % rt.visible_devices());
        be_ = make_device_backend<double>(rt, cfg_);
        lanes_ = std::make_unique<cuda::Lanes>();
        sums_ = std::make_unique<cuda::ResidualSums>(*lanes_);
        launches_ = std::make_unique<cuda::StencilLaunches<double>>(cfg_, *lanes_, *sums_);
    }
    [[nodiscard]] int row_alignment() const { return be_->row_alignment(); }
    // `values` in device memory, shaped by `e` (a coefficient field).
    Field<double> upload(const FieldExtents& e, const std::vector<double>& values) {
        Field<double> f = be_->allocate_field(e);
        be_->upload(values, f.view());
        GRIDSIM_CUDA_CHECK(cudaDeviceSynchronize());
        return f;
    }
    // `sweeps` sweeps (levels = 0) or one pass of `levels` levels over `owned`, from `init`.
    std::vector<double> run(const FieldExtents& e, const std::vector<double>& init,
                            const AxisCoeffs<double>& a, const Box& owned, int sweeps,
                            int levels = 0, bool as_boxes = false) {
        Field<double> f = be_->allocate_field(e);
        Field<double> g = be_->allocate_field(e);
        be_->upload(init, f.view());
        be_->upload(init, g.view());
        GRIDSIM_CUDA_CHECK(cudaDeviceSynchronize());
        if (levels > 0) {
            launches_->apply_levels_stencil<S>(a, f.view(), g.view(), owned, owned, levels,
                                               Lane::interior);
            std::swap(f, g);
        }
        for (int s = 0; s < sweeps; ++s) {
            if (as_boxes) {  // the owned box as two slabs along y, one launch
                Box lo = owned;
                Box hi = owned;
                lo.hi[1] = hi.lo[1] = (owned.lo[1] + owned.hi[1]) / 2;
                launches_->apply_boxes_stencil<S>(a, f.view(), g.view(), {lo, hi}, Lane::interior,
                                                  StencilSum::none, 0);
            } else {
                launches_->apply_stencil<S>(a, f.view(), g.view(), owned, Lane::interior,
                                            StencilSum::none);
            }
            std::swap(f, g);
        }
        lanes_->wait(Lane::interior);
        std::vector<double> host;
        be_->download(f.view(), host);
        return host;
    }

private:
    LaunchConfig cfg_;
    std::unique_ptr<Backend<double>> be_;
    std::unique_ptr<cuda::Lanes> lanes_;
    std::unique_ptr<cuda::ResidualSums> sums_;
    std::unique_ptr<cuda::StencilLaunches<double>> launches_;
};

// `sweeps` sweeps of the CPU loops.
template <class S, int Dims>
std::vector<double> cpu_sweeps(const FieldExtents& e, std::vector<double> f,
                               const AxisCoeffs<double>& a, const Box& owned, int sweeps) {
    std::vector<double> g = f;
    for (int s = 0; s < sweeps; ++s) {
        cpu::apply_box<double, Dims, S>({f.data(), e}, {g.data(), e}, owned, a, StencilSum::none);
        std::swap(f, g);
    }
    return f;
}

double max_difference(const std::vector<double>& x, const std::vector<double>& y) {
    double m = 0.0;
    for (std::size_t n = 0; n < x.size(); ++n) m = std::max(m, std::abs(x[n] - y[n]));
    return m;
}

// `sweeps` sweeps of S over an n-point box on every kernel that takes S (the naive and tiled
// kernels, the stream kernel and a run of boxes any radius, the wide stream kernel above 1;
// passes of `levels` levels radius 1 and, in 3D, the stars the wide levels kernel takes), against
// the CPU loops and bitwise against each other; the field's halo is as deep as any of them reads.
template <class S, int Dims>
void check_dims(const std::array<int, 3>& n, const AxisCoeffs<double>& a, int sweeps, int levels) {
    Launcher<S> naive(KernelKind::naive);
    const int halo = S::kRadius * std::max(1, levels);
    const FieldExtents e = FieldExtents::make(Dims, n, halo, naive.row_alignment());
    const std::vector<double> init = test::random_values<double>(e.total, 3 + Dims);
    const Box owned{{0, 0, 0}, {n[0], n[1], n[2]}};
    const std::vector<double> cpu = cpu_sweeps<S, Dims>(e, init, a, owned, sweeps);
    const std::vector<double> swept = naive.run(e, init, a, owned, sweeps);
    // GPU against CPU to rounding: nvcc contracts a*b + c into one fused multiply-add.
    EXPECT_LT(max_difference(swept, cpu), 1e-13) << "naive, " << Dims << "D";
    EXPECT_GT(max_difference(swept, init), 1e-3);
    Launcher<S> stream(KernelKind::stream);
    EXPECT_EQ(stream.run(e, init, a, owned, sweeps), swept) << "stream, " << Dims << "D";
    EXPECT_EQ(stream.run(e, init, a, owned, sweeps, 0, true), swept) << "boxes";
    EXPECT_EQ(Launcher<S>(KernelKind::tiled).run(e, init, a, owned, sweeps), swept) << "tiled";
    if constexpr (S::kRadius == 1 || (Dims == 3 && cuda::kWideLevelsStencil<S>)) {
        ASSERT_GT(levels, 1);
        EXPECT_EQ(stream.run(e, init, a, owned, 0, levels), swept) << levels << " levels";
    }
}

// A star of radius 1 that reads a coefficient field (random conductivities in [0.5, 1.5)): the
// naive kernel against the CPU loops, the wide stream and tiled kernels and a pass of `sweeps`
// levels (3D: 2, whose tile keeps the field's planes; 2D: its points gather their field stars)
// bitwise against it.
template <int Dims>
void check_field(const std::array<int, 3>& n, const AxisCoeffs<double>& a, int sweeps) {
    using S = HarmonicConduction;
    Launcher<S> naive(KernelKind::naive);
    const FieldExtents e = FieldExtents::make(Dims, n, std::max(2, sweeps), naive.row_alignment());
    const std::vector<double> init = test::random_values<double>(e.total, 5 + Dims);
    std::vector<double> f = test::random_values<double>(e.total, 7 + Dims);
    for (double& x : f) x = 1.0 + 0.5 * x;
    const Field<double> device_f = naive.upload(e, f);
    AxisCoeffs<double> on_host = a;
    on_host.field = f.data();
    AxisCoeffs<double> on_device = a;
    on_device.field = device_f.view().data;
    const Box owned{{0, 0, 0}, {n[0], n[1], n[2]}};
    const std::vector<double> swept = naive.run(e, init, on_device, owned, sweeps);
    EXPECT_LT(max_difference(swept, cpu_sweeps<S, Dims>(e, init, on_host, owned, sweeps)), 1e-13)
        << "naive, " << Dims << "D";
    EXPECT_GT(max_difference(swept, init), 1e-3);
    Launcher<S> stream(KernelKind::stream);
    EXPECT_EQ(stream.run(e, init, on_device, owned, sweeps), swept) << "wide stream, " << Dims;
    EXPECT_EQ(Launcher<S>(KernelKind::tiled).run(e, init, on_device, owned, sweeps), swept)
        << "tiled, " << Dims << "D";
    if constexpr (Dims == 3) ASSERT_EQ(sweeps, 2);
    EXPECT_EQ(stream.run(e, init, on_device, owned, 0, sweeps), swept) << sweeps << " levels";
}

TEST(GpuExtraStencil, AStarThatReadsAFieldRunsOnItsKernelsAndInPassesOfLevels) {
    GRIDSIM_REQUIRE_GPU();
    check_field<2>({301, 77, 1}, {0.1, 0.15, 0.0}, 3);
    check_field<2>({517, 45, 1}, {0.1, 0.15, 0.0}, 4);  // two tiles of 4 levels
    check_field<3>({67, 53, 29}, {0.1, 0.05, 0.12}, 2);
    check_field<3>({130, 97, 9}, {0.1, 0.05, 0.12}, 2);
}

TEST(GpuExtraStencil, EveryKernelFamilyRunsAStencilOfTheTestTree) {
    GRIDSIM_REQUIRE_GPU();
    check_dims<WeightedJacobi, 2>({301, 77, 1}, {1.0, 0.5, 0.0}, 4, 4);
    check_dims<WeightedJacobi, 3>({67, 41, 29}, {1.0, 0.5, 2.0}, 3, 3);
}

// A star of radius 2 reads two points along each axis: the naive, wide stream and tiled kernels,
// and in 3D passes of two levels (one tile, then several tiles and chunks).
TEST(GpuExtraStencil, TheNaiveWideStreamAndTiledKernelsRunAStarOfRadiusTwo) {
    GRIDSIM_REQUIRE_GPU();
    check_dims<FourthOrderHeat, 2>({301, 77, 1}, {0.05, 0.1, 0.0}, 3, 0);
    check_dims<FourthOrderHeat, 3>({37, 21, 19}, {0.05, 0.1, 0.08}, 2, 2);
    check_dims<FourthOrderHeat, 3>({131, 61, 45}, {0.05, 0.1, 0.08}, 2, 2);
}

}  // namespace
}  // namespace gridsim
