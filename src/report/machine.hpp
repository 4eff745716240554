// `gridsim info` and `gridsim bench`: what this build and machine offer, and the ceilings the
// run report measures against. Both are collective; rank 0 prints.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

namespace gridsim {

std::string machine_info(MPI_Comm comm);

struct BenchOptions {
    std::size_t bytes = std::size_t{256} << 20;  // per copy
    int reps = 5;
};
std::string machine_bench(MPI_Comm comm, const BenchOptions& opt);

}  // namespace gridsim
