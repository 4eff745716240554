// The jacobi problem, Jacobi iteration for Laplace's equation: its entry in the problem table
// (deck keys, header and summary lines) and the sweep loop with its residual history and
// convergence test.
#include <fmt/format.h>

#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "problems/problem.hpp"
#include "run/step_loop.hpp"

namespace gridsim {

namespace {

// The residual of sweep n is computed inside sweep n (fused) and read by the host after sweep
// n+1 has been issued, so the GPU never idles while the host waits for it. If it shows
// convergence, sweep n+1 is undone (its input, u^n, is still the other buffer): the run stops
// at exactly the sweep that converged, as if it had waited. With temporal blocking the sweeps
// between two residual sweeps run as blocks (Simulation::sweeps), never the one after a
// residual sweep (it may be undone) nor a residual sweep itself (it sums its own change). A
// residual is read at once where something needs it at that sweep (a progress line, an output, the
// last sweep).
// With a residual every sweep and passes that sum every level (Simulation::sums_in_passes), a
// block of sweeps is one pass: without a tolerance its residuals are read after the next block
// has been issued; with one, at once, and a convergence inside the pass undoes the whole pass
// (its input is still the other buffer) and redoes the sweeps up to the converged one.
// The residuals requested and not yet read, oldest first, and what reading them found.
template <class T>
class ResidualPipeline {
public:
    using History = std::vector<std::pair<std::int64_t, double>>;
    ResidualPipeline(Simulation<T>& sim, double tolerance, History history)
        : sim_(sim), tolerance_(tolerance), history(std::move(history)) {}

    void requested(std::int64_t sweep) { pending_.push_back(sweep); }
    // Whether a residual below time.tolerance stops the run.
    [[nodiscard]] bool stops_below_tolerance() const { return tolerance_ > 0; }
    [[nodiscard]] bool waiting() const { return !pending_.empty(); }
    // Reads the oldest residual.
    void take() {
        residual = sim_.take_residual();
        history.emplace_back(pending_.front(), residual);
        converged = tolerance_ > 0 && residual < tolerance_;
        pending_.pop_front();
    }
    // Reads those of the sweeps before `first`; every one, until one has converged.
    void take_before(std::int64_t first) {
        while (!pending_.empty() && pending_.front() < first) take();
    }
    void take_all() {
        while (!pending_.empty() && !converged) take();
    }
    // Forgets the residuals still pending (the simulation's reads with them).
    void drop() {
        sim_.drop_residuals();
        pending_.clear();
    }

