// Every stencil kind, for tests that go through them all (kernels/stencil.hpp's StencilKind).
// A kind added to StencilKind and not here does not compile: is_kind has no case for it
// (-Wswitch, an error in this header), and once it has, the list below is one short.
#pragma once

#include <iterator>

#include "kernels/stencil.hpp"

namespace gridsim::test {

inline constexpr StencilKind kStencilKinds[] = {StencilKind::heat, StencilKind::heat_order4,
                                                StencilKind::heat_order8, StencilKind::conduction,
                                                StencilKind::jacobi};

#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
// Whether `kind` is one of StencilKind's enumerators.
constexpr bool is_kind(StencilKind kind) {
    switch (kind) {
        case StencilKind::heat:
        case StencilKind::heat_order4:
        case StencilKind::heat_order8:
        case StencilKind::conduction:
        case StencilKind::jacobi:
            return true;
    }
    return false;
}
#pragma GCC diagnostic pop

// The enumerators count up from 0: the list holds them in order, and the next value is none.
constexpr bool lists_every_kind() {
    constexpr int n = static_cast<int>(std::size(kStencilKinds));
    for (int i = 0; i < n; ++i) {
        if (kStencilKinds[i] != static_cast<StencilKind>(i)) return false;
    }
    return !is_kind(static_cast<StencilKind>(n));
}
static_assert(lists_every_kind(), "test::kStencilKinds lists every StencilKind, in order");

}  // namespace gridsim::test
