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

// Each move as the new value of its point (`*_value`, which a GPU thread computes for several
// points before it stores any) and the store (`*_point`).

// coarse(i, j, k) = the full-weighted sum of fine around the point it lies on; the fine field's
// halos are read, so they must hold the neighbours' points.
template <class T>
GRIDSIM_HD inline T restrict_value(const GridTransfer<T>& t, int i, int j, int k) {
    const int c[3] = {i, j, k};
    int f[3];
    int reach[3];
    for (int d = 0; d < 3; ++d) {
        f[d] = t.halved[d] != 0 ? 2 * c[d] + t.shift[d] : c[d];
        reach[d] = t.halved[d];
    }
    T sum = T(0);
    for (int a = -reach[2]; a <= reach[2]; ++a) {
        const T wz = reach[2] == 0 ? T(1) : (a == 0 ? T(0.5) : T(0.25));
        for (int b = -reach[1]; b <= reach[1]; ++b) {
            const T wy = reach[1] == 0 ? T(1) : (b == 0 ? T(0.5) : T(0.25));
            for (int e = -reach[0]; e <= reach[0]; ++e) {
                const T wx = reach[0] == 0 ? T(1) : (e == 0 ? T(0.5) : T(0.25));
                sum += wz * wy * wx * t.fine(f[0] + e, f[1] + b, f[2] + a);
            }
        }
    }
    return sum;
}
template <class T>
GRIDSIM_HD inline void restrict_point(const GridTransfer<T>& t, int i, int j, int k) {
    t.coarse(i, j, k) = restrict_value(t, i, j, k);
}

// fine(i, j, k) += the coarse field interpolated linearly to it: the coarse point it lies on, or
// the mean of the two it lies between, on each halved axis. The coarse field's halos are read.
template <class T>
GRIDSIM_HD inline T prolong_value(const GridTransfer<T>& t, int i, int j, int k) {
    const int f[3] = {i, j, k};
    int c[3];
    int between[3];
    for (int d = 0; d < 3; ++d) {
        if (t.halved[d] == 0) {
            c[d] = f[d];
            between[d] = 0;
            continue;
        }
        const int twice = f[d] - t.shift[d];  // twice the coarse position
        between[d] = twice & 1;
        c[d] = (twice - between[d]) / 2;  // exact: an even numerator
    }
    T sum = T(0);
    for (int a = 0; a <= between[2]; ++a) {
        const T wz = between[2] != 0 ? T(0.5) : T(1);
        for (int b = 0; b <= between[1]; ++b) {
            const T wy = between[1] != 0 ? T(0.5) : T(1);
            for (int e = 0; e <= between[0]; ++e) {
                const T wx = between[0] != 0 ? T(0.5) : T(1);
                sum += wz * wy * wx * t.coarse(c[0] + e, c[1] + b, c[2] + a);
            }
        }
    }
    return t.fine(i, j, k) + sum;
}
template <class T>
GRIDSIM_HD inline void prolong_point(const GridTransfer<T>& t, int i, int j, int k) {
    t.fine(i, j, k) = prolong_value(t, i, j, k);
}

// out = a in + b A(in) + c add at a point, A the heat stencil with coefficients `r` (a level's
// fused passes: its residual b - A x, and a smoothing step of degree one, alpha b + beta A b).
// in's halos must hold the neighbours' points; `add` is read where c is not zero, at the point
// itself only, so it may be `out`.
template <class T>
struct StencilCombination {
    HeatCoeffs<T> r;
    T a, b, c;
    int dims;
    FieldView<const T> in, add;
    FieldView<T> out;
};
template <class T>
GRIDSIM_HD inline T combination_value(const StencilCombination<T>& s, int i, int j, int k) {
    const T au = s.dims == 3 ? stencil_at<T, 3, StencilKind::heat>(s.in, i, j, k, s.r)
                             : stencil_at<T, 2, StencilKind::heat>(s.in, i, j, k, s.r);
    const T sum = s.a * s.in(i, j, k) + s.b * au;
    return s.c != T(0) ? sum + s.c * s.add(i, j, k) : sum;
}
template <class T>
GRIDSIM_HD inline void combination_point(const StencilCombination<T>& s, int i, int j, int k) {
    s.out(i, j, k) = combination_value(s, i, j, k);
}

}  // namespace gridsim
