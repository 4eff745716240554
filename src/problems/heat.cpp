// The heat problem, du/dt = alpha Lap u: its entry in the problem table (deck keys, header and
// summary lines) and its two time loops. Lap_h is the central second difference of
// problem.order along each axis, or with problem.conductivity = "density" the order-2 difference
// through faces that conduct with the mean of their two points' densities (ConductionStencil).
// The explicit scheme (FTCS) is one stencil sweep per step, stable for sum_d alpha dt / h_d^2 <=
// 2 / the difference's largest symbol (heat_order.hpp) / the largest density; the implicit one
// (backward Euler) solves (I - alpha dt Lap_h) u' = u by conjugate gradient each step, stable for
// any dt.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "config/deck_reader.hpp"
#include "engine/coefficient_field.hpp"
#include "engine/initial.hpp"
#include "parallel/collectives.hpp"
#include "problems/heat_cg.hpp"
#include "problems/heat_order.hpp"
#include "problems/heat_summary.hpp"
#include "problems/problem.hpp"
#include "run/time_loop.hpp"

namespace gridsim {

namespace {

bool implicit_scheme(const Config& cfg) { return cfg.word("problem.scheme") == "implicit"; }
int order(const Config& cfg) { return static_cast<int>(cfg.integer("problem.order")); }
// problem.conductivity = "density": each face conducts with the mean of its two points' densities.
bool density_conduction(const Config& cfg) { return cfg.word("problem.conductivity") == "density"; }
StencilKind stencil_kind(const Config& cfg) {
    return density_conduction(cfg) ? StencilKind::conduction : heat_stencil_kind(order(cfg));
}

// The largest density anywhere: no face conducts more (1 with uniform conductivity).
double largest_density(const Config& cfg) {
    if (!density_conduction(cfg)) return 1.0;
    double most = cfg.density;
    for (const DensityRegion& g : cfg.regions) most = std::max(most, g.density);
    return most;
}

// The two fields, and the density with density conductivity; the implicit scheme adds CG's b, r,
// p and q, and z with a preconditioner; multigrid adds z, a residual on level 0 (and a Chebyshev
// smoother's three above degree one), and about one for its coarser levels.
int field_count(const Config& cfg) {
    const int fields = 2 + (density_conduction(cfg) ? 1 : 0);
    if (!implicit_scheme(cfg)) return fields;
    const std::string& pre = cfg.word("time.cg_preconditioner");
    const int multigrid = 3 + (cfg.integer("time.mg_smoothing_degree") > 1 ? 3 : 0);
    return fields + 4 + (pre == "jacobi" ? 1 : 0) + (pre == "chebyshev" ? 4 : 0) +
           (pre == "multigrid" ? multigrid : 0);
}

// r_d = alpha dt / h_d^2 per axis (0 beyond the grid's dimensions).
std::array<double, 3> diffusion_numbers(const Config& cfg) {
    std::array<double, 3> r{0.0, 0.0, 0.0};
    for (int d = 0; d < cfg.dims; ++d)
        r[d] = cfg.number("problem.alpha") * cfg.dt / (cfg.spacing(d) * cfg.spacing(d));
    return r;
}

// sum_d r_d <= 1 / this is the explicit stability limit: 2, 8/3 and 1024/315 for orders 2, 4, 8,
// times the largest density with density conductivity (no face conducts more).
double stability_factor(const Config& cfg) {
    return largest_symbol(order(cfg)) / 2.0 * largest_density(cfg);
}

// The largest stable explicit dt: 1 / (factor alpha sum_d 1/h_d^2).
double explicit_dt_limit(const Config& cfg) {
    double inv_h2 = 0.0;
    for (int d = 0; d < cfg.dims; ++d) inv_h2 += 1.0 / (cfg.spacing(d) * cfg.spacing(d));
    return 1.0 / (stability_factor(cfg) * cfg.number("problem.alpha") * inv_h2);
}

// dt from time.dt or time.cfl; the explicit scheme refuses an unstable one.
void resolve_time_step(const DeckReader& r, Config& c) {
    const double limit = explicit_dt_limit(c);
    const double cfl = c.number("time.cfl");
    const bool implicit = implicit_scheme(c);
    if (!implicit && cfl > 1.0)
        r.fail("time.cfl", "must be in (0, 1] (a fraction of the stability limit)");
    c.dt = r.has("time.dt") ? c.number("time.dt") : cfl * limit;
    c.params["time.dt"] = c.dt;
    if (implicit || !r.has("time.dt")) return;
    const std::array<double, 3> rd = diffusion_numbers(c);
    const double factor = stability_factor(c);
    const double sum = factor * (rd[0] + rd[1] + rd[2]);
    if (sum > 1.0) {
        r.fail("time.dt",
               fmt::format("explicit heat step is unstable: {:.6g} * sum_d alpha*dt/h_d^2 = {:.6g} "
                           "> 1 (order {}); use dt <= {:.6g} (or leave dt out and set time.cfl, "
                           "or set problem.scheme = \"implicit\")",
                           factor, sum, order(c), limit));
    }
}

// One step multiplies the sine mode by this (exactly, up to rounding; the implicit step up to
// the CG tolerance): 1 - sum_d r_d S_d explicit, 1 / (1 + sum_d r_d S_d) implicit, with S_d the
// second difference's symbol at kappa_d h_d (order 2: 4 sin^2(kappa_d h_d / 2)). The reflection
// beyond Dirichlet faces keeps the mode an eigenvector at every order.
double step_factor(const Config& cfg, const SineMode& mode) {
    const std::array<double, 3> r = diffusion_numbers(cfg);
    double drop = 0.0;
    for (int d = 0; d < cfg.dims; ++d) {
        drop += r[d] * second_difference_symbol(order(cfg), mode.kappa[d] * cfg.spacing(d),
                                                mode.sin2_half[d]);
    }
    return implicit_scheme(cfg) ? 1.0 / (1.0 + drop) : 1.0 - drop;
}

constexpr const char* kNoCoarserGrid =
    "multigrid needs a coarser grid, and no axis halves: every rank's block along an axis needs "
    "at least 4 points, and an even count on a periodic axis";

// Density conductivity takes order 2 and no preconditioner that divides by a constant diagonal
// or coarsens a constant operator (jacobi, multigrid).
void check_density_conduction(const DeckReader& r, const Config& c) {
    if (!density_conduction(c)) return;
    if (order(c) != 2) r.fail("problem.conductivity", "\"density\" takes problem.order = 2");
    const std::string& pre = c.word("time.cg_preconditioner");
    if (implicit_scheme(c) && (pre == "jacobi" || pre == "multigrid")) {
        r.fail("time.cg_preconditioner",
               "problem.conductivity = \"density\" takes \"none\" or \"chebyshev\" (its "
               "diagonal varies from point to point)");
    }
}

// The deck's last checks: the order, dt, no time block for the implicit scheme (the CG
// exchanges halos inside every iteration), no multigrid above order 2 (its coarser levels are of
// order 2).
void finish_deck(const DeckReader& r, Config& c) {
    if (order(c) != 2 && order(c) != 4 && order(c) != 8)
        r.fail("problem.order", "must be 2, 4 or 8");
    check_density_conduction(r, c);
    resolve_time_step(r, c);
    if (implicit_scheme(c) && c.time_block > 1) {
        r.fail("parallel.time_block",
               "the implicit heat scheme exchanges halos inside every CG iteration; "
               "temporal blocking is for the explicit sweeps (use 1 or \"auto\")");
    }
    if (implicit_scheme(c) && order(c) > 2 && c.word("time.cg_preconditioner") == "multigrid") {
        r.fail("time.cg_preconditioner",
               "\"multigrid\" takes problem.order = 2 (its coarser levels are of order 2)");
    }
    if (implicit_scheme(c) && c.word("time.cg_preconditioner") == "multigrid" &&
        !multigrid_coarsens(make_domain(c), {1, 1, 1})) {
        r.fail("time.cg_preconditioner", kNoCoarserGrid);
    }
    if (implicit_scheme(c) && c.word("time.cg_preconditioner") == "chebyshev" &&
        c.integer("time.cg_lanczos_steps") >= c.integer("time.cg_max_iterations")) {
        r.fail("time.cg_lanczos_steps",
               "the Chebyshev interval needs this many plain CG iterations in one solve, so it "
               "must be below time.cg_max_iterations");
    }
}

// The solution is a pure mode only for the sine initial condition with zero Dirichlet faces and
// uniform conductivity.
bool has_analytic_solution(const Config& cfg) {
    if (cfg.initial != InitialKind::sine || density_conduction(cfg)) return false;
    for (int f = 0; f < 2 * cfg.dims; ++f) {
        if (!cfg.is_periodic(f / 2) && cfg.face_value[f] != 0.0) return false;
    }
    return true;
}

// The FTCS stencil with r_d; with -r_d it is backward Euler's operator, (I - alpha dt Lap_h) u
// (order 2: (1 + 2 sum_d r_d) u - sum_d r_d (u[+e_d] + u[-e_d])), so both schemes run the same
// kernels. With density conductivity it reads `density`, made here from the deck (it must live
// as long as the parameters are used).
template <class T>
StencilParams<T> heat_params(Simulation<T>& sim, double sign, std::optional<Field<T>>& density) {
    const Config& cfg = sim.config();
    const std::array<double, 3> r = diffusion_numbers(cfg);
    StencilParams<T> p;
    p.kind = stencil_kind(cfg);
    p.r = {static_cast<T>(sign * r[0]), static_cast<T>(sign * r[1]), static_cast<T>(sign * r[2])};
    if (density_conduction(cfg)) {
        density = make_coefficient_field(sim, make_density_params(cfg, sim.domain()));
        p.r.field = density->view().data;
    }
    return p;
}

// Max abs and relative L2 error of the current field against `scale * mode.shape(g)`.
template <class T>
ErrorNorms error_against(Simulation<T>& sim, const SineMode& mode, double scale) {
    const FieldView<const T> u = sim.host().current_on_host();
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
    const double max_abs = allreduce(sim.topology().comm(), local[0], Reduce::max);
    double sums[2] = {0.0, 0.0};
    allreduce(sim.topology().comm(), &local[1], sums, 2, Reduce::sum);
    return {max_abs, sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0])};
}

