// A stencil defined in the test tree alone (support/extra_stencil.hpp) through the CPU loops that
// every CPU sweep and pass runs: against its definition written directly, with the sum it folds,
// and a pass of levels against sweeps. The CUDA kernel families run it in
// gpu/test_gpu_extra_stencil.cu.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/stencil_loops.hpp"
#include "support/extra_stencil.hpp"

using namespace gridsim;
using test::WeightedJacobi;

namespace {

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<T> v(n);
    for (T& x : v) x = static_cast<T>(dist(gen));
    return v;
}

// The stencil over the owned points of odd-sized fields: each point as its definition, the sum
// of squared changes as summed here, every point outside the box untouched.
template <class T, int Dims>
void check_sweep(double tolerance) {
    const std::array<int, 3> n =
        Dims == 3 ? std::array<int, 3>{7, 5, 3} : std::array<int, 3>{9, 7, 1};
    const FieldExtents e = FieldExtents::make(Dims, n, 1);
    std::vector<T> in = random_values<T>(e.total, 7);
    std::vector<T> out(e.total, T(0));
    const FieldView<const T> iv{in.data(), e};
    const Box owned{{0, 0, 0}, {n[0], n[1], n[2]}};
    const AxisCoeffs<T> a{T(1.0), T(0.5), T(Dims == 3 ? 2.0 : 0.0)};
    const double sum = cpu::apply_box<T, Dims, WeightedJacobi>(iv, FieldView<T>{out.data(), e},
                                                               owned, a, StencilSum::change);
    auto at = [&](int i, int j, int k) { return static_cast<double>(in[e.index(i, j, k)]); };
    double expect_sum = 0.0;
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i) {
                const double want =
                    test::weighted_jacobi_reference<Dims>(at, i, j, k, a.rx, a.ry, a.rz);
                const double got = out[e.index(i, j, k)];
                EXPECT_NEAR(got, want, tolerance) << i << "," << j << "," << k;
                expect_sum += (got - at(i, j, k)) * (got - at(i, j, k));
            }
    EXPECT_NEAR(sum, expect_sum, 1e-12 * expect_sum);
    EXPECT_GT(expect_sum, 0.0);
    EXPECT_EQ(out[e.index(-1, 0, 0)], T(0));
    EXPECT_EQ(out[e.index(n[0], n[1] - 1, 0)], T(0));
}

}  // namespace

TEST(ExtraStencil, SweepsAsItsDefinitionIn2dAnd3d) {
    check_sweep<double, 2>(1e-15);
    check_sweep<double, 3>(1e-15);
    check_sweep<float, 2>(1e-6);
    check_sweep<float, 3>(1e-6);
}

// Two levels of a pass (each level over the box grown by the levels still to come, from the
// level before) give the bits of two sweeps; points outside `live` keep their value.
TEST(ExtraStencil, APassOfLevelsIsBitwiseItsSweeps) {
    const FieldExtents e = FieldExtents::make(3, {6, 5, 4}, 2);
    const std::vector<double> in = random_values<double>(e.total, 11);
    const AxisCoeffs<double> a{1.0, 3.0, 0.25};
    const Box live{{0, 0, 0}, {6, 5, 4}};
    std::vector<double> mid = in;
    std::vector<double> pass = in;
    const Box grown{{-1, -1, -1}, {7, 6, 5}};
    cpu::level_box<double, 3, WeightedJacobi>({in.data(), e}, {mid.data(), e}, grown, live, a);
    cpu::level_box<double, 3, WeightedJacobi>({mid.data(), e}, {pass.data(), e}, live, live, a);
    std::vector<double> s1 = in;
    std::vector<double> s2 = in;
    cpu::apply_box<double, 3, WeightedJacobi>({in.data(), e}, {s1.data(), e}, live, a,
                                              StencilSum::none);
    cpu::apply_box<double, 3, WeightedJacobi>({s1.data(), e}, {s2.data(), e}, live, a,
                                              StencilSum::none);
    EXPECT_EQ(pass, s2);
    EXPECT_NE(s2, in);
}
