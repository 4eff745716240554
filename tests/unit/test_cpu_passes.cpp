// The CPU backend's passes (TimeBlocking, level by level): a pass of L levels is bitwise L sweeps
// and their reflections (support/pass_against_sweeps.hpp), for every stencil kind, in 2D and 3D,
// in float and double, beside every set of fixed faces.
#include <gtest/gtest.h>

#include "kernels/backend.hpp"
#include "kernels/stencil.hpp"
#include "support/pass_against_sweeps.hpp"
#include "support/stencil_kinds.hpp"

namespace gridsim {
namespace {

using test::Layout;

// The CPU backend's pass against its sweeps (support/pass_against_sweeps.hpp).
template <class T>
int pass_against_sweeps(StencilKind kind, const Layout& l, int levels, bool reflect) {
    auto be = make_cpu_backend<T>();
    return test::pass_against_sweeps(*be, kind, l, levels, reflect);
}

TEST(CpuPasses, APassIsBitwiseItsSweepsWithTheirReflections) {
    for (const StencilKind kind : test::kStencilKinds) {
        const int radius = stencil_radius(kind);
        for (const int levels : {2, 3}) {
            const Layout l2{2, {13, 11, 1}, levels * radius};
            const Layout l3{3, {11, 9, 10}, levels * radius};
            SCOPED_TRACE(testing::Message() << "radius " << radius << ", levels " << levels);
            EXPECT_EQ(pass_against_sweeps<double>(kind, l2, levels, true), 0);
            EXPECT_EQ(pass_against_sweeps<double>(kind, l3, levels, true), 0);
            EXPECT_EQ(pass_against_sweeps<float>(kind, l2, levels, true), 0);
            EXPECT_EQ(pass_against_sweeps<float>(kind, l3, levels, true), 0);
        }
    }
}

// Every set of fixed faces (none, one, opposite pairs, all), in 3D and 2D: the reflections of
// each face, and where faces meet, as the sweeps make them.
TEST(CpuPasses, EverySetOfFixedFacesHoldsToItsSweeps) {
    for (const StencilKind kind : {StencilKind::heat, StencilKind::heat_order4}) {
        const int radius = stencil_radius(kind);
        for (unsigned fixed = 0; fixed < 64; ++fixed) {
            SCOPED_TRACE(testing::Message() << "radius " << radius << ", fixed faces " << fixed);
            EXPECT_EQ(
                pass_against_sweeps<double>(kind, Layout{3, {9, 8, 7}, 2 * radius, fixed}, 2, true),
                0);
            if (fixed < 16)
                EXPECT_EQ(pass_against_sweeps<float>(kind, Layout{2, {9, 8, 1}, 3 * radius, fixed},
                                                     3, true),
                          0);
        }
    }
}

// The reflections are what a wider star's levels read beyond the fixed faces: without them the
// pass gives other values near those faces, so the test above holds them.
TEST(CpuPasses, AWiderStarsLevelsReadTheirReflections) {
    const Layout l{3, {11, 9, 10}, 8};
    EXPECT_GT(pass_against_sweeps<double>(StencilKind::heat_order4, l, 3, false), 0);
    EXPECT_GT(pass_against_sweeps<double>(StencilKind::heat_order8, l, 2, false), 0);
}

}  // namespace
}  // namespace gridsim