nlohmann::json error_json(const ErrorNorms& e) {
    return {{"max_abs", e.max_abs}, {"rel_l2", e.rel_l2}};
}

// The errors against the exact discrete solution (the mode times step_factor^steps) and the
// continuous one (times exp(-alpha |kappa|^2 t)), when the deck has them.
template <class T>
void add_analytic_errors(Simulation<T>& sim, const Config& cfg, std::int64_t step, RunResult& r) {
    if (!has_analytic_solution(cfg)) return;
    const SineMode mode = make_sine_mode(cfg);
    double rate = 0.0;
    for (int d = 0; d < cfg.dims; ++d)
        rate += cfg.number("problem.alpha") * mode.kappa[d] * mode.kappa[d];
    r.error_discrete =
        error_against(sim, mode, std::pow(step_factor(cfg, mode), static_cast<double>(step)));
    r.error_continuous = error_against(sim, mode, std::exp(-rate * r.sim_time));
    r.problem_report["error_vs_analytic"] = {{"discrete", error_json(*r.error_discrete)},
                                             {"continuous", error_json(*r.error_continuous)}};
}

// The explicit scheme's steps: blocks of sweeps as long as the time block's room allows.
template <class T>
class ExplicitStepper final : public Stepper {
public:
    ExplicitStepper(Simulation<T>& sim, const Config& cfg)
        : sim_(sim), cfg_(cfg), params_(heat_params<T>(sim, 1.0, density_)) {}
    std::int64_t advance(std::int64_t step, const HostStep& host) override {
        const int block = block_length(step, sim_.most_sweeps(), cfg_.steps, host);
        sim_.sweeps(params_, block);
        return step + block;
    }
    [[nodiscard]] const char* progress_name() const override { return "|u|"; }
    double progress_value() override { return sim_.measures().norm(); }

private:
    Simulation<T>& sim_;
    const Config& cfg_;
    std::optional<Field<T>> density_;  // with density conductivity
    const StencilParams<T> params_;
};

