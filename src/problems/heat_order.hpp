// problem.order of the heat problem: the central second difference of order 2, 4 or 8 along each
// axis (kernels/stencil.hpp's HeatStencil and HeatOrderStencil), as a stencil kind and as the
// numbers the time step and the exact discrete solution take from it.
#pragma once

#include <cmath>
#include <stdexcept>

#include "kernels/stencil.hpp"

namespace gridsim {

inline StencilKind heat_stencil_kind(int order) {
    switch (order) {
        case 2:
            return StencilKind::heat;
        case 4:
            return StencilKind::heat_order4;
        case 8:
            return StencilKind::heat_order8;
        default:
            throw std::logic_error("heat_stencil_kind: problem.order is 2, 4 or 8");
    }
}

// The symbol of the second difference of order `order` at wave number theta = kappa h:
// -h^2 times its eigenvalue on the mode exp(i theta x/h), -w_0 - 2 sum_o w_o cos(o theta).
// Order 2: 4 sin^2(theta / 2), taken from `sin2_half` (the same bits as that formula).
inline double second_difference_symbol(int order, double theta, double sin2_half) {
    if (order == 2) return 4.0 * sin2_half;
    auto symbol = [&](auto stencil) {
        using S = decltype(stencil);
        double s = -S::weight(0);
        for (int o = 1; o <= S::kRadius; ++o) s -= 2.0 * S::weight(o) * std::cos(o * theta);
        return s;
    };
    return order == 4 ? symbol(HeatOrderStencil<2>{}) : symbol(HeatOrderStencil<4>{});
}

// The symbol's largest value (at theta = pi): 4, 16/3 and 2048/315. The explicit step is stable
// for sum_d r_d <= 2 / this.
inline double largest_symbol(int order) {
    return order == 2 ? 4.0 : second_difference_symbol(order, M_PI, 1.0);
}

}  // namespace gridsim
