// The order of a faces-first pass's blocks (kernels/block_order.hpp), against a brute-force
// reference: every block of the grid asked in turn whether the points it writes meet a face.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "kernels/block_order.hpp"

using namespace gridsim;

namespace {

// Blocks along each axis write [origin + b * stride, origin + (b + 1) * stride) of the box.
struct Grid {
    Box box;
    std::array<int, 3> origin;
    std::array<int, 3> stride;
    [[nodiscard]] int blocks(int a) const {
        return (box.hi[a] - origin[a] + stride[a] - 1) / stride[a];
    }
    // The planes [z0, z1) of the box that chunk c writes.
    [[nodiscard]] std::array<int, 2> chunk(int c) const {
        return {std::max(box.lo[2], origin[2] + c * stride[2]),
                std::min(box.hi[2], origin[2] + (c + 1) * stride[2])};
    }
    // Whether block (x, y, c) of `o` tells that it has stored its face points, as the kernel
    // asks it.
    [[nodiscard]] bool tells(const BlockOrder& o, int x, int y, int c) const {
        const std::array<int, 2> z = chunk(c);
        return o.walk(x, y, z[0], z[1]).signal_after != ChunkWalk::kNoSignal;
    }
    // Whether block b writes a point of `f`.
    [[nodiscard]] bool meets(const std::array<int, 3>& b, const Box& f) const {
        for (int a = 0; a < 3; ++a) {
            const int lo = std::max({box.lo[a], origin[a] + b[a] * stride[a], f.lo[a]});
            const int hi = std::min({box.hi[a], origin[a] + (b[a] + 1) * stride[a], f.hi[a]});
            if (lo >= hi) return false;
        }
        return true;
    }
};

// The order a faces-first launch over `g` takes for `faces` (faces_first_order, as
// levels_3d_launch.cuh builds it).
BlockOrder order_for(const Grid& g, const std::vector<Box>& faces) {
    return faces_first_order({g.blocks(0), g.blocks(1), g.blocks(2)}, g.origin, g.stride, g.box,
                             faces);
}

// Every block once; the first faces() of them exactly those that write a face point (the faces
// are slabs, so the inner box is tight), and tell, the rest none.
void expect_faces_first(const Grid& g, const std::vector<Box>& faces) {
    const BlockOrder o = order_for(g, faces);
    std::set<std::tuple<int, int, int>> seen;
    long long writing = 0;
    for (unsigned l = 0; l < o.blocks(); ++l) {
        int b[3];
        o.block(l, b);
        ASSERT_TRUE(b[0] >= 0 && b[0] < o.n[0] && b[1] >= 0 && b[1] < o.n[1] && b[2] >= 0 &&
                    b[2] < o.n[2])
            << "block " << l;
        EXPECT_TRUE(seen.insert({b[0], b[1], b[2]}).second) << "block " << l << " twice";
        bool meets = false;
        for (const Box& f : faces) meets = meets || g.meets({b[0], b[1], b[2]}, f);
        writing += meets ? 1 : 0;
        EXPECT_EQ(meets, l < o.faces())
            << "block " << l << " at " << b[0] << "," << b[1] << "," << b[2];
        EXPECT_EQ(g.tells(o, b[0], b[1], b[2]), l < o.faces());
    }
    EXPECT_EQ(writing, o.faces());
}

Box slab(const Box& box, int axis, int side, int depth, int halo) {
    Box f = box;
    for (int a = 0; a < 3; ++a) {
        f.lo[a] -= halo;
        f.hi[a] += halo;
    }
    f.lo[axis] = side == 0 ? box.lo[axis] : box.hi[axis] - depth;
    f.hi[axis] = side == 0 ? box.lo[axis] + depth : box.hi[axis];
    return f;
}

}  // namespace

TEST(BlockOrder, WithoutFacesItIsTheGridsOwnOrder) {
    const BlockOrder o = BlockOrder::plain(3, 4, 5);
    EXPECT_EQ(o.faces(), 0);
    for (unsigned l = 0; l < o.blocks(); ++l) {
        int b[3];
        o.block(l, b);
        EXPECT_EQ(b[0], static_cast<int>(l % 3));
        EXPECT_EQ(b[1], static_cast<int>(l / 3 % 4));
        EXPECT_EQ(b[2], static_cast<int>(l / 12));
    }
}

// A 3D pass's geometry (tiles of 28 x 44 points from a ring-aligned origin, chunks of 16 planes)
// with the faces of one rank of a 1x1x2 grid (z above), of 1x2x2 (y below, z above, the z face
// widened over the y halo as a deep halo's corners are) and of a periodic x axis held alone.
TEST(BlockOrder, TheBlocksThatWriteTheFacesComeFirst) {
    const Grid g{{{0, 0, 0}, {100, 90, 64}}, {-2, 0, 0}, {28, 44, 16}};
    expect_faces_first(g, {slab(g.box, 2, 1, 2, 0)});
    expect_faces_first(g, {slab(g.box, 1, 0, 3, 0), slab(g.box, 2, 1, 3, 3)});
    expect_faces_first(g, {slab(g.box, 0, 0, 4, 0), slab(g.box, 0, 1, 4, 0)});
    expect_faces_first(g, {slab(g.box, 0, 0, 1, 1), slab(g.box, 1, 1, 2, 1),
                           slab(g.box, 2, 0, 1, 1), slab(g.box, 2, 1, 4, 1)});
    expect_faces_first(g, {});
    // Faces deeper than a block: two chunks along z, every tile along y.
    expect_faces_first(g, {slab(g.box, 2, 0, 17, 0), slab(g.box, 1, 1, 90, 0)});
}

