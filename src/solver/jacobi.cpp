// Jacobi iteration for Laplace's equation: the sweep loop with its residual history and
// convergence test.
#include "solver/problems.hpp"
#include "solver/step_loop.hpp"

namespace gridsim {

template <class T>
RunResult run_jacobi(const Config& cfg, MPI_Comm comm, const RunOptions& opt) {
    Simulation<T> sim(cfg, comm);
    start(sim, opt);
    StencilParams<T> params;
    params.kind = StencilKind::jacobi;
    ProgressSchedule progress(sim.topology().comm(), opt.on_progress ? cfg.progress_every : 0,
                              cfg.steps);
    std::vector<std::pair<std::int64_t, double>> history = opt.start_history;
    bool converged = false;
    double residual = 0.0;

    LoopClock clock(sim.topology().comm());
    std::int64_t sweep = opt.start_step;
    while (sweep < cfg.steps && !converged) {
        sim.sweep(params);
        ++sweep;
        if (sweep % cfg.norm_every == 0 || sweep == cfg.steps) {
            residual = sim.residual();
            history.emplace_back(sweep, residual);
            converged = cfg.tolerance > 0 && residual < cfg.tolerance;
        }
        if (progress.due(sweep) || (converged && progress.enabled()))
            emit_progress(opt, sim, cfg, sweep, "residual", residual, clock.elapsed());
        output_if_due(opt, sim, cfg, sweep, converged || sweep == cfg.steps, &history);
    }
    RunResult r = make_result(sim, cfg, opt, sweep, clock);
    r.residual_history = std::move(history);
    r.converged = converged;
    r.final_norm = residual;
    if (opt.gather_field) r.global_field = sim.gather();
    return r;
}

template RunResult run_jacobi<float>(const Config&, MPI_Comm, const RunOptions&);
template RunResult run_jacobi<double>(const Config&, MPI_Comm, const RunOptions&);

}  // namespace gridsim
