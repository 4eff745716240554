// Every stencil kind, for tests that go through them all (kernels/stencil.hpp's StencilKind).
#pragma once

#include "kernels/stencil.hpp"

namespace gridsim::test {

inline constexpr StencilKind kStencilKinds[] = {StencilKind::heat, StencilKind::heat_order4,
                                                StencilKind::heat_order8, StencilKind::conduction,
                                                StencilKind::jacobi};

}  // namespace gridsim::test
