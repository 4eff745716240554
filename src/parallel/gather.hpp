// Gathers a distributed field's owned points into one global array on rank 0 (tests, small
// diagnostics). Not for production output: that is parallel HDF5.
#pragma once

#include <string>
#include <vector>

#include "mesh/field.hpp"
#include "parallel/cart_topology.hpp"
#include "parallel/mpi_check.hpp"

namespace gridsim {

// Every rank's string, in rank order, on rank 0 (empty elsewhere), or on every rank (`all`).
inline std::vector<std::string> gather_strings(MPI_Comm comm, const std::string& mine,
                                               bool all = false) {
    const int len = static_cast<int>(mine.size());
    int nranks = 1;
    int rank = 0;
    GRIDSIM_MPI_CHECK(MPI_Comm_size(comm, &nranks));
    GRIDSIM_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    std::vector<int> lens(nranks), displs(nranks);
    if (all) {
        GRIDSIM_MPI_CHECK(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm));
    } else {
        GRIDSIM_MPI_CHECK(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm));
    }
    int total = 0;
    for (int r = 0; r < nranks; ++r) {
        displs[r] = total;
        total += lens[r];
    }
    std::string joined(static_cast<std::size_t>(total), '\0');
    if (all) {
        GRIDSIM_MPI_CHECK(MPI_Allgatherv(mine.data(), len, MPI_CHAR, joined.data(), lens.data(),
                                         displs.data(), MPI_CHAR, comm));
    } else {
        GRIDSIM_MPI_CHECK(MPI_Gatherv(mine.data(), len, MPI_CHAR, joined.data(), lens.data(),
                                      displs.data(), MPI_CHAR, 0, comm));
    }
    std::vector<std::string> out;
    if (!all && rank != 0) return out;
    for (int r = 0; r < nranks; ++r) out.push_back(joined.substr(displs[r], lens[r]));
    return out;
}

// Every rank's block of a grid, on rank 0, in rank order, with the places of their points in
// one array of all of them (for MPI_Gatherv and MPI_Scatterv: counts and displacements). Empty
// on the other ranks. Collective.
struct RankBlocks {
    std::vector<std::array<int, 3>> offset, size;
    std::vector<int> counts, displs;
    int total = 0;
};
inline RankBlocks blocks_on_root(MPI_Comm comm, const Subdomain& sub) {
    int rank = 0;
    int nranks = 1;
    GRIDSIM_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    GRIDSIM_MPI_CHECK(MPI_Comm_size(comm, &nranks));
    const std::array<int, 6> geom{sub.offset[0], sub.offset[1], sub.offset[2],
                                  sub.size[0],   sub.size[1],   sub.size[2]};
    std::vector<int> all(rank == 0 ? 6 * nranks : 0);
    GRIDSIM_MPI_CHECK(MPI_Gather(geom.data(), 6, MPI_INT, all.data(), 6, MPI_INT, 0, comm));
    RankBlocks out;
    for (int r = 0; r < static_cast<int>(all.size()) / 6; ++r) {
        const int* g = &all[6 * r];
        out.offset.push_back({g[0], g[1], g[2]});
        out.size.push_back({g[3], g[4], g[5]});
        out.counts.push_back(g[3] * g[4] * g[5]);
        out.displs.push_back(out.total);
        out.total += out.counts.back();
    }
    return out;
}

// `u` is a host view of this rank's field. Returns the solved grid (x fastest) on rank 0 as
// double (exact for float and double inputs), and an empty vector elsewhere.
template <class T>
std::vector<double> gather_to_root(const CartTopology& topo, const Domain& dom,
                                   FieldView<const T> u) {
    const Subdomain& sub = topo.subdomain();
    std::vector<double> mine;
    mine.reserve(static_cast<std::size_t>(sub.size[0]) * sub.size[1] * sub.size[2]);
    for (int k = 0; k < sub.size[2]; ++k)
        for (int j = 0; j < sub.size[1]; ++j)
            for (int i = 0; i < sub.size[0]; ++i) mine.push_back(u(i, j, k));

    const RankBlocks blocks = blocks_on_root(topo.comm(), sub);
    std::vector<double> packed(static_cast<std::size_t>(blocks.total));
    GRIDSIM_MPI_CHECK(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE,
                                  packed.data(), blocks.counts.data(), blocks.displs.data(),
                                  MPI_DOUBLE, 0, topo.comm()));
    if (topo.rank() != 0) return {};

    const auto& n = dom.solved;
    std::vector<double> global(static_cast<std::size_t>(n[0]) * n[1] * n[2]);
    for (std::size_t r = 0; r < blocks.counts.size(); ++r) {
        const auto& o = blocks.offset[r];
        const auto& s = blocks.size[r];
        const double* src = packed.data() + blocks.displs[r];
        for (int k = 0; k < s[2]; ++k)
            for (int j = 0; j < s[1]; ++j)
                for (int i = 0; i < s[0]; ++i) {
                    global[(o[0] + i) +
                           static_cast<std::size_t>(n[0]) *
                               ((o[1] + j) + static_cast<std::size_t>(n[1]) * (o[2] + k))] = *src++;
                }
    }
    return global;
}

}  // namespace gridsim
