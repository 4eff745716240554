// The halo check shared by the MPI test (CPU backend, MPI transports) and the GPU test (ipc
// stores into registered fields): each rank fills its owned points with a code of (rank, global
// index), every other point with a sentinel; after an exchange every halo point must hold the
// code its owner wrote for the (wrapped) point across the face, and every point no exchange
// fills (faces without a neighbour; edges and corners of one-deep halos) the sentinel. The
// owner is found by scanning blocks, independently of the neighbour code.
#pragma once

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "mesh/domain.hpp"
#include "parallel/cart_topology.hpp"
#include "parallel/halo_exchange.hpp"
#include "support/mpi_helpers.hpp"

namespace gridsim::test {

constexpr double kHaloSentinel = -1.0;

// The decks the halo tests run (fmt::format with the boundary kind): odd sizes, thin enough on
// four ranks to refuse some grids at depth 3.
constexpr const char kHaloDeck3D[] = "[grid]\ncells = [9, 7, 6]\n[boundary]\nkind = \"{}\"\n";
constexpr const char kHaloDeck2D[] = "[grid]\ncells = [11, 9]\n[boundary]\nkind = \"{}\"\n";

inline std::vector<std::array<int, 3>> process_grids(int nranks, int dims) {
    std::vector<std::array<int, 3>> out;
    for (int a = 1; a <= nranks; ++a)
        for (int b = 1; b <= nranks; ++b) {
            const int c = dims == 3 ? nranks / (a * b) : 1;
            if (a * b * c == nranks) out.push_back({a, b, c});
        }
    return out;
}

inline int owner_of(MPI_Comm cart, const Domain& dom, const std::array<int, 3>& pg,
                    const std::array<int, 3>& g) {
    std::array<int, 3> coords{0, 0, 0};
    for (int d = 0; d < dom.dims; ++d) {
        for (int c = 0; c < pg[d]; ++c) {
            const BlockRange r = block_range(dom.solved[d], pg[d], c);
            if (g[d] >= r.start && g[d] < r.start + r.size) coords[d] = c;
        }
    }
    int rank = -1;
    MPI_Cart_rank(cart, coords.data(), &rank);
    return rank;
}

// `tag` tells fields apart (several fields exchanged in turn must each get their own points).
inline double halo_code(int rank, const Domain& dom, const std::array<int, 3>& g, double tag) {
    return tag + rank * 1e6 + g[0] + dom.solved[0] * (g[1] + dom.solved[1] * g[2]);
}

// Every point of a rank's field, halos included (row padding not).
inline void for_every_point(const Subdomain& sub, int dims, int depth,
                            const std::function<void(int, int, int)>& fn) {
    const int hz = dims == 3 ? depth : 0;
    for (int k = -hz; k < sub.size[2] + hz; ++k)
        for (int j = -depth; j < sub.size[1] + depth; ++j)
            for (int i = -depth; i < sub.size[0] + depth; ++i) fn(i, j, k);
}

// The field's host image before the exchange: codes at owned points, the sentinel elsewhere.
inline std::vector<double> coded_field(const CartTopology& topo, const Domain& dom,
                                       const FieldExtents& ext, double tag) {
    const Subdomain& sub = topo.subdomain();
    std::vector<double> host(ext.total, kHaloSentinel);
    for_every_point(sub, dom.dims, ext.halo, [&](int i, int j, int k) {
        const std::array<int, 3> l{i, j, k};
        bool owned = true;
        for (int d = 0; d < 3; ++d) owned = owned && l[d] >= 0 && l[d] < sub.size[d];
        if (owned) {
            host[ext.index(i, j, k)] = halo_code(
                topo.rank(), dom, {sub.offset[0] + i, sub.offset[1] + j, sub.offset[2] + k}, tag);
        }
    });
    return host;
}

// Checks `got` (the field after the exchange) against `sent` (coded_field of the same tag).
inline void expect_exchanged(const CartTopology& topo, const Domain& dom,
                             const std::array<int, 3>& pg, const FieldExtents& ext,
                             const std::vector<double>& sent, const std::vector<double>& got,
                             double tag) {
    const Subdomain& sub = topo.subdomain();
    const int depth = ext.halo;
    bool failed = false;
    for_every_point(sub, dom.dims, depth, [&](int i, int j, int k) {
        if (failed) return;
        const std::array<int, 3> l{i, j, k};
        int outside = 0;
        bool all_have_neighbours = true;
        std::array<int, 3> g{};
        for (int d = 0; d < 3; ++d) {
            g[d] = sub.offset[d] + l[d];
            if (l[d] < 0 || l[d] >= sub.size[d]) {
                ++outside;
                all_have_neighbours =
                    all_have_neighbours && sub.has_neighbour[2 * d + (l[d] < 0 ? 0 : 1)];
                g[d] = (g[d] + dom.solved[d]) % dom.solved[d];  // periodic wrap
            }
        }
        const double value = got[ext.index(i, j, k)];
        double want = kHaloSentinel;
        if (outside == 0) {
            want = sent[ext.index(i, j, k)];
        } else if ((outside == 1 || depth > 1) && all_have_neighbours) {
            want = halo_code(owner_of(topo.comm(), dom, pg, g), dom, g, tag);
        }
        if (value != want) {
            failed = true;
            ADD_FAILURE() << fmt::format("point {},{},{} holds {}, expected {}", i, j, k, value,
                                         want);
        }
    });
}

}  // namespace gridsim::test
