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

// The write ceiling of directory `dir` (gridsim bench --io DIR): every rank writes `opt.bytes`
// to a file of its own there in 16 MiB writes, then fsync()s and closes it, as `dd bs=16M
// conv=fsync` does; the rate is all ranks' bytes over the slowest rank's time, best of
// `opt.reps`. With several ranks, also as a snapshot is written: every rank its slice of one
// shared file, which rank 0 fsyncs after them. The files are removed. Throws ConfigError (on
// every rank) when `dir` cannot be written. Collective.
std::string io_bench(MPI_Comm comm, const std::string& dir, const BenchOptions& opt);

}  // namespace gridsim
