// `gridsim compare A.h5 B.h5`: field by field, max abs/rel error and the L2/Linf norms of the
// difference; a field passes iff |a - b| <= atol + rtol |b| everywhere and neither holds NaN or
// Inf. Reads in parallel (rows split over the ranks) when started under mpirun.
#pragma once

#include <mpi.h>

#include <string>

namespace gridsim {

struct CompareOptions {
    std::string a;
    std::string b;
    double rtol = 0.0;
    double atol = 0.0;
    std::string field;  // "" = every field of A
};

// Returns 0 (all fields pass) or 1 (some differ) and fills `text` on rank 0. Throws ConfigError
// (exit 2) for a missing or non-HDF5 file, a missing field, or a shape or precision mismatch.
int compare_files(const CompareOptions& opt, MPI_Comm comm, std::string& text);

}  // namespace gridsim