TEST(BlockOrder, RandomGridsAndFaces) {
    std::mt19937 rng(7);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int trial = 0; trial < 300; ++trial) {
        Grid g;
        for (int a = 0; a < 3; ++a) {
            g.box.lo[a] = pick(0, 5);
            g.box.hi[a] = g.box.lo[a] + pick(1, 70);
            g.stride[a] = pick(1, 30);
            // The first block writes a point of the box, as a launch's does.
            g.origin[a] = g.box.lo[a] - pick(0, std::min(4, g.stride[a] - 1));
        }
        std::vector<Box> faces;
        for (int n = pick(0, 4); n > 0; --n) {
            const int axis = pick(0, 2);
            const int extent = g.box.hi[axis] - g.box.lo[axis];
            faces.push_back(slab(g.box, axis, pick(0, 1), pick(1, extent), pick(0, 3)));
        }
        SCOPED_TRACE(trial);
        expect_faces_first(g, faces);
    }
}

// A face that is not a slab (it spans the box along no axis but one) still has every block that
// writes it among the face blocks, which tell.
TEST(BlockOrder, AnyFaceBoxIsCoveredByTheFaceBlocks) {
    const Grid g{{{0, 0, 0}, {60, 60, 60}}, {0, 0, 0}, {10, 10, 10}};
    const std::vector<Box> faces{{{20, 25, 31}, {35, 40, 45}}, {{0, 0, 0}, {60, 60, 60}}};
    for (const Box& f : faces) {
        const BlockOrder o = order_for(g, {f});
        for (int x = 0; x < o.n[0]; ++x) {
            for (int y = 0; y < o.n[1]; ++y) {
                for (int z = 0; z < o.n[2]; ++z) {
                    if (g.meets({x, y, z}, f)) EXPECT_TRUE(g.tells(o, x, y, z));
                }
            }
        }
    }
    EXPECT_EQ(order_for(g, {faces[1]}).faces(), 216);
}

// A face block's walk: every face point it writes is stored by the time it tells (the planes of
// its chunk up to signal_after in walk order), the plane it tells after is one it must store
// (no later telling would do), and it walks the way that tells soonest (a block that writes
// one z face's planes only starts from them). A block that writes no face never tells.
TEST(BlockOrder, AFaceBlockTellsOnceItsFacePointsAreStored) {
    const Grid g{{{0, 0, 0}, {100, 90, 64}}, {-2, 0, 0}, {28, 44, 10}};
    const std::vector<std::vector<Box>> cases = {
        {slab(g.box, 2, 1, 3, 0)},
        {slab(g.box, 2, 0, 2, 0)},
        {slab(g.box, 2, 0, 4, 1), slab(g.box, 2, 1, 13, 1)},
        {slab(g.box, 1, 1, 4, 0), slab(g.box, 2, 1, 4, 4)},
        {slab(g.box, 2, 0, 64, 0)},
    };
    for (const std::vector<Box>& faces : cases) {
        const BlockOrder o = order_for(g, faces);
        for (int x = 0; x < o.n[0]; ++x) {
            for (int y = 0; y < o.n[1]; ++y) {
                for (int c = 0; c < o.n[2]; ++c) {
                    const auto [z0, z1] = g.chunk(c);
                    const ChunkWalk w = o.walk(x, y, z0, z1);
                    SCOPED_TRACE(::testing::Message() << x << "," << y << "," << c);
                    // Whether plane z holds a point of a face that this block writes.
                    auto holds_face = [&](int z) {
                        for (const Box& f : faces) {
                            Box p = f;
                            p.lo[2] = std::max(f.lo[2], z);
                            p.hi[2] = std::min(f.hi[2], z + 1);
                            if (g.meets({x, y, c}, p)) return true;
                        }
                        return false;
                    };
                    // How many planes a walk up (or down) stores before its last face plane.
                    auto last_face_step = [&](bool down) {
                        int last = -1;
                        for (int k = 0; k < z1 - z0; ++k) {
                            if (holds_face(down ? z1 - 1 - k : z0 + k)) last = k;
                        }
                        return last;
                    };
                    const int up = last_face_step(false);
                    const int down = last_face_step(true);
                    if (up < 0) {
                        EXPECT_EQ(w.signal_after, ChunkWalk::kNoSignal);
                        continue;
                    }
                    ASSERT_TRUE(w.signal_after >= z0 && w.signal_after < z1);
                    const int told = w.down ? z1 - 1 - w.signal_after : w.signal_after - z0;
                    EXPECT_EQ(told, w.down ? down : up);
                    EXPECT_EQ(told, std::min(up, down));
                }
            }
        }
    }
}
