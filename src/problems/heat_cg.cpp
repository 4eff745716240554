#include "problems/heat_cg.hpp"

#include "parallel/collectives.hpp"

namespace gridsim {

namespace {

// Whole-field passes one iteration makes (reads + writes, in field sizes): the operator reads p
// and writes q (2); the BLAS sequence then p.q (2), x += a p (3), r -= a q (3), r.r (2),
// p *= beta (2), p += r (3); the fused one sums p.q in the operator's pass, then x, r (6) and
// p (3). A Jacobi preconditioner adds, in the BLAS sequence, z = r copied (2) and scaled (2) and
// the r.z beside r.r (2); in the fused pass, the write of z (1). Chebyshev adds the r.z (2) and
// its own passes (chebyshev_passes); multigrid the r.z (2) and a V-cycle's, which the report adds
// (MultigridPreconditioner::vcycle_passes), its fused passes the r.z (2) after the V-cycle.
int passes_per_iteration(const CgSettings& s) {
    switch (s.preconditioner) {
        case CgPreconditioner::none:
            return s.fused ? 11 : 17;
        case CgPreconditioner::jacobi:
            return s.fused ? 12 : 23;
        case CgPreconditioner::chebyshev:
            return 19 + chebyshev_passes(s.chebyshev_degree);
        case CgPreconditioner::multigrid:
            return s.fused ? 13 : 19;
    }
    return 0;
}

}  // namespace

CgSettings heat_cg_settings(const Config& cfg) {
    CgSettings settings;
    settings.tolerance = cfg.number("time.cg_tolerance");
    settings.max_iterations = cfg.integer("time.cg_max_iterations");
    const std::string& pre = cfg.word("time.cg_preconditioner");
    settings.preconditioner = pre == "jacobi"      ? CgPreconditioner::jacobi
                              : pre == "chebyshev" ? CgPreconditioner::chebyshev
                              : pre == "multigrid" ? CgPreconditioner::multigrid
                                                   : CgPreconditioner::none;
    settings.chebyshev_degree = static_cast<int>(cfg.integer("time.cg_chebyshev_degree"));
    settings.lanczos_steps = static_cast<int>(cfg.integer("time.cg_lanczos_steps"));
    settings.multigrid.smoothing_degree = static_cast<int>(cfg.integer("time.mg_smoothing_degree"));
    settings.fused = cfg.word("parallel.cg_kernels") == "fused" && pre != "chebyshev";
    settings.device_allreduce = cfg.word("parallel.cg_allreduce") == "nccl";
    return settings;
}

template <class T>
nlohmann::json cg_report(Simulation<T>& sim, ConjugateGradient<T>& cg, const CgRecord& record,
                         const CgSettings& settings, double loop_seconds) {
    const double per_step = record.steps > 0 ? static_cast<double>(record.total) / record.steps : 0;
    // The slowest rank's: the one the others wait for.
    const double allreduce_max =
        allreduce(sim.topology().comm(), cg.allreduce_seconds(), Reduce::max);
    nlohmann::json out = {
        {"iterations_per_step",
         {{"min", record.min}, {"mean", per_step}, {"max", record.max}, {"total", record.total}}},
        {"final_relative_residual", record.last_residual},
        {"allreduce_s", allreduce_max},
        {"allreduce_share", loop_seconds > 0 ? allreduce_max / loop_seconds : 0.0},
        {"allreduce", cg.allreduce_on_device() ? sim.allreduce_route() : "mpi"},
        {"kernels", settings.fused ? "fused" : "cublas"},
        {"preconditioner", sim.config().word("time.cg_preconditioner")},
        {"allreduces_per_step",
         record.steps > 0 ? static_cast<double>(cg.allreduces()) / record.steps : 0.0},
        {"passes_per_iteration", passes_per_iteration(settings) +
                                     (cg.multigrid() ? cg.multigrid()->vcycle_passes() : 0.0)}};
    if (MultigridPreconditioner<T>* mg = cg.multigrid()) {
        const MgPartSeconds parts = mg->part_seconds();
        const OverRanks o =
            over_ranks(sim.topology().comm(), parts.data(), static_cast<int>(parts.size()));
        nlohmann::json seconds = nlohmann::json::object();
        for (std::size_t p = 0; p < parts.size(); ++p)
            seconds[kMgPartNames[p]] = {{"min", o.min[p]}, {"mean", o.mean[p]}, {"max", o.max[p]}};
        out["multigrid"] = {
            {"levels", mg->level_points()},
            {"smoothing_degree", settings.multigrid.smoothing_degree},
            {"coarse_degree", mg->coarse_degree()},
            {"gathered_level", mg->gathered_level() >= 0 ? nlohmann::json(mg->gathered_level())
                                                         : nlohmann::json(nullptr)},
            {"vcycle_passes", mg->vcycle_passes()},
            {"parts", seconds}};
    }
    if (const auto b = cg.chebyshev_bounds())
        out["chebyshev"] = {{"degree", settings.chebyshev_degree}, {"lo", b->lo}, {"hi", b->hi}};
    return out;
}

template nlohmann::json cg_report<float>(Simulation<float>&, ConjugateGradient<float>&,
                                         const CgRecord&, const CgSettings&, double);
template nlohmann::json cg_report<double>(Simulation<double>&, ConjugateGradient<double>&,
                                          const CgRecord&, const CgSettings&, double);

}  // namespace gridsim
