// Jacobi iteration for Laplace's equation: the sweep loop with its residual history and
// convergence test.
#include <optional>

#include "solver/problems.hpp"
#include "solver/step_loop.hpp"

namespace gridsim {

// The residual of sweep n is computed inside sweep n (fused) and read by the host after sweep
// n+1 has been issued, so the GPU never idles while the host waits for it. If it shows
// convergence, sweep n+1 is undone (its input, u^n, is still the other buffer): the run stops
// at exactly the sweep that converged, as if it had waited. A residual is read at once where
// something needs it at that sweep (a progress line, an output, the last sweep).
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
    std::optional<std::int64_t> pending;  // the sweep whose residual is requested, not yet read
    auto take = [&] {
        residual = sim.take_residual();
        history.emplace_back(*pending, residual);
        converged = cfg.tolerance > 0 && residual < cfg.tolerance;
        pending.reset();
    };

    LoopClock clock(sim.topology().comm());
    StopMonitor stop(sim.topology().comm(), cfg, opt);
    std::string stopped;
    std::int64_t sweep = opt.start_step;
    while (sweep < cfg.steps) {
        const bool check = (sweep + 1) % cfg.norm_every == 0 || sweep + 1 == cfg.steps;
        sim.sweep(params, check);
        ++sweep;
        if (pending) {
            take();
            if (converged) {
                sim.roll_back();
                --sweep;
                break;
            }
        }
        if (check) {
            sim.request_residual();
            pending = sweep;
        }
        const bool show = progress.due(sweep);
        const bool write = opt.output_due && opt.output_due(sweep, false);
        if (pending && (show || write || sweep == cfg.steps)) take();
        if (converged) break;
        if (show) emit_progress(opt, sim, cfg, sweep, "residual", residual, clock.elapsed());
        check_field(opt, sim, cfg, sweep);
        output_if_due(opt, sim, cfg, sweep, sweep == cfg.steps, &history);
        if (sweep < cfg.steps && stop.due(sweep)) {
            // The checkpoint carries every residual up to this sweep: read the one in flight.
            if (pending) take();
            if (converged) break;
            stopped = stop.reason();
            write_stop_checkpoint(opt, sim, cfg, sweep, &history);
            break;
        }
    }
    stop.end_of_loop();
    if (converged) {
        if (progress.enabled())
            emit_progress(opt, sim, cfg, sweep, "residual", residual, clock.elapsed());
        output_if_due(opt, sim, cfg, sweep, true, &history);
    }
    RunResult r = make_result(sim, cfg, opt, sweep, clock);
    r.residual_history = std::move(history);
    r.converged = converged;
    r.stopped = stopped;
    r.final_norm = residual;
    if (opt.gather_field) r.global_field = sim.gather();
    return r;
}

template RunResult run_jacobi<float>(const Config&, MPI_Comm, const RunOptions&);
template RunResult run_jacobi<double>(const Config&, MPI_Comm, const RunOptions&);

}  // namespace gridsim
