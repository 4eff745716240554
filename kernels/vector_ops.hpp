// The per-point math of the CG solver's fused vector passes (parallel.cg_kernels = "fused"),
// written once: the CPU backend loops over these functions and the CUDA kernels call them.
#pragma once

#include "field/field.hpp"
#include "field/host_device.hpp"

namespace gridsim {

// One CG update of x and r along p and q = A p, with the (diagonal) preconditioner applied to
// the new r: x += a p, r -= a q, z = c r (c = 1 / diagonal; z is r itself without one).
template <class T>
struct CgUpdate {
    T a;
    T c;
    bool precondition;
    FieldView<const T> p, q;
    FieldView<T> x, r, z;
};

// Updates point (i, j, k) and returns its term of the next r . z, in double.
template <class T>
GRIDSIM_HD inline double cg_update_point(const CgUpdate<T>& s, int i, int j, int k) {
    const T rn = s.r(i, j, k) - s.a * s.q(i, j, k);
    s.x(i, j, k) += s.a * s.p(i, j, k);
    s.r(i, j, k) = rn;
    if (!s.precondition) return static_cast<double>(rn) * static_cast<double>(rn);
    const T zn = s.c * rn;
    s.z(i, j, k) = zn;
    return static_cast<double>(rn) * static_cast<double>(zn);
}

// The new search direction: p = z + b p.
template <class T>
GRIDSIM_HD inline void xpay_point(FieldView<const T> z, T b, FieldView<T> p, int i, int j, int k) {
    p(i, j, k) = z(i, j, k) + b * p(i, j, k);
}

}  // namespace gridsim
