// The run's one time loop. A problem says how it advances (a Stepper); the loop decides where
// the host must look at the field (progress lines, checks, outputs, stop requests), ends the run
// where a residual converges, and times it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "run/step_loop.hpp"

namespace gridsim {

// What a problem does inside the time loop (run_time_loop).
class Stepper {
public:
    using History = std::vector<std::pair<std::int64_t, double>>;
    using HostStep = std::function<bool(std::int64_t)>;

    Stepper() = default;
    Stepper(const Stepper&) = delete;
    Stepper& operator=(const Stepper&) = delete;
    virtual ~Stepper() = default;

    // Advances the fields from `step` by one step or a block of them that ends at the next step
    // at which host(s) holds or earlier; returns the step reached. Where a residual converged on
    // the way, the fields hold the converged step, which is returned, and converged() holds.
    virtual std::int64_t advance(std::int64_t step, const HostStep& host) = 0;
    // Makes every value the host reads at this step current (residuals still in flight).
    virtual void settle() {}
    [[nodiscard]] virtual bool converged() const { return false; }
    // What a progress line shows: the quantity's name and its value now.
    [[nodiscard]] virtual const char* progress_name() const = 0;
    virtual double progress_value() = 0;
    // The residual history an output or checkpoint carries (nullptr: none).
    [[nodiscard]] virtual const History* history() const { return nullptr; }
};

// Runs `stepper` from opt.start_step to the deck's last step, a convergence or a stop request
// (RunResult::stopped); the result as make_result fills it.
template <class T>
RunResult run_time_loop(Simulation<T>& sim, const Config& cfg, const RunOptions& opt,
                        Stepper& stepper) {
    ProgressSchedule progress(sim.topology().comm(), opt.on_progress ? cfg.progress_every : 0,
                              cfg.steps);
    const Stepper::HostStep host = [&](std::int64_t s) { return host_step(opt, cfg, progress, s); };
    LoopClock clock(sim.topology().comm());
    StopMonitor stop(sim.topology().comm(), cfg, opt);
    std::string stopped;
    std::int64_t step = opt.start_step;
    while (step < cfg.steps) {
        step = stepper.advance(step, host);
        if (stepper.converged()) break;
        const bool show = progress.due(step);
        const bool write = opt.output_due && opt.output_due(step, false);
        if (show || write || step == cfg.steps) stepper.settle();
        if (stepper.converged()) break;
        check_field(opt, sim, cfg, step);
        output_if_due(opt, sim, cfg, step, step == cfg.steps, stepper.history());
        // A progress line follows the output of its step, so a line says what is on disk.
        if (show) {
            emit_progress(opt, sim, cfg, step, stepper.progress_name(), stepper.progress_value(),
                          clock.elapsed());
        }
        if (step < cfg.steps && stop.due(step)) {
            // The checkpoint carries every residual up to this step: read the ones in flight.
            stepper.settle();
            if (stepper.converged()) break;
            stopped = stop.reason();
            write_stop_checkpoint(opt, sim, cfg, step, stepper.history());
            break;
        }
    }
    stop.end_of_loop();
    if (stepper.converged()) {
        if (progress.enabled()) {
            emit_progress(opt, sim, cfg, step, stepper.progress_name(), stepper.progress_value(),
                          clock.elapsed());
        }
        output_if_due(opt, sim, cfg, step, true, stepper.history());
    }
    RunResult r = make_result(sim, cfg, opt, step, clock);
    r.stopped = stopped;
    return r;
}

}  // namespace gridsim
