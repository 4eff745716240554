// A backend's pass of levels (TimeBlocking::apply_levels) against as many of its own sweeps
// (Backend::apply over the points still to be read, then the reflections beyond the fixed faces,
// as the engine's sweeps of a time block go), on a subdomain with fixed faces on some sides and
// neighbours on the others: the CPU's (unit/test_cpu_passes.cpp) and the CUDA backend's
// (gpu/test_gpu_wide_passes.cpp) passes hold to it bitwise.
#pragma once

#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/stencil.hpp"
#include "mesh/domain.hpp"
#include "parallel/face_mirrors.hpp"
#include "support/random_values.hpp"

namespace gridsim::test {

constexpr int kUnbounded = 1 << 24;

// A subdomain of `n` points whose faces in `fixed` are fixed (a Dirichlet point at the face's
// first or last owned point, as the engine lays them out; bit 2a the lower face along axis a, bit
// 2a + 1 the upper; by default x lo, y hi and, in 3D, both z faces), the others beside neighbours,
// halos `halo` deep.
struct Layout {
    static constexpr unsigned kDefaultFixed = 0b111001u;
    int dims;
    std::array<int, 3> n;
    int halo;
    unsigned fixed = kDefaultFixed;

    [[nodiscard]] bool fixes(int axis, bool upper) const {
        return axis < dims && (fixed >> (2 * axis + (upper ? 1 : 0)) & 1u) != 0;
    }
    [[nodiscard]] Box updated() const {
        Box b{{0, 0, 0}, {n[0], n[1], dims == 3 ? n[2] : 1}};
        for (int a = 0; a < dims; ++a) {
            if (fixes(a, false)) b.lo[a] = 1;
            if (fixes(a, true)) b.hi[a] = n[a] - 1;
        }
        return b;
    }
    // Every point a sweep may update: the updated box, unbounded across the neighbours.
    [[nodiscard]] Box live() const {
        Box b = updated();
        for (int a = 0; a < dims; ++a) {
            if (!fixes(a, false)) b.lo[a] = -kUnbounded;
            if (!fixes(a, true)) b.hi[a] = kUnbounded;
        }
        return b;
    }
};

// The `layers` layers beyond each fixed face of `l` as the engine lays them out
// (fixed_face_mirrors: across the other axes into the halos where those have neighbours).
template <class T>
FaceMoves<T> mirrors(const Layout& l, int layers) {
    Subdomain sub;
    sub.dims = l.dims;
    for (int a = 0; a < 3; ++a) sub.size[a] = a < l.dims ? l.n[a] : 1;
    for (int f = 0; f < 2 * l.dims; ++f) {
        sub.fixed_face[f] = l.fixes(f / 2, f % 2 == 1);
        sub.has_neighbour[f] = !sub.fixed_face[f];
    }
    return fixed_face_mirrors<T>(sub, layers, l.halo);
}

template <class T>
StencilParams<T> params_of(StencilKind kind, const T* field) {
    StencilParams<T> p;
    p.kind = kind;
    p.r = {T(0.11), T(0.07), T(0.05), field};
    return p;
}

// `levels` sweeps of `be` from `start`, each over the updated box grown by the stencil's radius
// for every level still to come (clipped to the live points), from one field into a copy of it,
// then reflected: what a pass of `levels` must give.
template <class T>
std::vector<T> sweeps_of(Backend<T>& be, const StencilParams<T>& p, const FieldExtents& e,
                         const std::vector<T>& start, const Layout& l, int levels,
                         const FaceMoves<T>& reflections) {
    const int radius = stencil_radius(p.kind);
    Field<T> a = be.allocate_field(e);
    Field<T> b = be.allocate_field(e);
    be.upload(start, a.view());
    for (int level = 1; level <= levels; ++level) {
        be.copy(b.view().data, a.view().data, static_cast<std::size_t>(e.total), Lane::boundary);
        const Box region = l.updated().grown((levels - level) * radius, l.dims);
        be.apply(p, a.view(), b.view(), region.clipped(l.live()), Lane::boundary, StencilSum::none);
        be.reflect(b.view(), reflections, Lane::boundary);
        std::swap(a, b);
    }
    std::vector<T> out;
    be.download(a.view(), out);
    return out;
}

// How many points of the updated box differ between two fields.
template <class T>
int differing_points(const std::vector<T>& got, const std::vector<T>& want, const FieldExtents& e,
                     const Layout& l) {
    const Box u = l.updated();
    int differ = 0;
    for (int k = u.lo[2]; k < u.hi[2]; ++k)
        for (int j = u.lo[1]; j < u.hi[1]; ++j)
            for (int i = u.lo[0]; i < u.hi[0]; ++i) {
                const auto at = static_cast<std::size_t>(e.index(i, j, k));
                if (got[at] != want[at]) ++differ;
            }
    return differ;
}

// `be`'s pass of `levels` over the updated box against as many sweeps of its own (sweeps_of).
// Returns how many points differ.
template <class T>
int pass_against_sweeps(Backend<T>& be, StencilKind kind, const Layout& l, int levels,
                        bool reflect) {
    const int radius = stencil_radius(kind);
    const FieldExtents e = FieldExtents::make(l.dims, l.n, l.halo, be.row_alignment());
    const std::vector<T> start = test::random_values<T>(static_cast<std::size_t>(e.total), 3);
    // A positive coefficient field (conduction's densities), laid out as the fields.
    std::vector<T> field = test::random_values<T>(static_cast<std::size_t>(e.total), 4);
    for (T& v : field) v = T(1.5) + v;
    Field<T> coeffs = be.allocate_field(e);
    be.upload(field, coeffs.view());
    const StencilParams<T> p = params_of<T>(kind, coeffs.view().data);
    const FaceMoves<T> reflections = mirrors<T>(l, radius - 1);

    Field<T> in = be.allocate_field(e);
    Field<T> out = be.allocate_field(e);
    be.upload(start, in.view());
    be.time_blocking()->apply_levels(p, in.view(), out.view(), l.updated(), l.live(), levels,
                                     reflect ? reflections : FaceMoves<T>{}, Lane::boundary);
    std::vector<T> got;
    be.download(out.view(), got);
    return differing_points(got, sweeps_of(be, p, e, start, l, levels, reflections), e, l);
}

}  // namespace gridsim::test