// The heat result's common part: the final norm, the errors against the analytic solution and
// the gathered field.
template <class T>
void finish_heat(Simulation<T>& sim, const Config& cfg, const RunOptions& opt, RunResult& r) {
    r.final_norm = sim.measures().norm();
    add_analytic_errors(sim, cfg, r.steps, r);
    if (opt.gather_field) r.global_field = sim.host().gather();
}

template <class T>
RunResult run_explicit(const Config& cfg, MPI_Comm comm, const RunOptions& opt) {
    Simulation<T> sim(cfg, comm, field_count(cfg) - 2, Blocks::plain, stencil_kind(cfg));
    start(sim, opt);
    ExplicitStepper<T> stepper(sim, cfg);
    RunResult r = run_time_loop(sim, cfg, opt, stepper);
    finish_heat(sim, cfg, opt, r);
    return r;
}

// Each step solves (I - alpha dt Lap_h) u' = u with the current field as the first guess. A
// solve that does not reach time.cg_tolerance ends the run on every rank (exit 1).
template <class T>
class ImplicitStepper final : public Stepper {
public:
    ImplicitStepper(Simulation<T>& sim, const CgSettings& settings, const StencilParams<T>& op,
                    double diagonal)
        : sim_(sim), settings_(settings), cg_(sim, op, diagonal, settings) {}
    std::int64_t advance(std::int64_t step,
                         const HostStep& /*host: every step is one solve*/) override {
        ++step;
        const CgOutcome o = cg_.solve();
        record_.add(o);
        if (o.converged) return step;
        if (sim_.topology().rank() == 0)
            std::cerr << fmt::format(
                             "gridsim: error: step {}: CG did not converge: relative residual "
                             "{:.3e} after {} iterations (time.cg_tolerance = {:.3e}, "
                             "time.cg_max_iterations = {})",
                             step, o.relative_residual, o.iterations, settings_.tolerance,
                             settings_.max_iterations)
                      << std::endl;
        throw RunFailure("CG did not converge");
    }
    [[nodiscard]] const char* progress_name() const override { return "|u|"; }
    double progress_value() override { return sim_.measures().norm(); }
    [[nodiscard]] ConjugateGradient<T>& cg() { return cg_; }
    [[nodiscard]] const CgRecord& record() const { return record_; }

private:
    Simulation<T>& sim_;
    CgSettings settings_;
    ConjugateGradient<T> cg_;
    CgRecord record_;
};

