// The test tree's own stencil (support/extra_stencil.hpp) through every CUDA kernel family, by
// the templates the CUDA backend's run-time dispatch calls (StencilLaunches' *_stencil): the
// stream, tiled and naive sweeps and a run of boxes against the CPU loops, and passes of levels
// (2D and 3D) bitwise against the stream kernel's sweeps. Each rank runs it on its own GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "gpu/require_gpu.hpp"
#include "kernels/cpu/stencil_loops.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/stencil_launches.cuh"
#include "support/extra_stencil.hpp"

namespace gridsim {
namespace {

using test::WeightedJacobi;

// A CUDA backend for memory and one StencilLaunches of kernel `kind` for the launches.
class Launcher {
public:
    explicit Launcher(KernelKind kind) : cfg_{kind, 0, 0, 0} {
        int count = 0;
        cudaGetDeviceCount(&count);
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        cudaSetDevice(rank % count);
        be_ = make_cuda_backend<double>(cfg_);
        lanes_ = std::make_unique<cuda::Lanes>();
        sums_ = std::make_unique<cuda::ResidualSums>(*lanes_);
        launches_ = std::make_unique<cuda::StencilLaunches<double>>(cfg_, *lanes_, *sums_);
    }
    [[nodiscard]] int row_alignment() const { return be_->row_alignment(); }
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
            launches_->apply_levels_stencil<WeightedJacobi>(a, f.view(), g.view(), owned, owned,
                                                            levels, Lane::interior);
            std::swap(f, g);
        }
        for (int s = 0; s < sweeps; ++s) {
            if (as_boxes) {  // the owned box as two slabs along y, one launch
                Box lo = owned;
                Box hi = owned;
                lo.hi[1] = hi.lo[1] = (owned.lo[1] + owned.hi[1]) / 2;
                launches_->apply_boxes_stencil<WeightedJacobi>(a, f.view(), g.view(), {lo, hi},
                                                               Lane::interior, StencilSum::none, 0);
            } else {
                launches_->apply_stencil<WeightedJacobi>(a, f.view(), g.view(), owned,
                                                         Lane::interior, StencilSum::none);
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

std::vector<double> random_values(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<double> v(n);
    for (double& x : v) x = dist(gen);
    return v;
}

// `sweeps` sweeps of the CPU loops.
template <int Dims>
std::vector<double> cpu_sweeps(const FieldExtents& e, std::vector<double> f,
                               const AxisCoeffs<double>& a, const Box& owned, int sweeps) {
    std::vector<double> g = f;
    for (int s = 0; s < sweeps; ++s) {
        cpu::apply_box<double, Dims, WeightedJacobi>({f.data(), e}, {g.data(), e}, owned, a,
                                                     StencilSum::none);
        std::swap(f, g);
    }
    return f;
}

double max_difference(const std::vector<double>& x, const std::vector<double>& y) {
    double m = 0.0;
    for (std::size_t n = 0; n < x.size(); ++n) m = std::max(m, std::abs(x[n] - y[n]));
    return m;
}

template <int Dims>
void check_dims(const std::array<int, 3>& n, const AxisCoeffs<double>& a, int levels) {
    Launcher stream(KernelKind::stream);
    const FieldExtents e = FieldExtents::make(Dims, n, levels, stream.row_alignment());
    const std::vector<double> init = random_values(e.total, 3 + Dims);
    const Box owned{{0, 0, 0}, {n[0], n[1], n[2]}};
    const std::vector<double> cpu = cpu_sweeps<Dims>(e, init, a, owned, levels);
    const std::vector<double> swept = stream.run(e, init, a, owned, levels);
    // GPU against CPU to rounding: nvcc contracts a*b + c into one fused multiply-add.
    EXPECT_LT(max_difference(swept, cpu), 1e-13) << "stream, " << Dims << "D";
    EXPECT_GT(max_difference(swept, init), 1e-3);
    EXPECT_EQ(stream.run(e, init, a, owned, levels, 0, true), swept) << "boxes, " << Dims << "D";
    EXPECT_EQ(Launcher(KernelKind::tiled).run(e, init, a, owned, levels), swept) << "tiled";
    EXPECT_EQ(Launcher(KernelKind::naive).run(e, init, a, owned, levels), swept) << "naive";
    EXPECT_EQ(stream.run(e, init, a, owned, 0, levels), swept)
        << levels << " levels, " << Dims << "D";
}

TEST(GpuExtraStencil, EveryKernelFamilyRunsAStencilOfTheTestTree) {
    GRIDSIM_REQUIRE_GPU();
    check_dims<2>({301, 77, 1}, {1.0, 0.5, 0.0}, 4);
    check_dims<3>({67, 41, 29}, {1.0, 0.5, 2.0}, 3);
}

}  // namespace
}  // namespace gridsim
