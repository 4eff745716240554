// Stencils defined in the test tree alone (support/extra_stencil.hpp), of radius 1 and 2, through
// the CPU loops that every CPU sweep and pass runs: against their definitions written directly,
// with the sums they fold, and a pass of levels against sweeps. The CUDA kernel families run them
// in gpu/test_gpu_extra_stencil.cu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/cpu/stencil_loops.hpp"
#include "support/extra_stencil.hpp"
#include "support/random_values.hpp"

using namespace gridsim;
using test::FourthOrderHeat;
using test::HarmonicConduction;
using test::WeightedJacobi;

namespace {

// Each test stencil's definition at (i, j, k) of a field read through `at` (and its coefficient
// field through `fat`).
template <class S, int Dims, class F, class G>
double reference(F&& at, G&& fat, int i, int j, int k, const AxisCoeffs<double>& a) {
    if constexpr (std::is_same_v<S, WeightedJacobi>) {
        return test::weighted_jacobi_reference<Dims>(at, i, j, k, a.rx, a.ry, a.rz);
    } else if constexpr (std::is_same_v<S, HarmonicConduction>) {
        return test::harmonic_conduction_reference<Dims>(at, fat, i, j, k, a.rx, a.ry, a.rz);
    } else {
        return test::fourth_order_heat_reference<Dims>(at, i, j, k, a.rx, a.ry, a.rz);
    }
}

// The stencil over the owned points of odd-sized fields: each point as its definition, the sum
// it folds as the definition's values give it, every point outside the box untouched. A stencil
// that reads a coefficient field reads conductivities in [0.5, 1.5).
template <class S, class T, int Dims>
void check_sweep(double tolerance) {
    const std::array<int, 3> n =
        Dims == 3 ? std::array<int, 3>{7, 5, 3} : std::array<int, 3>{9, 7, 1};
    const FieldExtents e = FieldExtents::make(Dims, n, S::kRadius);
    std::vector<T> in = test::random_values<T>(e.total, 7);
    std::vector<T> f = test::random_values<T>(e.total, 12);
    for (T& x : f) x = T(1) + T(0.5) * x;
    std::vector<T> out(e.total, T(0));
    const FieldView<const T> iv{in.data(), e};
    const Box owned{{0, 0, 0}, {n[0], n[1], n[2]}};
    const AxisCoeffs<double> ad{0.1, 0.05, Dims == 3 ? 0.2 : 0.0};
    const AxisCoeffs<T> a{T(ad.rx), T(ad.ry), T(ad.rz), kReadsField<S> ? f.data() : nullptr};
    const double sum =
        cpu::apply_box<T, Dims, S>(iv, FieldView<T>{out.data(), e}, owned, a, S::kSum);
    auto at = [&](int i, int j, int k) { return static_cast<double>(in[e.index(i, j, k)]); };
    auto fat = [&](int i, int j, int k) { return static_cast<double>(f[e.index(i, j, k)]); };
    double expect_sum = 0.0;
    double moved = 0.0;
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i) {
                const double want = reference<S, Dims>(at, fat, i, j, k, ad);
                const double got = out[e.index(i, j, k)];
                EXPECT_NEAR(got, want, tolerance) << i << "," << j << "," << k;
                const double c = at(i, j, k);
                expect_sum += S::kSum == StencilSum::change ? (want - c) * (want - c) : want * c;
                moved = std::max(moved, std::abs(want - c));
            }
    EXPECT_NEAR(sum, expect_sum, 1e-5 * std::abs(expect_sum));
    EXPECT_NE(expect_sum, 0.0);
    EXPECT_GT(moved, 1e-2);
    EXPECT_EQ(out[e.index(-1, 0, 0)], T(0));
    EXPECT_EQ(out[e.index(n[0], n[1] - 1, 0)], T(0));
}

}  // namespace

TEST(ExtraStencil, SweepsAsItsDefinitionIn2dAnd3d) {
    check_sweep<WeightedJacobi, double, 2>(1e-15);
    check_sweep<WeightedJacobi, double, 3>(1e-15);
    check_sweep<WeightedJacobi, float, 2>(1e-6);
    check_sweep<WeightedJacobi, float, 3>(1e-6);
}

// A star of radius 2 reads two points along each axis, through the same loops.
TEST(ExtraStencil, AStarOfRadiusTwoSweepsAsItsDefinition) {
    check_sweep<FourthOrderHeat, double, 2>(1e-14);
    check_sweep<FourthOrderHeat, double, 3>(1e-14);
    check_sweep<FourthOrderHeat, float, 2>(1e-5);
    check_sweep<FourthOrderHeat, float, 3>(1e-5);
}

TEST(ExtraStencil, AStarThatReadsACoefficientFieldSweepsAsItsDefinition) {
    static_assert(kReadsField<HarmonicConduction> && HarmonicConduction::kRadius == 1);
    check_sweep<HarmonicConduction, double, 2>(1e-14);
    check_sweep<HarmonicConduction, double, 3>(1e-14);
    check_sweep<HarmonicConduction, float, 2>(1e-5);
    check_sweep<HarmonicConduction, float, 3>(1e-5);
}

// Two levels of a pass (each level over the box grown by the levels still to come, from the
// level before) give the bits of two sweeps; points outside `live` keep their value.
TEST(ExtraStencil, APassOfLevelsIsBitwiseItsSweeps) {
    const FieldExtents e = FieldExtents::make(3, {6, 5, 4}, 2);
    const std::vector<double> in = test::random_values<double>(e.total, 11);
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
