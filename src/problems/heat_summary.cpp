#include "problems/heat_summary.hpp"

#include <fmt/format.h>

#include <vector>

namespace gridsim {

namespace {

// One CG iteration's field passes over the owned points of every rank, per second of the
// loop (so the per-step setup counts against it), per rank, over the copy bandwidth measured
// in the same run.
double cg_bandwidth_ratio(const nlohmann::json& d) {
    const auto& cg = d["cg"];
    const double value = d["precision"] == "float" ? 4.0 : 8.0;
    const double bytes = cg["passes_per_iteration"].get<double>() *
                         d["updated_points_per_step"].get<double>() * value *
                         cg["iterations_per_step"]["total"].get<double>();
    const double per_rank = bytes / d["loop_seconds"].get<double>() / d["ranks"].get<double>();
    const double copy = d["copy_bandwidth_GBps"].get<double>() * 1e9;
    return copy > 0 ? per_rank / copy : 0.0;
}

}  // namespace

std::string heat_summary(const nlohmann::json& d) {
    std::string out;
    if (d.contains("cg")) {
        const auto& cg = d["cg"];
        const auto& it = cg["iterations_per_step"];
        const auto& ph = d["phases"];
        auto mean = [&](const char* name) { return ph[name]["mean"].get<double>(); };
        const double op =
            mean("interior") + mean("boundary") + mean("pack") + mean("transfer") + mean("unpack");
        const double loop = d["loop_seconds"].get<double>();
        out += fmt::format(
            "  CG              iterations per step {} / {:.1f} / {} (min / mean / max), final "
            "relative residual {:.3e}, {:.1f} global sums per step\n",
            it["min"].get<std::int64_t>(), it["mean"].get<double>(), it["max"].get<std::int64_t>(),
            cg["final_relative_residual"].get<double>(), cg["allreduces_per_step"].get<double>());
        if (cg.contains("chebyshev")) {
            const auto& c = cg["chebyshev"];
            out += fmt::format(
                "  Chebyshev       degree {} on [{:.4g}, {:.4g}] (from the Lanczos "
                "tridiagonal of the first solve)\n",
                c["degree"].get<int>(), c["lo"].get<double>(), c["hi"].get<double>());
        }
        if (cg.contains("multigrid")) {
            const auto& m = cg["multigrid"];
            const auto coarsest = m["levels"].back().get<std::vector<int>>();
            out += fmt::format(
                "  multigrid       {} levels down to {} points, Chebyshev smoother of degree {}, "
                "coarsest solved by degree {}; a V-cycle {:.1f} field passes\n",
                m["levels"].size(),
                fmt::join(coarsest.begin(), coarsest.begin() + d["dims"].get<int>(), "x"),
                m["smoothing_degree"].get<int>(), m["coarse_degree"].get<int>(),
                m["vcycle_passes"].get<double>());
            if (!m["gathered_level"].is_null()) {
                const auto g = m["levels"][m["gathered_level"].get<int>()].get<std::vector<int>>();
                out += fmt::format("                  levels from {} on gathered onto rank 0\n",
                                   fmt::join(g.begin(), g.begin() + d["dims"].get<int>(), "x"));
            }
            const auto& p = m["parts"];
            auto part = [&](const char* name) { return p[name]["mean"].get<double>(); };
            out += fmt::format(
                "  V-cycle time    smoothing {:.4f} s, restriction {:.4f} s, prolongation {:.4f} "
                "s, coarse solve {:.4f} s (mean over ranks, exchanges included)\n",
                part("smoothing"), part("restriction"), part("prolongation"), part("coarse_solve"));
        }
        out += fmt::format(
            "  CG time         operator {:.4f} s, vector operations {:.4f} s, reductions {:.4f} "
            "s (mean over ranks); global all-reduces ({}) {:.4f} s, {:.1f}% of the loop\n",
            op, mean("vector"), mean("reduction"), cg["allreduce"].get<std::string>(),
            cg["allreduce_s"].get<double>(), 100.0 * cg["allreduce_share"].get<double>());
        const auto iterations = it["total"].get<double>();
        if (iterations > 0 && loop > 0) {
            out += fmt::format(
                "  CG iteration    {:.4e} s (the loop over all iterations), {:.4g} field passes: "
                "{:.1f}% of the copy bandwidth per rank\n",
                loop / iterations, cg["passes_per_iteration"].get<double>(),
                100.0 * cg_bandwidth_ratio(d));
        }
    }
    if (d.contains("error_vs_analytic")) {
        const auto& e = d["error_vs_analytic"];
        out += fmt::format("  error vs exact discrete solution:   max abs {:.3e}, rel L2 {:.3e}\n",
                           e["discrete"]["max_abs"].get<double>(),
                           e["discrete"]["rel_l2"].get<double>());
        out += fmt::format("  error vs continuous (analytic) PDE: max abs {:.3e}, rel L2 {:.3e}\n",
                           e["continuous"]["max_abs"].get<double>(),
                           e["continuous"]["rel_l2"].get<double>());
    }
    return out;
}

}  // namespace gridsim
