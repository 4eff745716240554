// The jacobi problem, Jacobi iteration for Laplace's equation: its entry in the problem table
// (deck keys, header and summary lines) and the sweep loop with its residual history and
// convergence test.
#include <fmt/format.h>

#include <deque>
#include <utility>
#include <vector>

#include "problems/problem.hpp"
#include "run/time_loop.hpp"

namespace gridsim {

namespace {

// The residual of sweep n is computed inside sweep n (fused) and read by the host after sweep
// n+1 has been issued, so the GPU never idles while the host waits for it. If it shows
// convergence, sweep n+1 is undone (its input, u^n, is still the other buffer): the run stops
// at exactly the sweep that converged, as if it had waited. With temporal blocking the sweeps
// between two residual sweeps run as blocks (Simulation::sweeps), never a residual sweep itself
// (it sums its own change) nor, with a tolerance, the sweep after one (it may be undone;
// without a tolerance nothing is undone, and that sweep starts a block). A
// residual is read at once where something needs it at that sweep (a progress line, an output,
// the last sweep). Without a tolerance up to Recording::kMostReads residual sweeps in a row, the
// host needing nothing between them, go as one replayed group where the sweeps are recorded
// (Simulation::residual_group).
// With a residual every sweep and passes that sum every level (Simulation::sums_in_passes), a
// block of sweeps is one pass: without a tolerance its residuals are read after the next block
// has been issued; with one, at once, and a convergence inside the pass undoes the whole pass
// (its input is still the other buffer) and redoes the sweeps up to the converged one.
template <class T>
class JacobiStepper final : public Stepper {
public:
    JacobiStepper(Simulation<T>& sim, const Config& cfg, History start_history)
        : sim_(sim),
          cfg_(cfg),
          norm_every_(cfg.integer("time.norm_every")),
          tolerance_(cfg.number("time.tolerance")),
          in_passes_(sim.sums_in_passes()),
          history_(std::move(start_history)) {
        params_.kind = StencilKind::jacobi;
    }

    std::int64_t advance(std::int64_t sweep, const HostStep& host) override {
        return in_passes_ ? summing_pass(sweep, host) : sweeps_and_residuals(sweep, host);
    }
    // Reads every residual in flight, until one has converged.
    void settle() override {
        while (!pending_.empty() && !converged_) take();
    }
    [[nodiscard]] bool converged() const override { return converged_; }
    [[nodiscard]] const char* progress_name() const override { return "residual"; }
    double progress_value() override { return residual_; }
    [[nodiscard]] const History* history() const override { return &history_; }
    [[nodiscard]] History take_history() { return std::move(history_); }
    [[nodiscard]] double last_residual() const { return residual_; }

private:
    // Only a tolerance stops the run at a converged sweep, undoing the sweeps issued after it.
    [[nodiscard]] bool may_converge() const { return tolerance_ > 0; }
    [[nodiscard]] bool residual_at(std::int64_t s) const {
        return s % norm_every_ == 0 || s == cfg_.steps;
    }
    // Reads the oldest residual.
    void take() {
        residual_ = sim_.take_residual();
        history_.emplace_back(pending_.front(), residual_);
        converged_ = may_converge() && residual_ < tolerance_;
        pending_.pop_front();
    }
    // Forgets the residuals still pending (the simulation's reads with them).
    void drop() {
        sim_.drop_residuals();
        pending_.clear();
    }
    std::int64_t summing_pass(std::int64_t sweep, const HostStep& host);
    std::int64_t sweeps_and_residuals(std::int64_t sweep, const HostStep& host);
    [[nodiscard]] int group_at(std::int64_t sweep, const HostStep& host) const;
    std::int64_t residual_group(std::int64_t sweep, int count);

