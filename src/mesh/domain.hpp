// The global problem and one rank's part of it. Pure functions of the configuration and the
// process grid: no MPI here, so every rule is unit-tested directly.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "config/config.hpp"
#include "mesh/box.hpp"

namespace gridsim {

// The global grid. `cells` is the full output array; `solved` is the part that is decomposed
// over ranks (the same except for the jacobi benchmark, whose rows 0 and ny-1 are mirrors of
// rows ny-2 and 1 and so are not stored: its solved grid is rows 1..ny-2, periodic in y).
struct Domain {
    int dims = 3;
    std::array<int, 3> cells{1, 1, 1};
    std::array<int, 3> solved{1, 1, 1};
    std::array<int, 3> solved_origin{0, 0, 0};  // full-array index of solved point 0
    std::array<double, 3> spacing{1.0, 1.0, 1.0};
    std::array<bool, 3> periodic{false, false, false};
};

Domain make_domain(const Config& cfg);

// Points of the whole array (every axis's cells multiplied), as a file holds it.
std::uint64_t grid_points(const Domain& dom);

// Contiguous block `index` of `n` points split into `parts`: the first n % parts blocks get
// one point more, so sizes differ by at most one.
struct BlockRange {
    int start = 0;
    int size = 0;
};
BlockRange block_range(int n, int parts, int index);

// One rank's block of the solved grid.
struct Subdomain {
    int dims = 3;
    std::array<int, 3> offset{0, 0, 0};   // solved-grid index of owned point (0,0,0)
    std::array<int, 3> size{1, 1, 1};     // owned points per axis
    std::array<bool, 6> has_neighbour{};  // a halo arrives on this face (periodic: maybe self)
    std::array<bool, 6> fixed_face{};     // this face holds the global Dirichlet points
};

Subdomain make_subdomain(const Domain& dom, const std::array<int, 3>& process_grid,
                         const std::array<int, 3>& coords);

// Empty string when `process_grid` can run the domain with `nranks` ranks and stencil halo
// `halo`, else the reason (the caller adds the deck location).
std::string decomposition_problem(const Domain& dom, const std::array<int, 3>& process_grid,
                                  int nranks, int halo);

// The owned points a sweep updates: all but the global Dirichlet points.
Box updated_box(const Subdomain& sub);

// The overlap split (docs/architecture.md, "One step"): `shell` holds the updated points within
// `halo` of a face that receives a halo (they need the previous step's halos), with `reflected`
// of every face (a fixed face's halos the exchange reflects: HaloExchange::reflect_fixed_faces),
// `interior` the rest. The boxes are disjoint and together cover `updated`
// exactly.
struct SweepRegions {
    Box interior;
    std::vector<Box> shell;
};
SweepRegions split_for_overlap(const Box& updated, const Subdomain& sub, int halo,
                               bool reflected = false);

// The slabs of `outer` outside `inner` (inner lies inside outer), peeled axis by axis: each spans
// the extent of the axes not yet peeled, so they are disjoint and cover outer minus inner.
std::vector<Box> peel(const Box& outer, const Box& inner, int dims);

// `updated` grown by `by` points into the halo of every face that has a neighbour (not across a
// face holding the global Dirichlet points): where a sweep between two halo exchanges also
// computes the points the next sweeps read (docs/architecture.md, "Temporal blocking").
Box extend_into_halos(const Box& updated, const Subdomain& sub, int by);

// Owned layers sent through `face`, and the halo layers received on it.
Box send_box(const Subdomain& sub, int face, int halo);
Box recv_box(const Subdomain& sub, int face, int halo);
// A send or receive box of `face` widened over the halos of the axes before the face's own,
// where they have neighbours: exchanged one axis after another, the faces of a later axis then
// carry the edges and corners the earlier axes filled (halos deeper than one need them).
Box with_corners(Box b, const Subdomain& sub, int face, int halo);

}  // namespace gridsim
