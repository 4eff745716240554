// The order in which a faces-first levels launch hands out its blocks (one per tile and chunk):
// the blocks that write a halo exchange's faces first, so that the exchange can start while the
// rest of the pass runs (a faces-first pass: docs/architecture.md, "One step"). Plain C++ for the
// host and the device, unit-tested on the host.
#pragma once

#include <algorithm>
#include <array>
#include <vector>

#include "mesh/box.hpp"
#include "mesh/host_device.hpp"

namespace gridsim {

// How a block walks its chunk of planes [z0, z1) along z: upwards, or downwards (`down`), and
// after storing which plane it has written every face point it writes (`signal_after`;
// kNoSignal where it writes none).
struct ChunkWalk {
    static constexpr int kNoSignal = -(1 << 30);  // below every plane
    bool down = false;
    int signal_after = kNoSignal;
};

// A launch's blocks form a grid of n[0] x n[1] x n[2] (tiles along x and y, chunks along z); the
// inner blocks [lo, hi) on every axis write none of the faces, the others ("face blocks") write
// some. Block number L of a one-dimensional launch is face block L while L < faces(), else inner
// block L - faces(); each kind x fastest, so with no face blocks the order is the grid's own. The
// hardware hands out blocks in about that order, so the face blocks are written first.
struct BlockOrder {
    int n[3] = {1, 1, 1};
    int lo[3] = {0, 0, 0};
    int hi[3] = {1, 1, 1};  // hi >= lo on every axis
    // Along z the faces' planes: below z_faces[0] and from z_faces[1] (the box's own ends where
    // there is no face there).
    int z_faces[2] = {ChunkWalk::kNoSignal, -ChunkWalk::kNoSignal};