    Simulation<T>& sim_;
    const Config& cfg_;
    const std::int64_t norm_every_;
    const double tolerance_;
    const bool in_passes_;
    StencilParams<T> params_;
    History history_;
    std::deque<std::int64_t> pending_;  // the sweeps whose residuals are requested, not read
    bool converged_ = false;
    double residual_ = 0.0;
};

// A block of sweeps as one summing pass, from `sweep` on. Where a residual converged the fields
// hold the converged sweep, which is returned.
template <class T>
std::int64_t JacobiStepper<T>::summing_pass(std::int64_t sweep, const HostStep& host) {
    const std::int64_t first = sweep + 1;
    const int count = block_length(sweep, sim_.most_residual_sweeps(), cfg_.steps, host);
    sim_.residual_sweeps(params_, count);
    sweep += count;
    while (!pending_.empty() && pending_.front() < first) take();  // the blocks before
    for (std::int64_t s = first; s <= sweep; ++s) pending_.push_back(s);
    if (may_converge()) settle();
    if (!converged_) return sweep;
    const std::int64_t at = history_.back().first;
    drop();
    if (at < sweep) {
        sim_.roll_back();
        sim_.sweeps(params_, static_cast<int>(at - first + 1));
    }
    return at;
}

// A residual sweep, or a block of sweeps without one ending before the next residual sweep
// (which sums its own) and at the next step that needs the host; with a tolerance, one sweep
// while a residual is read, undone where that residual converged.
template <class T>
std::int64_t JacobiStepper<T>::sweeps_and_residuals(std::int64_t sweep, const HostStep& host) {
    const bool check = residual_at(sweep + 1);
    if (check) {
        const int group = group_at(sweep, host);
        if (group > 1) return residual_group(sweep, group);
    }
    const bool undoable = may_converge() && !pending_.empty();
    const int block =
        check || undoable
            ? 1
            : block_length(sweep, sim_.most_sweeps(), cfg_.steps,
                           [&](std::int64_t s) { return residual_at(s + 1) || host(s); });
    if (block > 1) {
        sim_.sweeps(params_, block);
        sweep += block;
    } else {
        sim_.sweep(params_, check);
        ++sweep;
    }
    if (!pending_.empty()) {
        take();
        if (converged_) {
            sim_.roll_back();
            return sweep - 1;
        }
    }
    if (check) {
        sim_.request_residual();
        pending_.push_back(sweep);
    }
    return sweep;
}

// How many sweeps after `sweep` (whose next takes its residual) go as one replayed group: the
// most, up to Recording::kMostReads, that each take their residual without a tolerance (nothing
// to undo), the host needing nothing between them; 1 where no group of two replays.
template <class T>
int JacobiStepper<T>::group_at(std::int64_t sweep, const HostStep& host) const {
    if (may_converge()) return 1;
    int count = 1;
    while (count < Recording::kMostReads && sweep + count + 1 <= cfg_.steps &&
           residual_at(sweep + count + 1) && !host(sweep + count))
        ++count;
    while (count > 1 && !sim_.groups_residuals(count)) --count;
    return count;
}

// A group of residual sweeps as one replay; the residuals requested before it are taken after
// it is issued, as a single sweep's are.
template <class T>
std::int64_t JacobiStepper<T>::residual_group(std::int64_t sweep, int count) {
    sim_.residual_group(params_, count);
    while (!pending_.empty()) take();
    for (int i = 1; i <= count; ++i) pending_.push_back(sweep + i);
    return sweep + count;
}

template <class T>
RunResult run_jacobi(const Config& cfg, MPI_Comm comm, const RunOptions& opt) {
    Simulation<T> sim(cfg, comm, 0,
                      cfg.integer("time.norm_every") > 1 ? Blocks::plain : Blocks::summing,
                      StencilKind::jacobi);
    start(sim, opt);
    JacobiStepper<T> stepper(sim, cfg, opt.start_history);
    RunResult r = run_time_loop(sim, cfg, opt, stepper);
    r.residual_history = stepper.take_history();
    r.converged = stepper.converged();
    r.final_norm = stepper.last_residual();
    r.problem_report["residual_history"] = r.residual_history;
    r.problem_report["converged"] = r.converged;
    if (opt.gather_field) r.global_field = sim.host().gather();
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
    p.stencil = [](const Config&) { return StencilKind::jacobi; };
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
