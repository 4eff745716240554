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

    const int nranks = topo.size();
    std::array<int, 6> geom{sub.offset[0], sub.offset[1], sub.offset[2],
                            sub.size[0],   sub.size[1],   sub.size[2]};
    std::vector<int> all_geom(topo.rank() == 0 ? 6 * nranks : 0);
    GRIDSIM_MPI_CHECK(
        MPI_Gather(geom.data(), 6, MPI_INT, all_geom.data(), 6, MPI_INT, 0, topo.comm()));
    std::vector<int> counts(nranks), displs(nranks);
    if (topo.rank() == 0) {
        int at = 0;
        for (int r = 0; r < nranks; ++r) {
            counts[r] = all_geom[6 * r + 3] * all_geom[6 * r + 4] * all_geom[6 * r + 5];
            displs[r] = at;
            at += counts[r];
        }
    }
    std::vector<double> packed(
        topo.rank() == 0 ? static_cast<std::size_t>(displs.back() + counts.back()) : 0);
    GRIDSIM_MPI_CHECK(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE,
                                  packed.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
                                  topo.comm()));
    if (topo.rank() != 0) return {};

    const auto& n = dom.solved;
    std::vector<double> global(static_cast<std::size_t>(n[0]) * n[1] * n[2]);
    for (int r = 0; r < nranks; ++r) {
        const int* g = &all_geom[6 * r];
        const double* src = packed.data() + displs[r];
        for (int k = 0; k < g[5]; ++k)
            for (int j = 0; j < g[4]; ++j)
                for (int i = 0; i < g[3]; ++i) {
                    global[(g[0] + i) +
                           static_cast<std::size_t>(n[0]) *
                               ((g[1] + j) + static_cast<std::size_t>(n[1]) * (g[2] + k))] = *src++;
                }
    }
    return global;
}

}  // namespace gridsim
