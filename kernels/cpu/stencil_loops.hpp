// The CPU backend's stencil loops, templates over the stencil type (kernels/stencil.hpp): the
// CPU side of the extension point a new stencil plugs into. x runs innermost so the compiler can
// vectorise the contiguous rows.
#pragma once

#include <algorithm>

#include "kernels/stencil.hpp"
#include "mesh/box.hpp"

namespace gridsim::cpu {

// row(j, k) for every row of `b`, z outermost.
template <class F>
void for_each_row(const Box& b, F&& row) {
    for (int k = b.lo[2]; k < b.hi[2]; ++k) {
        for (int j = b.lo[1]; j < b.hi[1]; ++j) row(j, k);
    }
}

// `sum` plus stencil_sum_term of row (j, k) of `b`, x in order: the one summing loop, so a
// sweep and a level of a pass (apply_levels_summing) give the same bits.
template <StencilSum Sum, class T>
double add_row_terms(double sum, FieldView<const T> now, FieldView<const T> before, const Box& b,
                     int j, int k) {
    for (int i = b.lo[0]; i < b.hi[0]; ++i)
        sum += stencil_sum_term<Sum>(now(i, j, k), before(i, j, k));
    return sum;
}

// Updates `b` and returns the sum of stencil_sum_term over it (0 for StencilSum::none).
template <class T, int Dims, class S, StencilSum Sum>
double apply_box(FieldView<const T> in, FieldView<T> out, const Box& b, const AxisCoeffs<T>& r) {
    const PointCoeffs<S, T> c = point_coeffs<S, Dims>(r);  // once a box, not a point
    double sum = 0.0;
    for_each_row(b, [&](int j, int k) {
        T* __restrict__ dst = &out(0, j, k);
        for (int i = b.lo[0]; i < b.hi[0]; ++i) dst[i] = stencil_at<T, Dims, S>(in, i, j, k, c);
        if constexpr (Sum != StencilSum::none) sum = add_row_terms<Sum, T>(sum, out, in, b, j, k);
    });
    return sum;
}

// One level of a pass over `b`: points outside `live` keep their value. Each row's live points
// are one run of x, which the loop takes apart from the others so that it vectorises as
// apply_box's does.
template <class T, int Dims, class S>
void level_box(FieldView<const T> in, FieldView<T> out, const Box& b, const Box& live,
               const AxisCoeffs<T>& r) {
    const PointCoeffs<S, T> c = point_coeffs<S, Dims>(r);  // once a box, not a point
    for_each_row(b, [&](int j, int k) {
        const bool row_live =
            j >= live.lo[1] && j < live.hi[1] && k >= live.lo[2] && k < live.hi[2];
        const int lo = row_live ? std::clamp(live.lo[0], b.lo[0], b.hi[0]) : b.hi[0];
        const int hi = row_live ? std::clamp(live.hi[0], lo, b.hi[0]) : b.hi[0];
        const T* src = &in(0, j, k);
        T* __restrict__ dst = &out(0, j, k);
        for (int i = b.lo[0]; i < lo; ++i) dst[i] = src[i];
        for (int i = lo; i < hi; ++i) dst[i] = stencil_at<T, Dims, S>(in, i, j, k, c);
        for (int i = hi; i < b.hi[0]; ++i) dst[i] = src[i];
    });
}

template <class T, int Dims, class S>
double apply_box(FieldView<const T> in, FieldView<T> out, const Box& b, const AxisCoeffs<T>& r,
                 StencilSum sum) {
    switch (sum) {
        case StencilSum::change:
            return apply_box<T, Dims, S, StencilSum::change>(in, out, b, r);
        case StencilSum::product:
            return apply_box<T, Dims, S, StencilSum::product>(in, out, b, r);
        default:
            return apply_box<T, Dims, S, StencilSum::none>(in, out, b, r);
    }
}

}  // namespace gridsim::cpu
