// Explicit (FTCS) heat equation: the time loop, and the check against the analytic solution.
#include <cmath>

#include "solver/initial.hpp"
#include "solver/problems.hpp"
#include "solver/step_loop.hpp"

namespace gridsim {

namespace {

template <class T>
StencilParams<T> heat_params(const Config& cfg) {
    StencilParams<T> p;
    p.kind = StencilKind::heat;
    const double r[3] = {
        cfg.alpha * cfg.dt / (cfg.spacing(0) * cfg.spacing(0)),
        cfg.alpha * cfg.dt / (cfg.spacing(1) * cfg.spacing(1)),
        cfg.dims == 3 ? cfg.alpha * cfg.dt / (cfg.spacing(2) * cfg.spacing(2)) : 0.0};
    p.r = {static_cast<T>(r[0]), static_cast<T>(r[1]), static_cast<T>(r[2])};
    return p;
}

// Max abs and relative L2 error of the current field against `scale * mode.shape(g)`.
template <class T>
ErrorNorms error_against(Simulation<T>& sim, const HeatMode& mode, double scale) {
    const FieldView<const T> u = sim.current_on_host();
    const Subdomain& sub = sim.subdomain();
    const Domain& dom = sim.domain();
    double local[3] = {0.0, 0.0, 0.0};  // max |e|, sum e^2, sum ref^2
    for (int k = 0; k < sub.size[2]; ++k)
        for (int j = 0; j < sub.size[1]; ++j)
            for (int i = 0; i < sub.size[0]; ++i) {
                const std::array<int, 3> g{dom.solved_origin[0] + sub.offset[0] + i,
                                           dom.solved_origin[1] + sub.offset[1] + j,
                                           dom.solved_origin[2] + sub.offset[2] + k};
                const double ref = scale * mode.shape(g);
                const double e = static_cast<double>(u(i, j, k)) - ref;
                local[0] = std::max(local[0], std::abs(e));
                local[1] += e * e;
                local[2] += ref * ref;
            }
    double max_abs = 0.0;
    double sums[2] = {0.0, 0.0};
    GRIDSIM_MPI_CHECK(
        MPI_Allreduce(&local[0], &max_abs, 1, MPI_DOUBLE, MPI_MAX, sim.topology().comm()));
    GRIDSIM_MPI_CHECK(
        MPI_Allreduce(&local[1], sums, 2, MPI_DOUBLE, MPI_SUM, sim.topology().comm()));
    return {max_abs, sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0])};
}

}  // namespace

template <class T>
RunResult run_heat(const Config& cfg, MPI_Comm comm, const RunOptions& opt) {
    Simulation<T> sim(cfg, comm);
    start(sim, opt);
    const StencilParams<T> params = heat_params<T>(cfg);
    ProgressSchedule progress(sim.topology().comm(), opt.on_progress ? cfg.progress_every : 0,
                              cfg.steps);

    LoopClock clock(sim.topology().comm());
    StopMonitor stop(sim.topology().comm(), cfg, opt);
    std::int64_t step = opt.start_step;
    std::string stopped;
    while (step < cfg.steps) {
        sim.sweep(params);
        ++step;
        check_field(opt, sim, cfg, step);
        output_if_due(opt, sim, cfg, step, step == cfg.steps);
        if (progress.due(step))
            emit_progress(opt, sim, cfg, step, "|u|", sim.norm(), clock.elapsed());
        if (step < cfg.steps && stop.due(step)) {
            stopped = stop.reason();
            write_stop_checkpoint(opt, sim, cfg, step);
            break;
        }
    }
    stop.end_of_loop();
    RunResult r = make_result(sim, cfg, opt, step, clock);
    r.stopped = stopped;

    r.final_norm = sim.norm();
    if (heat_has_analytic_solution(cfg)) {
        const HeatMode mode = make_heat_mode(cfg);
        r.error_discrete =
            error_against(sim, mode, std::pow(mode.lambda, static_cast<double>(step)));
        r.error_continuous = error_against(sim, mode, std::exp(-mode.rate * r.sim_time));
    }
    if (opt.gather_field) r.global_field = sim.gather();
    return r;
}

template RunResult run_heat<float>(const Config&, MPI_Comm, const RunOptions&);
template RunResult run_heat<double>(const Config&, MPI_Comm, const RunOptions&);

}  // namespace gridsim
