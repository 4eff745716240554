// Stencils the engine does not have, defined here alone: the proof that a stencil is a type and
// one point function (kernels/stencil.hpp), which the CPU loops (kernels/cpu/stencil_loops.hpp)
// and the CUDA kernel families (StencilLaunches' *_stencil templates) take as they are.
#pragma once

#include "kernels/stencil.hpp"

namespace gridsim::test {

// Weighted Jacobi (weight 2/3) for an anisotropic Laplacian with axis weights a_d = r.r{x,y,z}:
// u' = u / 3 + (2/3) sum_d a_d (u[-e_d] + u[+e_d]) / (2 sum_d a_d). Sums its squared change.
struct WeightedJacobi {
    static constexpr int kRadius = 1;
    static constexpr StencilSum kSum = StencilSum::change;
    template <int Dims, class T>
    GRIDSIM_HD static T point(const Star<T>& u, const AxisCoeffs<T>& a) {
        T pull = a.rx * (u(0, -1) + u(0, 1)) + a.ry * (u(1, -1) + u(1, 1));
        T weight = a.rx + a.ry;
        if constexpr (Dims == 3) {
            pull += a.rz * (u(2, -1) + u(2, 1));
            weight += a.rz;
        }
        return u() / T(3) + T(2) / T(3) * pull / (T(2) * weight);
    }
};

// Explicit heat with the fourth-order central second difference, a star of radius 2:
// u' = u + sum_d r_d (-u[-2e_d] + 16 u[-e_d] - 30 u + 16 u[+e_d] - u[+2e_d]) / 12.
struct FourthOrderHeat {
    static constexpr int kRadius = 2;
    static constexpr StencilSum kSum = StencilSum::product;
    template <int Dims, class T>
    GRIDSIM_HD static T point(const Star<T, 2>& u, const AxisCoeffs<T>& r) {
        const T c = u();
        auto second = [&](int d) {
            return (T(16) * (u(d, -1) + u(d, 1)) - (u(d, -2) + u(d, 2)) - T(30) * c) / T(12);
        };
        T v = c + r.rx * second(0) + r.ry * second(1);
        if constexpr (Dims == 3) v += r.rz * second(2);
        return v;
    }
};

// Heat through a field of conductivities f, each face conducting with the harmonic mean of its
// two points', a star of radius 1 that reads a coefficient field: u' = u + sum_d r_d (k+
// (u[+e_d] - u) - k- (u - u[-e_d])), k+- = 2 f f[+-e_d] / (f + f[+-e_d]).
struct HarmonicConduction {
    static constexpr int kRadius = 1;
    static constexpr StencilSum kSum = StencilSum::product;
    static constexpr bool kField = true;
    template <int Dims, class T>
    GRIDSIM_HD static T point(const Star<T>& u, const Star<T>& f, const AxisCoeffs<T>& r) {
        const T rd[3] = {r.rx, r.ry, r.rz};
        const T c = u();
        T v = c;
        for (int d = 0; d < Dims; ++d) {
            const T kp = T(2) * f() * f(d, 1) / (f() + f(d, 1));
            const T km = T(2) * f() * f(d, -1) / (f() + f(d, -1));
            v += rd[d] * (kp * (u(d, 1) - c) - km * (c - u(d, -1)));
        }
        return v;
    }
};

// The same updates written directly from their definitions, for the checks: the value at (i, j, k)
// of a field read through `at(i, j, k)` (and a coefficient field through `f(i, j, k)`).
template <int Dims, class F>
double weighted_jacobi_reference(F&& at, int i, int j, int k, double ax, double ay, double az) {
    double pull =
        ax * (at(i - 1, j, k) + at(i + 1, j, k)) + ay * (at(i, j - 1, k) + at(i, j + 1, k));
    double weight = ax + ay;
    if (Dims == 3) {
        pull += az * (at(i, j, k - 1) + at(i, j, k + 1));
        weight += az;
    }
    return at(i, j, k) / 3.0 + 2.0 / 3.0 * pull / (2.0 * weight);
}

template <int Dims, class F>
double fourth_order_heat_reference(F&& at, int i, int j, int k, double rx, double ry, double rz) {
    const int o[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    const double r[3] = {rx, ry, rz};
    double v = at(i, j, k);
    for (int d = 0; d < Dims; ++d) {
        auto u = [&](int s) { return at(i + s * o[d][0], j + s * o[d][1], k + s * o[d][2]); };
        v += r[d] * (-u(-2) + 16.0 * u(-1) - 30.0 * u(0) + 16.0 * u(1) - u(2)) / 12.0;
    }
    return v;
}

template <int Dims, class F, class G>
double harmonic_conduction_reference(F&& at, G&& f, int i, int j, int k, double rx, double ry,
                                     double rz) {
    const int o[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    const double r[3] = {rx, ry, rz};
    double v = at(i, j, k);
    for (int d = 0; d < Dims; ++d) {
        auto face = [&](int s) {  // the face towards the neighbour s points along d
            const int a = i + s * o[d][0], b = j + s * o[d][1], c = k + s * o[d][2];
            const double mean = 2.0 * f(i, j, k) * f(a, b, c) / (f(i, j, k) + f(a, b, c));
            return mean * (at(a, b, c) - at(i, j, k));
        };
        v += r[d] * (face(1) + face(-1));
    }
    return v;
}

}  // namespace gridsim::test
