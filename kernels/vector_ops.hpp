// The per-point math of the CG solver's fused vector passes (parallel.cg_kernels = "fused"),
// written once: the CPU backend loops over these functions and the CUDA kernels call them.
#pragma once

#include "mesh/field.hpp"
#include "mesh/host_device.hpp"

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

// The new x, r and z of one point from its p, q, x and r, and its term of the next r . z (in
// double): the arithmetic every backend runs, whatever order it loads and stores in.
template <class T>
struct CgPoint {
    T x, r, z;
    double rz;
};
template <class T>
GRIDSIM_HD inline CgPoint<T> cg_update_values(const CgUpdate<T>& s, T p, T q, T x, T r) {
    const T rn = r - s.a * q;
    const T zn = s.precondition ? s.c * rn : rn;
    return {x + s.a * p, rn, zn, static_cast<double>(rn) * static_cast<double>(zn)};
}

// Updates point (i, j, k) and returns its term of the next r . z.
template <class T>
GRIDSIM_HD inline double cg_update_point(const CgUpdate<T>& s, int i, int j, int k) {
    const CgPoint<T> v =
        cg_update_values(s, s.p(i, j, k), s.q(i, j, k), s.x(i, j, k), s.r(i, j, k));
    s.x(i, j, k) = v.x;
    s.r(i, j, k) = v.r;
    if (s.precondition) s.z(i, j, k) = v.z;
    return v.rz;
}

// The new search direction: p = z + b p.
template <class T>
GRIDSIM_HD inline T xpay_value(T z, T b, T p) {
    return z + b * p;
}
template <class T>
GRIDSIM_HD inline void xpay_point(FieldView<const T> z, T b, FieldView<T> p, int i, int j, int k) {
    p(i, j, k) = xpay_value(z(i, j, k), b, p(i, j, k));
}

// One pass of the Chebyshev preconditioner (src/problems/chebyshev.hpp) at a point. The first
// (`start`, q holding r): w = r, d = b r, z = d (z += d where `accumulate`). Each after it
// (q = A d): w -= q, d = a d + b w, z += d.
template <class T>
struct ChebyshevStep {
    bool start;
    bool accumulate;
    T a, b;
    FieldView<const T> q;
    FieldView<T> w, d, z;
};
template <class T>
struct ChebyshevPoint {
    T w, d, z;
};
template <class T>
GRIDSIM_HD inline ChebyshevPoint<T> chebyshev_values(const ChebyshevStep<T>& s, T q, T w, T d,
                                                     T z) {
    if (s.start) {
        const T dn = s.b * q;
        return {q, dn, s.accumulate ? z + dn : dn};
    }
    const T wn = w - q;
    const T dn = s.a * d + s.b * wn;
    return {wn, dn, z + dn};
}
template <class T>
GRIDSIM_HD inline void chebyshev_point(const ChebyshevStep<T>& s, int i, int j, int k) {
    const T q = s.q(i, j, k);
    const ChebyshevPoint<T> v =
        s.start ? chebyshev_values(s, q, T(0), T(0), s.accumulate ? s.z(i, j, k) : T(0))
                : chebyshev_values(s, q, s.w(i, j, k), s.d(i, j, k), s.z(i, j, k));
    s.w(i, j, k) = v.w;
    s.d(i, j, k) = v.d;
    s.z(i, j, k) = v.z;
}

}  // namespace gridsim
