// Half-open index boxes [lo, hi) in a rank's local owned coordinates (0 = first owned point;
// negative indices and indices >= size address halo cells). 2D boxes have z range [0, 1).
#pragma once

#include <array>
#include <cstdint>

namespace gridsim {

struct Box {
    std::array<int, 3> lo{0, 0, 0};
    std::array<int, 3> hi{0, 0, 0};

    [[nodiscard]] bool empty() const { return hi[0] <= lo[0] || hi[1] <= lo[1] || hi[2] <= lo[2]; }
    [[nodiscard]] std::int64_t count() const {
        if (empty()) return 0;
        return std::int64_t{hi[0] - lo[0]} * (hi[1] - lo[1]) * (hi[2] - lo[2]);
    }
    [[nodiscard]] bool contains(int i, int j, int k) const {
        return i >= lo[0] && i < hi[0] && j >= lo[1] && j < hi[1] && k >= lo[2] && k < hi[2];
    }
    // Every point of `b` (a non-empty box) is in this box.
    [[nodiscard]] bool holds(const Box& b) const {
        for (int d = 0; d < 3; ++d) {
            if (b.lo[d] < lo[d] || b.hi[d] > hi[d]) return false;
        }
        return true;
    }
    // This box grown by `n` points on each side of its first `dims` axes.
    [[nodiscard]] Box grown(int n, int dims) const {
        Box b = *this;
        for (int d = 0; d < dims; ++d) {
            b.lo[d] -= n;
            b.hi[d] += n;
        }
        return b;
    }
    // The points of this box that `to` holds too (an empty box where none).
    [[nodiscard]] Box clipped(const Box& to) const {
        Box b;
        for (int d = 0; d < 3; ++d) {
            b.lo[d] = lo[d] > to.lo[d] ? lo[d] : to.lo[d];
            b.hi[d] = hi[d] < to.hi[d] ? hi[d] : to.hi[d];
        }
        return b;
    }
    bool operator==(const Box& o) const { return lo == o.lo && hi == o.hi; }
};

// Faces are numbered 2*axis + side, side 0 = low, 1 = high: x_lo, x_hi, y_lo, y_hi, z_lo, z_hi.
constexpr int face_axis(int face) { return face / 2; }
constexpr int face_side(int face) { return face % 2; }
constexpr int opposite_face(int face) { return face ^ 1; }

}  // namespace gridsim
