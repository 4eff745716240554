// The per-point math of every problem, written once. The CPU backend loops over these
// functions and the CUDA kernels call them, so both backends compute the same expression in
// the same order (README, "Deck keys", gives the definitions).
#pragma once

#include <stdexcept>
#include <type_traits>

#include "mesh/field.hpp"
#include "mesh/host_device.hpp"

namespace gridsim {

// Star stencils of radius 1: the halo width every field carries.
constexpr int kStencilRadius = 1;

// r_d = alpha * dt / h_d^2 per axis (rz = 0 in 2D).
template <class T>
struct HeatCoeffs {
    T rx, ry, rz;
};

// FTCS heat: u' = u + sum_d r_d (u[+e_d] + u[-e_d] - 2u).
template <class T>
GRIDSIM_HD inline T heat_point(T c, T xm, T xp, T ym, T yp, const HeatCoeffs<T>& r) {
    const T two_c = T(2) * c;
    return c + r.rx * (xm + xp - two_c) + r.ry * (ym + yp - two_c);
}
template <class T>
GRIDSIM_HD inline T heat_point(T c, T xm, T xp, T ym, T yp, T zm, T zp, const HeatCoeffs<T>& r) {
    const T two_c = T(2) * c;
    return c + r.rx * (xm + xp - two_c) + r.ry * (ym + yp - two_c) + r.rz * (zm + zp - two_c);
}

// Jacobi for Laplace: the mean of the 2*dims neighbours.
template <class T>
GRIDSIM_HD inline T jacobi_point(T xm, T xp, T ym, T yp) {
    return T(0.25) * (xm + xp + ym + yp);
}
template <class T>
GRIDSIM_HD inline T jacobi_point(T xm, T xp, T ym, T yp, T zm, T zp) {
    return (xm + xp + ym + yp + zm + zp) * (T(1) / T(6));
}

enum class StencilKind { heat, jacobi };

// f(std::integral_constant<StencilKind, kind>) for a run-time `kind`: the one dispatch from a
// run-time kind to compiled code (CPU loops, CUDA launches). A kind without a case here does not
// compile (-Werror=switch), nor one without a branch in stencil_point.
template <class F>
decltype(auto) by_stencil_kind(StencilKind kind, F&& f) {
    switch (kind) {
        case StencilKind::heat:
            return f(std::integral_constant<StencilKind, StencilKind::heat>{});
        case StencilKind::jacobi:
            return f(std::integral_constant<StencilKind, StencilKind::jacobi>{});
    }
    throw std::logic_error("by_stencil_kind: not a stencil kind");
}

// What a stencil pass sums over its points beside the update, in double: nothing; the squared
// change (out - in)^2 (jacobi's residual); or the product in * out (the CG's p . A p).
enum class StencilSum { none, change, product };
template <StencilSum Sum, class T>
GRIDSIM_HD inline double stencil_sum_term(T updated, T old) {
    if constexpr (Sum == StencilSum::product) {
        return static_cast<double>(updated) * static_cast<double>(old);
    } else {
        const double d = static_cast<double>(updated) - static_cast<double>(old);
        return d * d;
    }
}

template <class T>
struct StencilParams {
    StencilKind kind = StencilKind::heat;
    HeatCoeffs<T> r{};  // heat only
};

// The update of one point from its value and its neighbours' (zm, zp unused in 2D): the single
// dispatch every kernel variant goes through, so all compute the same expression.
template <class T, int Dims, StencilKind Kind>
GRIDSIM_HD inline T stencil_point(T c, T xm, T xp, T ym, T yp, T zm, T zp, const HeatCoeffs<T>& r) {
    if constexpr (Kind == StencilKind::heat) {
        if constexpr (Dims == 2) {
            return heat_point(c, xm, xp, ym, yp, r);
        } else {
            return heat_point(c, xm, xp, ym, yp, zm, zp, r);
        }
    } else if constexpr (Kind == StencilKind::jacobi) {
        if constexpr (Dims == 2) {
            return jacobi_point(xm, xp, ym, yp);
        } else {
            return jacobi_point(xm, xp, ym, yp, zm, zp);
        }
    } else {
        static_assert(Kind != Kind, "stencil_point: a stencil kind without its point function");
    }
}

// Gathers the neighbours of (i, j, k) from memory and applies the stencil: the whole update of
// one point for loop-based code (CPU backend, naive GPU kernel).
template <class T, int Dims, StencilKind Kind>
GRIDSIM_HD inline T stencil_at(FieldView<const T> u, int i, int j, int k, const HeatCoeffs<T>& r) {
    const T* p = u.data + u.ext.index(i, j, k);
    const auto sy = u.ext.sy;
    if constexpr (Dims == 2) {  // no z halo exists in 2D: never read one
        return stencil_point<T, 2, Kind>(p[0], p[-1], p[1], p[-sy], p[sy], p[0], p[0], r);
    } else {
        const auto sz = u.ext.sz;
        return stencil_point<T, 3, Kind>(p[0], p[-1], p[1], p[-sy], p[sy], p[-sz], p[sz], r);
    }
}

}  // namespace gridsim