    History history;
    bool converged = false;
    double residual = 0.0;

private:
    Simulation<T>& sim_;
    double tolerance_;
    std::deque<std::int64_t> pending_;
};

// A block of sweeps as one summing pass (Simulation::sums_in_passes), from `sweep` on. Returns
// true where a residual converged: the fields then hold the converged sweep, `sweep` is it.
template <class T>
bool summing_pass(Simulation<T>& sim, const StencilParams<T>& params, const Config& cfg,
                  const std::function<bool(std::int64_t)>& host, ResidualPipeline<T>& res,
                  std::int64_t& sweep) {
    const std::int64_t first = sweep + 1;
    const int count = block_length(sweep, sim.most_residual_sweeps(), cfg.steps, host);
    sim.residual_sweeps(params, count);
    sweep += count;
    res.take_before(first);  // the blocks before
    for (std::int64_t s = first; s <= sweep; ++s) res.requested(s);
    if (res.stops_below_tolerance()) res.take_all();
    if (!res.converged) return false;
    const std::int64_t at = res.history.back().first;
    res.drop();
    if (at < sweep) {
        sim.roll_back();
        sim.sweeps(params, static_cast<int>(at - first + 1));
        sweep = at;
    }
    return true;
}

// A residual sweep, or a block of sweeps without one ending before the next residual sweep
// (which sums its own) and at the next step that needs the host; one sweep while a residual is
// read. Returns true where a residual converged: the sweep after it is then undone.
template <class T>
bool sweeps_and_residuals(Simulation<T>& sim, const StencilParams<T>& params, const Config& cfg,
                          const std::function<bool(std::int64_t)>& host,
                          const std::function<bool(std::int64_t)>& residual_at,
                          ResidualPipeline<T>& res, std::int64_t& sweep) {
    const bool check = residual_at(sweep + 1);
    const int block = check || res.waiting()
                          ? 1
                          : block_length(sweep, sim.most_sweeps(), cfg.steps, [&](std::int64_t s) {
                                return residual_at(s + 1) || host(s);
                            });
    if (block > 1) {
        sim.sweeps(params, block);
        sweep += block;
    } else {
        sim.sweep(params, check);
        ++sweep;
    }
    if (res.waiting()) {
        res.take();
        if (res.converged) {
            sim.roll_back();
            --sweep;
            return true;
        }
    }
    if (check) {
        sim.request_residual();
        res.requested(sweep);
    }
    return false;
}

template <class T>
RunResult run_jacobi(const Config& cfg, MPI_Comm comm, const RunOptions& opt) {
    const std::int64_t norm_every = cfg.integer("time.norm_every");
    using Blocks = typename Simulation<T>::Blocks;
    Simulation<T> sim(cfg, comm, 0, norm_every > 1 ? Blocks::plain : Blocks::summing,
                      StencilKind::jacobi);
    start(sim, opt);
    StencilParams<T> params;
    params.kind = StencilKind::jacobi;
    ProgressSchedule progress(sim.topology().comm(), opt.on_progress ? cfg.progress_every : 0,
                              cfg.steps);
    ResidualPipeline<T> res(sim, cfg.number("time.tolerance"), opt.start_history);
    const bool in_passes = sim.sums_in_passes();
    const auto host = [&](std::int64_t s) { return host_step(opt, cfg, progress, s); };
    const auto residual_at = [&](std::int64_t s) { return s % norm_every == 0 || s == cfg.steps; };

    LoopClock clock(sim.topology().comm());
    StopMonitor stop(sim.topology().comm(), cfg, opt);
    std::string stopped;
    std::int64_t sweep = opt.start_step;
    while (sweep < cfg.steps) {
        if (in_passes ? summing_pass(sim, params, cfg, host, res, sweep)
                      : sweeps_and_residuals(sim, params, cfg, host, residual_at, res, sweep))
            break;
        const bool show = progress.due(sweep);
        const bool write = opt.output_due && opt.output_due(sweep, false);
        if (show || write || sweep == cfg.steps) res.take_all();
        if (res.converged) break;
        if (show) emit_progress(opt, sim, cfg, sweep, "residual", res.residual, clock.elapsed());
        check_field(opt, sim, cfg, sweep);
        output_if_due(opt, sim, cfg, sweep, sweep == cfg.steps, &res.history);
        if (sweep < cfg.steps && stop.due(sweep)) {
            // The checkpoint carries every residual up to this sweep: read the ones in flight.
            res.take_all();
            if (res.converged) break;
            stopped = stop.reason();
            write_stop_checkpoint(opt, sim, cfg, sweep, &res.history);
            break;
        }
    }
    stop.end_of_loop();
    if (res.converged) {
        if (progress.enabled())
            emit_progress(opt, sim, cfg, sweep, "residual", res.residual, clock.elapsed());
        output_if_due(opt, sim, cfg, sweep, true, &res.history);
    }
    RunResult r = make_result(sim, cfg, opt, sweep, clock);
    r.residual_history = std::move(res.history);
    r.converged = res.converged;
    r.stopped = stopped;
    r.final_norm = res.residual;
    r.problem_report["residual_history"] = r.residual_history;
    r.problem_report["converged"] = res.converged;
    if (opt.gather_field) r.global_field = sim.gather();
    return r;
}

std::string describe(const Config& cfg) {
    const double tolerance = cfg.number("time.tolerance");
    return fmt::format(
        "  sweeps          at most {}, residual every {}{}\n", cfg.steps,
        cfg.integer("time.norm_every"),
        tolerance > 0 ? fmt::format(", stop below {:.3e}", tolerance) : std::string());
}

std::string summary(const nlohmann::json& d) {
    return fmt::format("  final residual  {:.6e}{}\n", d["final_norm"].get<double>(),
                       d["converged"].get<bool>() ? " (converged)" : "");
}

Problem make_jacobi_problem() {
    Problem p;
    ProblemDeck& d = p.deck;
    d.name = "jacobi";
    d.summary =
        "Jacobi iteration for Laplace's equation, u' = the mean of the 2 x dims neighbours; "
        "with boundary.kind = \"benchmark\" the standard 2D Jacobi benchmark";
    d.has_time = false;
    d.precision = Precision::float32;   // the standard benchmark runs in float
    d.initial = InitialKind::constant;  // a zero interior (the benchmark's definition)
    d.benchmark_boundary = true;
    d.keys = {
        KeySpec::number("time.tolerance", 0.0,
                        "stop at the first residual below it (0: run all sweeps); the residual "
                        "is the 2-norm of a sweep's change over the updated points",
                        0.0, false, HUGE_VAL, "must be >= 0"),
        KeySpec::integer("time.norm_every", 10, "the residual every n sweeps (and at the last)", 1,
                         2147483647),
    };
    p.describe = &describe;
    p.run = by_precision(&run_jacobi<float>, &run_jacobi<double>);
    p.summary = &summary;
    return p;
}

}  // namespace

const Problem& jacobi_problem() {
    static const Problem problem = make_jacobi_problem();
    return problem;
}

}  // namespace gridsim