template <class T>
RunResult run_implicit(const Config& cfg, MPI_Comm comm, const RunOptions& opt) {
    Simulation<T> sim(cfg, comm, field_count(cfg) - 2, Blocks::none, stencil_kind(cfg));
    start(sim, opt);
    // The operator's diagonal away from the Dirichlet faces: 1 - w_0 sum_d r_d (density
    // conductivity takes no preconditioner that reads it).
    const std::array<double, 3> rd = diffusion_numbers(cfg);
    const double w0 = order(cfg) == 2   ? -2.0
                      : order(cfg) == 4 ? HeatOrderStencil<2>::weight(0)
                                        : HeatOrderStencil<4>::weight(0);
    const double diagonal = 1.0 - w0 * (rd[0] + rd[1] + rd[2]);
    const CgSettings settings = heat_cg_settings(cfg);
    const std::string& pre = cfg.word("time.cg_preconditioner");
    if (pre == "multigrid" && !multigrid_coarsens(sim.domain(), sim.topology().process_grid())) {
        throw ConfigError(cfg.where("time.cg_preconditioner") + kNoCoarserGrid);
    }
    std::optional<Field<T>> density;
    ImplicitStepper<T> stepper(sim, settings, heat_params<T>(sim, -1.0, density), diagonal);
    RunResult r = run_time_loop(sim, cfg, opt, stepper);
    finish_heat(sim, cfg, opt, r);
    r.problem_report["cg"] =
        cg_report(sim, stepper.cg(), stepper.record(), settings, r.loop_seconds);
    return r;
}

template <class T>
RunResult run_heat(const Config& cfg, MPI_Comm comm, const RunOptions& opt) {
    return implicit_scheme(cfg) ? run_implicit<T>(cfg, comm, opt) : run_explicit<T>(cfg, comm, opt);
}

std::string describe(const Config& cfg) {
    std::string out =
        fmt::format("  time            {} steps of dt {:.4e} (alpha {:.4g}), {}{}\n", cfg.steps,
                    cfg.dt, cfg.number("problem.alpha"), cfg.word("problem.scheme"),
                    order(cfg) != 2 ? fmt::format(", order {}", order(cfg)) : "");
    if (density_conduction(cfg)) {
        out += fmt::format("  conductivity    face means of densities: {:.4g} and {} region(s)\n",
                           cfg.density, cfg.regions.size());
    }
    if (implicit_scheme(cfg)) {
        out += fmt::format(
            "  solver          CG to relative residual {:.1e}, at most {} iterations, "
            "preconditioner {}, vector kernels {}, all-reduce {}\n",
            cfg.number("time.cg_tolerance"), cfg.integer("time.cg_max_iterations"),
            cfg.word("time.cg_preconditioner"), cfg.word("parallel.cg_kernels"),
            cfg.word("parallel.cg_allreduce"));
    }
    return out;
}

