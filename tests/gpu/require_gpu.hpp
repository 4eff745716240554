// The GPU suite's first step in every test: all ranks decide together whether every rank has a
// GPU of its own, and all skip together if not: CI has none, and a node with fewer GPUs than
// ranks would have them share (set GRIDSIM_TEST_SHARE_GPUS=1 to run so anyway, e.g. 4 ranks on
// one GPU under MPS; the decks set parallel.share_gpus).
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "kernels/device_runtime.hpp"
#include "parallel/gather.hpp"
#include "platform/backend_select.hpp"

namespace gridsim::test {

inline bool every_rank_has_a_gpu() {
    int mine = cuda_devices_visible() > 0 ? 1 : 0;
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
}

// Whether every node has at least as many distinct GPUs (by PCI bus id, over what its ranks
// see) as ranks. Collective; call only where every rank has a GPU.
inline bool a_gpu_per_rank() {
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    std::string mine;
    for (int d = 0; d < cuda_devices_visible(); ++d)
        mine += device_runtime()->describe(d).pci_bus_id + "\n";
    std::set<std::string> gpus;
    for (const std::string& list : gather_strings(node, mine, true)) {
        std::istringstream in(list);
        for (std::string id; std::getline(in, id);) gpus.insert(id);
    }
    int ranks = 0;
    MPI_Comm_size(node, &ranks);
    MPI_Comm_free(&node);
    int enough = static_cast<int>(gpus.size()) >= ranks ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return enough == 1;
}

inline bool sharing_gpus_allowed() { return std::getenv("GRIDSIM_TEST_SHARE_GPUS") != nullptr; }

}  // namespace gridsim::test

#define GRIDSIM_REQUIRE_GPU()                                                                      \
    do {                                                                                           \
        if (!gridsim::test::every_rank_has_a_gpu()) GTEST_SKIP() << "no CUDA device on some rank"; \
        if (!gridsim::test::sharing_gpus_allowed() && !gridsim::test::a_gpu_per_rank())            \
            GTEST_SKIP() << "fewer GPUs than ranks on a node (GRIDSIM_TEST_SHARE_GPUS=1 shares "   \
                            "them)";                                                               \
    } while (0)
