#include "run/run.hpp"

#include "problems/problem.hpp"

namespace gridsim {

RunResult run_problem(const Config& cfg, MPI_Comm comm, const RunOptions& options) {
    return find_problem(cfg.problem).run(cfg, comm, options);
}

}  // namespace gridsim