    // Every block in the grid's own order: no face blocks.
    static BlockOrder plain(int nx, int ny, int nz) {
        return {{nx, ny, nz}, {0, 0, 0}, {nx, ny, nz}};
    }
    // How block (x, y) of the chunk [z0, z1) walks: a block that writes face points only in the
    // planes of the upper z face walks down, so that it stores those first, and tells once it
    // has stored the last of them; one that writes the lower z face's only tells once it has
    // stored that face's last plane; a block of a tile across an x or y face, or that writes both
    // z faces, tells after its last plane.
    [[nodiscard]] GRIDSIM_HD ChunkWalk walk(int x, int y, int z0, int z1) const {
        const bool tile_face = x < lo[0] || x >= hi[0] || y < lo[1] || y >= hi[1];
        const bool lower = z0 < z_faces[0];
        const bool upper = z1 > z_faces[1];
        if (tile_face || (lower && upper)) return {false, z1 - 1};
        if (upper) return {true, z0 > z_faces[1] ? z0 : z_faces[1]};
        if (lower) return {false, (z1 < z_faces[0] ? z1 : z_faces[0]) - 1};
        return {};
    }
    [[nodiscard]] GRIDSIM_HD long long blocks() const {
        return static_cast<long long>(n[0]) * n[1] * n[2];
    }
    [[nodiscard]] GRIDSIM_HD long long faces() const {
        return blocks() - static_cast<long long>(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
    }
    // The grid coordinates of block number `l` (0 <= l < blocks() < 2^32) into b[0..2], in
    // 32-bit arithmetic and registers (a few integer divisions at a block's start).
    GRIDSIM_HD void block(unsigned l, int* b) const {
        const auto f = static_cast<unsigned>(faces());
        if (l >= f) {
            place(l - f, lo[0], lo[1], lo[2], hi[0], hi[1], b);
            return;
        }
        // The face blocks as six slabs: below and above the inner z range (whole x-y planes),
        // then within it below and above the inner y range (whole x rows), then beside the inner
        // x range.
        const auto plane = static_cast<unsigned>(n[0] * n[1]);
        const auto below_z = plane * static_cast<unsigned>(lo[2]);
        if (l < below_z) return place(l, 0, 0, 0, n[0], n[1], b);
        l -= below_z;
        const auto above_z = plane * static_cast<unsigned>(n[2] - hi[2]);
        if (l < above_z) return place(l, 0, 0, hi[2], n[0], n[1], b);
        l -= above_z;
        const auto inner_z = static_cast<unsigned>(hi[2] - lo[2]);
        const auto below_y = static_cast<unsigned>(n[0] * lo[1]) * inner_z;
        if (l < below_y) return place(l, 0, 0, lo[2], n[0], lo[1], b);
        l -= below_y;
        const auto above_y = static_cast<unsigned>(n[0] * (n[1] - hi[1])) * inner_z;
        if (l < above_y) return place(l, 0, hi[1], lo[2], n[0], n[1], b);
        l -= above_y;
        const auto below_x = static_cast<unsigned>(lo[0] * (hi[1] - lo[1])) * inner_z;
        if (l < below_x) return place(l, 0, lo[1], lo[2], lo[0], hi[1], b);
        place(l - below_x, hi[0], lo[1], lo[2], n[0], hi[1], b);
    }

private:
    // Block `m` of the blocks from (x0, y0, z0) in rows of x0 .. x1 and planes of y0 .. y1,
    // x fastest.
    GRIDSIM_HD static void place(unsigned m, int x0, int y0, int z0, int x1, int y1, int* b) {
        const auto nx = static_cast<unsigned>(x1 - x0);
        const auto ny = static_cast<unsigned>(y1 - y0);
        const unsigned row = m / nx;
        b[0] = x0 + static_cast<int>(m - row * nx);
        b[1] = y0 + static_cast<int>(row % ny);
        b[2] = z0 + static_cast<int>(row / ny);
    }
};

// How deep the faces reach into `box` from each side, per axis (lo[a], hi[a]: layers from
// box.lo[a] and from box.hi[a]): every point of every face box inside `box` lies within those
// layers of some axis. A face box that spans `box` along all but one axis (a halo's face) counts
// along that axis, from the side it touches; any other box along its first axis that `box` does
// not span, from the nearer side over its whole extent there.
struct FaceDepths {
    std::array<int, 3> lo{0, 0, 0};
    std::array<int, 3> hi{0, 0, 0};
};
inline FaceDepths face_depths(const Box& box, const std::vector<Box>& faces) {
    FaceDepths d;
    for (const Box& face : faces) {
        Box f;
        for (int a = 0; a < 3; ++a) {
            f.lo[a] = std::max(face.lo[a], box.lo[a]);
            f.hi[a] = std::min(face.hi[a], box.hi[a]);
        }
        if (f.empty()) continue;
        int axis = -1;
        for (int a = 0; a < 3 && axis < 0; ++a) {
            if (f.lo[a] != box.lo[a] || f.hi[a] != box.hi[a]) axis = a;
        }
        if (axis < 0) {  // the whole box
            d.lo[0] = std::max(d.lo[0], box.hi[0] - box.lo[0]);
            continue;
        }
        const int from_lo = f.hi[axis] - box.lo[axis];
        const int from_hi = box.hi[axis] - f.lo[axis];
        if (from_lo <= from_hi) {
            d.lo[axis] = std::max(d.lo[axis], from_lo);
        } else {
            d.hi[axis] = std::max(d.hi[axis], from_hi);
        }
    }
    return d;
}

// Along one axis: blocks b = 0 .. n - 1 write the points [origin + b * stride, origin + (b + 1) *
// stride) of the box's [lo, hi) (origin <= lo). The blocks that write none of the first `deep_lo`
// and the last `deep_hi` of those points: [first, last).
struct InnerRange {
    int first = 0;
    int last = 0;
};
inline InnerRange inner_blocks(int n, int origin, int stride, int lo, int hi, int deep_lo,
                               int deep_hi) {
    InnerRange r{0, n};
    if (deep_lo > 0) r.first = std::min(n, (std::min(hi, lo + deep_lo) - 1 - origin) / stride + 1);
    if (deep_hi > 0) r.last = std::max(0, (std::max(lo, hi - deep_hi) - origin) / stride);
    r.last = std::max(r.last, r.first);
    return r;
}

// The order of a faces-first launch over `box` whose blocks along axis a are n[a], writing the
// points [origin[a] + b * stride[a], origin[a] + (b + 1) * stride[a]) of the box: the inner blocks
// on every axis those that write none of `faces`' points, and along z the faces' planes.
inline BlockOrder faces_first_order(const std::array<int, 3>& n, const std::array<int, 3>& origin,
                                    const std::array<int, 3>& stride, const Box& box,
                                    const std::vector<Box>& faces) {
    BlockOrder o = BlockOrder::plain(n[0], n[1], n[2]);
    const FaceDepths d = face_depths(box, faces);
    for (int a = 0; a < 3; ++a) {
        const InnerRange inner =
            inner_blocks(n[a], origin[a], stride[a], box.lo[a], box.hi[a], d.lo[a], d.hi[a]);
        o.lo[a] = inner.first;
        o.hi[a] = inner.last;
    }
    o.z_faces[0] = box.lo[2] + d.lo[2];
    o.z_faces[1] = box.hi[2] - d.hi[2];
    return o;
}

}  // namespace gridsim