Problem make_heat_problem() {
    Problem p;
    ProblemDeck& d = p.deck;
    d.name = "heat";
    d.summary =
        "the heat equation du/dt = alpha Lap u, explicit (FTCS) or implicit (backward "
        "Euler by conjugate gradient)";
    d.has_time = true;
    d.precision = Precision::float64;  // checks reach rounding-level accuracy
    d.initial = InitialKind::sine;
    const double inf = HUGE_VAL;
    KeySpec dt = KeySpec::number("time.dt", 0.0, "time step", 0.0, true, inf, "must be > 0");
    dt.default_text = "`time.cfl` x the explicit limit";
    d.keys = {
        KeySpec::number("problem.alpha", 1.0, "diffusivity alpha", 0.0, true, inf, "must be > 0"),
        KeySpec::choice("problem.scheme", {"explicit", "implicit"},
                        "`explicit`: FTCS, stable for f sum_d alpha dt / h_d^2 <= 1 (f by "
                        "order: README); `implicit`: backward Euler by matrix-free conjugate "
                        "gradient, any dt"),
        KeySpec::choice("problem.conductivity", {"uniform", "density"},
                        "`density`: each face conducts with the mean of its two points' "
                        "densities (`initial.density`, `[[initial.regions]]`; README, \"Heat\")"),
        KeySpec::integer("problem.order", 2,
                         "2, 4 or 8: the order of the central second difference along each axis "
                         "(a star of radius order/2; README, \"Heat\")",
                         2, 8),
        dt,
        KeySpec::number("time.cfl", 0.5,
                        "when `time.dt` is absent, dt = cfl x the explicit limit 1 / (f alpha "
                        "sum_d 1/h_d^2); at most 1 with the explicit scheme",
                        0.0, true, inf, "must be > 0 (a multiple of the explicit stability limit)"),
        KeySpec::number("time.cg_tolerance", 1e-8,
                        "implicit: CG stops when ||r||_2 <= this x ||b||_2 (b: the field before "
                        "the step, at the updated points)",
                        0.0, true, 1.0, "must be in (0, 1]"),
        KeySpec::integer("time.cg_max_iterations", 1000,
                         "implicit: a step whose CG has not converged after this many iterations "
                         "ends the run (exit 1)",
                         1, 2147483647),
        KeySpec::choice("time.cg_preconditioner", {"none", "jacobi", "chebyshev", "multigrid"},
                        "implicit: `jacobi` divides by the diagonal; `chebyshev`, a polynomial "
                        "in the operator, sums nothing over ranks; `multigrid`, a geometric "
                        "V-cycle (README, \"Implicit\")"),
        KeySpec::integer("time.mg_smoothing_degree", 1,
                         "implicit, multigrid: the Chebyshev smoother's operator applications "
                         "before and after each coarser level",
                         1, 16),
        KeySpec::integer("time.cg_chebyshev_degree", 8,
                         "implicit, chebyshev: operator applications per preconditioning", 1, 64),
        KeySpec::integer("time.cg_lanczos_steps", 20,
                         "implicit, chebyshev: plain CG iterations whose coefficients give the "
                         "polynomial's interval (a solve that converges sooner leaves it to the "
                         "next)",
                         2, 1000),
        KeySpec::choice("parallel.cg_kernels", {"fused", "cublas"},
                        "implicit: the CG vector operations as fused passes (p.q summed by the "
                        "operator's kernels) or as cuBLAS calls over whole fields"),
        KeySpec::choice("parallel.cg_allreduce", {"mpi", "nccl"},
                        "implicit: how the CG's sums are added over the ranks: `mpi` on the "
                        "host, `nccl` on the GPU's stream where the transport is nccl or ipc"),
    };
    d.finish = &finish_deck;
    p.field_count = &field_count;
    p.stencil = &stencil_kind;
    p.describe = &describe;
    p.run = by_precision(&run_heat<float>, &run_heat<double>);
    p.summary = &heat_summary;
    return p;
}

}  // namespace

const Problem& heat_problem() {
    static const Problem problem = make_heat_problem();
    return problem;
}

}  // namespace gridsim
