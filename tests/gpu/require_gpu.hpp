// The GPU suite's first step in every test: all ranks decide together whether every rank sees
// a GPU, and all skip together if not (CI has none).
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include "solver/backend_select.hpp"

namespace gridsim::test {

inline bool every_rank_has_a_gpu() {
    int mine = cuda_devices_visible() > 0 ? 1 : 0;
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
}

}  // namespace gridsim::test

#define GRIDSIM_REQUIRE_GPU()                                                                      \
    do {                                                                                           \
        if (!gridsim::test::every_rank_has_a_gpu()) GTEST_SKIP() << "no CUDA device on some rank"; \
    } while (0)
