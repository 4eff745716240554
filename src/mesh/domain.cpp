#include "mesh/domain.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gridsim {

Domain make_domain(const Config& cfg) {
    Domain dom;
    dom.dims = cfg.dims;
    dom.cells = cfg.cells;
    dom.solved = cfg.cells;
    for (int d = 0; d < cfg.dims; ++d) {
        dom.spacing[d] = cfg.spacing(d);
        dom.periodic[d] = cfg.is_periodic(d);
    }
    if (cfg.benchmark) {
        dom.solved[1] = cfg.cells[1] - 2;
        dom.solved_origin[1] = 1;
    }
    return dom;
}

std::uint64_t grid_points(const Domain& dom) {
    std::uint64_t points = 1;
    for (int d = 0; d < dom.dims; ++d) points *= static_cast<std::uint64_t>(dom.cells[d]);
    return points;
}

BlockRange block_range(int n, int parts, int index) {
    const int base = n / parts;
    const int extra = n % parts;
    return {index * base + std::min(index, extra), base + (index < extra ? 1 : 0)};
}

Subdomain make_subdomain(const Domain& dom, const std::array<int, 3>& process_grid,
                         const std::array<int, 3>& coords) {
    Subdomain sub;
    sub.dims = dom.dims;
    for (int d = 0; d < 3; ++d) {
        if (d >= dom.dims) continue;  // 2D: z stays offset 0, size 1, no faces
        const BlockRange r = block_range(dom.solved[d], process_grid[d], coords[d]);
        sub.offset[d] = r.start;
        sub.size[d] = r.size;
        const bool first = coords[d] == 0;
        const bool last = coords[d] == process_grid[d] - 1;
        sub.has_neighbour[2 * d] = dom.periodic[d] || !first;
        sub.has_neighbour[2 * d + 1] = dom.periodic[d] || !last;
        sub.fixed_face[2 * d] = !dom.periodic[d] && first;
        sub.fixed_face[2 * d + 1] = !dom.periodic[d] && last;
    }
    return sub;
}

std::string decomposition_problem(const Domain& dom, const std::array<int, 3>& process_grid,
                                  int nranks, int halo) {
    long product = 1;
    for (int d = 0; d < dom.dims; ++d) product *= process_grid[d];
    if (product != nranks) {
        return fmt::format("process grid {} has {} ranks but the run has {}",
                           fmt::join(process_grid.begin(), process_grid.begin() + dom.dims, "x"),
                           product, nranks);
    }
    for (int d = 0; d < dom.dims; ++d) {
        const int smallest = dom.solved[d] / process_grid[d];
        if (smallest < halo) {
            return fmt::format(
                "axis {} has {} points over {} ranks: {} per rank is fewer than the "
                "halo width {}; use fewer ranks on this axis or a larger grid",
                "xyz"[d], dom.solved[d], process_grid[d], smallest, halo);
        }
    }
    return {};
}

Box updated_box(const Subdomain& sub) {
    Box b;
    for (int d = 0; d < 3; ++d) {
        b.lo[d] = sub.fixed_face[2 * d] ? 1 : 0;
        b.hi[d] = sub.size[d] - (sub.fixed_face[2 * d + 1] ? 1 : 0);
    }
    return b;
}

SweepRegions split_for_overlap(const Box& updated, const Subdomain& sub, int halo, bool reflected) {
    SweepRegions r;
    Box inner = updated;
    for (int d = 0; d < sub.dims; ++d) {
        int lo = updated.lo[d];
        int hi = updated.hi[d];
        if (sub.has_neighbour[2 * d] || reflected) lo = std::max(lo, halo);
        if (sub.has_neighbour[2 * d + 1] || reflected) hi = std::min(hi, sub.size[d] - halo);
        inner.lo[d] = std::min(lo, updated.hi[d]);  // thin blocks: inner is empty, not inverted
        inner.hi[d] = std::max(hi, inner.lo[d]);
    }
    r.shell = peel(updated, inner, sub.dims);
    r.interior = inner;
    return r;
}

std::vector<Box> peel(const Box& outer, const Box& inner, int dims) {
    std::vector<Box> slabs;
    Box rest = outer;
    for (int d = 0; d < dims; ++d) {
        Box lo = rest;
        lo.hi[d] = inner.lo[d];
        Box hi = rest;
        hi.lo[d] = inner.hi[d];
        if (!lo.empty()) slabs.push_back(lo);
        if (!hi.empty()) slabs.push_back(hi);
        rest.lo[d] = inner.lo[d];
        rest.hi[d] = inner.hi[d];
    }
    return slabs;
}

Box extend_into_halos(const Box& updated, const Subdomain& sub, int by) {
    Box b = updated;
    for (int d = 0; d < sub.dims; ++d) {
        if (sub.has_neighbour[2 * d]) b.lo[d] -= by;
        if (sub.has_neighbour[2 * d + 1]) b.hi[d] += by;
    }
    return b;
}

Box send_box(const Subdomain& sub, int face, int halo) {
    Box b{{0, 0, 0}, sub.size};
    const int d = face_axis(face);
    if (face_side(face) == 0) {
        b.hi[d] = halo;
    } else {
        b.lo[d] = sub.size[d] - halo;
    }
    return b;
}

Box with_corners(Box b, const Subdomain& sub, int face, int halo) {
    for (int e = 0; e < face_axis(face); ++e) {
        if (sub.has_neighbour[2 * e]) b.lo[e] = -halo;
        if (sub.has_neighbour[2 * e + 1]) b.hi[e] = sub.size[e] + halo;
    }
    return b;
}

Box recv_box(const Subdomain& sub, int face, int halo) {
    Box b{{0, 0, 0}, sub.size};
    const int d = face_axis(face);
    if (face_side(face) == 0) {
        b.lo[d] = -halo;
        b.hi[d] = 0;
    } else {
        b.lo[d] = sub.size[d];
        b.hi[d] = sub.size[d] + halo;
    }
    return b;
}

}  // namespace gridsim
