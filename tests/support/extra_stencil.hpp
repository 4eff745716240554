// A stencil the engine does not have, defined here alone: the proof that a stencil is a type and
// one point function (kernels/stencil.hpp), which the CPU loops (kernels/cpu/stencil_loops.hpp)
// and every CUDA kernel family (StencilLaunches' *_stencil templates) take as it is.
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

// The same update written directly from its definition, for the checks: the value at (i, j, k)
// of a field read through `at(i, j, k)`.
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

}  // namespace gridsim::test
