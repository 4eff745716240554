// GRIDSIM_MPI_CHECK(expr): every MPI call goes through it. On failure it reports the
// expression, file, line, rank and MPI's error string, then aborts every rank, so a failure on
// one rank can never leave the others waiting in a collective.
#pragma once

#include <mpi.h>

namespace gridsim::detail {
[[noreturn]] void mpi_fail(int code, const char* expr, const char* file, int line);
}  // namespace gridsim::detail

#define GRIDSIM_MPI_CHECK(expr)                                                      \
    do {                                                                             \
        const int gridsim_mpi_rc_ = (expr);                                          \
        if (gridsim_mpi_rc_ != MPI_SUCCESS) {                                        \
            ::gridsim::detail::mpi_fail(gridsim_mpi_rc_, #expr, __FILE__, __LINE__); \
        }                                                                            \
    } while (0)
