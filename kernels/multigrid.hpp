// The multigrid preconditioner's moves between a grid and the next coarser one
// (src/problems/multigrid.hpp), per point, written once: the CPU backend loops over these
// functions and the CUDA kernels call them.
//
// On a halved axis, coarse point c of a rank's block lies on fine point 2c + shift of the fine
// block (shift: twice the coarse block's offset minus the fine block's, 0 or 1); on an axis that
// is not halved, on fine point c. Restriction is full weighting (1/4, 1/2, 1/4 along each halved
// axis) and prolongation linear interpolation, so that restriction is 2^-h times the transpose
// of prolongation (h halved axes): the V-cycle stays symmetric.
#pragma once

#include "kernels/stencil.hpp"
#include "mesh/field.hpp"
#include "mesh/host_device.hpp"

namespace gridsim {

template <class T>
struct GridTransfer {
    FieldView<T> fine;
    FieldView<T> coarse;
    int halved[3];  // 1 where the axis halves, else 0
    int shift[3];   // 0 or 1 on a halved axis, 0 otherwise
};

// The halved axes as types (1 where the axis halves), so that a move's loops over its reach have
// bounds the compiler knows: by_halvings(t, f) calls f(Halvings<x, y, z>{}) for t's axes.
template <int X, int Y, int Z>
struct Halvings {
    static constexpr int x = X, y = Y, z = Z;
};
template <class T, class F>
GRIDSIM_HD inline decltype(auto) by_halvings(const GridTransfer<T>& t, F&& f) {
    switch (t.halved[0] + 2 * t.halved[1] + 4 * t.halved[2]) {
        case 1:
            return f(Halvings<1, 0, 0>{});
        case 2:
            return f(Halvings<0, 1, 0>{});
        case 3:
            return f(Halvings<1, 1, 0>{});
        case 4:
            return f(Halvings<0, 0, 1>{});
        case 5:
            return f(Halvings<1, 0, 1>{});
        case 6:
            return f(Halvings<0, 1, 1>{});
        case 7:
            return f(Halvings<1, 1, 1>{});
        default:
            return f(Halvings<0, 0, 0>{});
    }
}

// Each move as the new value of its point (`*_at` for known halvings, `*_value` for t's), which a
// GPU thread computes before it stores, and the store (`*_point`).

// coarse(i, j, k) = the full-weighted sum of fine around the point it lies on; the fine field's
// halos are read, so they must hold the neighbours' points.
template <class T, class H>
GRIDSIM_HD inline T restrict_at(const GridTransfer<T>& t, int i, int j, int k) {
    const int fx = H::x != 0 ? 2 * i + t.shift[0] : i;
    const int fy = H::y != 0 ? 2 * j + t.shift[1] : j;
    const int fz = H::z != 0 ? 2 * k + t.shift[2] : k;
    T sum = T(0);
    for (int a = -H::z; a <= H::z; ++a) {
        const T wz = H::z == 0 ? T(1) : (a == 0 ? T(0.5) : T(0.25));
        for (int b = -H::y; b <= H::y; ++b) {
            const T wy = H::y == 0 ? T(1) : (b == 0 ? T(0.5) : T(0.25));
            for (int e = -H::x; e <= H::x; ++e) {
                const T wx = H::x == 0 ? T(1) : (e == 0 ? T(0.5) : T(0.25));
                sum += wz * wy * wx * t.fine(fx + e, fy + b, fz + a);
            }
        }
    }
    return sum;
}
template <class T>
GRIDSIM_HD inline T restrict_value(const GridTransfer<T>& t, int i, int j, int k) {
    return by_halvings(t, [&](auto h) { return restrict_at<T, decltype(h)>(t, i, j, k); });
}
template <class T, class H>
GRIDSIM_HD inline void restrict_point(const GridTransfer<T>& t, int i, int j, int k) {
    t.coarse(i, j, k) = restrict_at<T, H>(t, i, j, k);
}

// fine(i, j, k) += the coarse field interpolated linearly to it: the coarse point it lies on, or
// the mean of the two it lies between, on each halved axis. On a halved axis both coarse
// neighbours are read, the second with weight 0 where the point lies on the first (an exact
// zero added: the same sum), so every point takes the same steps. The coarse field's halos are
// read.
template <class T>
struct ProlongAxis {
    int c;     // the coarse point at or below
    T w0, w1;  // the weights of c and c + 1
};
template <class T, int Halved>
GRIDSIM_HD inline ProlongAxis<T> prolong_axis(int f, int shift) {
    if (Halved == 0) return {f, T(1), T(0)};
    const int twice = f - shift;  // twice the coarse position
    const int between = twice & 1;
    return {(twice - between) / 2, between != 0 ? T(0.5) : T(1), between != 0 ? T(0.5) : T(0)};
}
template <class T, class H>
GRIDSIM_HD inline T prolong_at(const GridTransfer<T>& t, int i, int j, int k) {
    const ProlongAxis<T> x = prolong_axis<T, H::x>(i, t.shift[0]);
    const ProlongAxis<T> y = prolong_axis<T, H::y>(j, t.shift[1]);
    const ProlongAxis<T> z = prolong_axis<T, H::z>(k, t.shift[2]);
    T sum = T(0);
    for (int a = 0; a <= H::z; ++a) {
        const T wz = a == 0 ? z.w0 : z.w1;
        for (int b = 0; b <= H::y; ++b) {
            const T wy = b == 0 ? y.w0 : y.w1;
            for (int e = 0; e <= H::x; ++e) {
                const T wx = e == 0 ? x.w0 : x.w1;
                sum += wz * wy * wx * t.coarse(x.c + e, y.c + b, z.c + a);
            }
        }
    }
    return t.fine(i, j, k) + sum;
}
template <class T>
GRIDSIM_HD inline T prolong_value(const GridTransfer<T>& t, int i, int j, int k) {
    return by_halvings(t, [&](auto h) { return prolong_at<T, decltype(h)>(t, i, j, k); });
}
template <class T, class H>
GRIDSIM_HD inline void prolong_point(const GridTransfer<T>& t, int i, int j, int k) {
    t.fine(i, j, k) = prolong_at<T, H>(t, i, j, k);
}

// out = a in + b A(in) + c add at a point, A the heat stencil with coefficients `r` (a level's
// fused passes: its residual b - A x, and a smoothing step of degree one, alpha b + beta A b).
// in's halos must hold the neighbours' points; `add` is read where c is not zero, at the point
// itself only, so it may be `out`.
template <int Dims, bool Add>
struct Combined {
    static constexpr int dims = Dims;
    static constexpr bool add = Add;
};
template <class T>
struct StencilCombination {
    AxisCoeffs<T> r;
    T a, b, c;
    int dims;
    FieldView<const T> in, add;
    FieldView<T> out;
};
template <class T, int Dims, bool Add>
GRIDSIM_HD inline T combination_at(const StencilCombination<T>& s, int i, int j, int k) {
    const T au = stencil_at<T, Dims, HeatStencil>(s.in, i, j, k, s.r);
    const T sum = s.a * s.in(i, j, k) + s.b * au;
    if constexpr (Add) return sum + s.c * s.add(i, j, k);
    return sum;
}
// Whether a combination reads `add` (c not zero), and its dimensions, as template arguments:
// by_combination(s, f) calls f(Combined<dims, add>{}).
template <class T, class F>
GRIDSIM_HD inline decltype(auto) by_combination(const StencilCombination<T>& s, F&& f) {
    const bool add = s.c != T(0);
    if (s.dims == 3) return add ? f(Combined<3, true>{}) : f(Combined<3, false>{});
    return add ? f(Combined<2, true>{}) : f(Combined<2, false>{});
}
template <class T>
GRIDSIM_HD inline T combination_value(const StencilCombination<T>& s, int i, int j, int k) {
    return by_combination(s, [&](auto c) {
        using C = decltype(c);
        return combination_at<T, C::dims, C::add>(s, i, j, k);
    });
}
template <class T, class C>
GRIDSIM_HD inline void combination_point(const StencilCombination<T>& s, int i, int j, int k) {
    s.out(i, j, k) = combination_at<T, C::dims, C::add>(s, i, j, k);
}

}  // namespace gridsim
