#include "solver/run.hpp"

#include "solver/problems.hpp"

namespace gridsim {

RunResult run_problem(const Config& cfg, MPI_Comm comm, const RunOptions& options) {
    const bool single = cfg.precision == Precision::float32;
    if (cfg.problem == ProblemKind::heat) {
        return single ? run_heat<float>(cfg, comm, options) : run_heat<double>(cfg, comm, options);
    }
    return single ? run_jacobi<float>(cfg, comm, options) : run_jacobi<double>(cfg, comm, options);
}

}  // namespace gridsim
