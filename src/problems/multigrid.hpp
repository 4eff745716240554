// The geometric multigrid preconditioner of the implicit step (time.cg_preconditioner =
// "multigrid"): z = B r, one V-cycle from z = 0 over the levels of problems/mg_levels.hpp.
//
// On every level but the coarsest: pre-smooth x = q(A) b, restrict the residual b - A x by full
// weighting, cycle on the next level, add its correction interpolated linearly, post-smooth
// x += q(A) (b - A x). The smoother q is the Chebyshev polynomial of `smoothing_degree`
// (problems/chebyshev.hpp) on [hi / kSmoothingRange, hi], hi the level's largest eigenvalue
// (known exactly: the operator has constant coefficients). Each level's operator is the stencil
// rediscretised on it (spacing doubled on the halved axes: its diffusion numbers quartered),
// restriction is 2^-h times the transpose of prolongation and both smoothings are one
// polynomial, so B is symmetric and, the smoother converging, positive definite: the CG stays
// CG. The coarsest level is solved by the Chebyshev iteration on its exact spectrum, to
// kCoarseReduction. On several ranks, where that would take more than kGatherBeyondDegree
// applications (each an exchange among the ranks), the last level the ranks share is gathered onto
// rank 0 (problems/level_gather.hpp), which cycles on the levels below it alone and scatters the
// result back: gather and scatter are each other's transpose, so B stays symmetric. Nothing sums
// over the ranks; every step is deterministic, so a rerun gives the same bits.
//
// The plan, chosen once per level: a residual is one fused pass (b - A x, after x's exchange);
// a smoother of degree one, alpha b + beta A b, is one fused pass too; higher degrees run the
// Chebyshev preconditioner's passes.
//
// The V-cycle's parts are timed apart (MgPart), each on the boundary lane around all its work,
// its halo exchanges and operator applications included (the report's phases count those too),
// on the V-cycles the simulation's phase timer would sample (engine/phase_timer.hpp), scaled to
// all: smoothing (both smoothings, the second's residual with it), restriction (the residual
// and its full weighting), prolongation (the coarse correction's exchange and interpolation) and
// the coarse solve (on several ranks: the gather, rank 0's levels and the scatter). The parts of
// one V-cycle add up to it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "problems/chebyshev.hpp"
#include "problems/coarse_grid.hpp"
#include "problems/level_gather.hpp"
#include "problems/mg_levels.hpp"

namespace gridsim {

// The smoothing interval's width, hi / lo, and the coarse solve's error reduction and most
// operator applications (docs/tuning.md, "Multigrid smoother").
inline constexpr double kSmoothingRange = 8.0;
inline constexpr double kCoarseReduction = 1e-3;
inline constexpr int kMaxCoarseDegree = 64;
inline constexpr int kMaxLevels = 32;
// The most operator applications the ranks' coarsest level may take to be solved where they
// share it; beyond, rank 0 gathers it (docs/tuning.md, "Multigrid smoother and levels").
inline constexpr int kGatherBeyondDegree = 8;

enum class MgPart { smoothing, restriction, prolongation, coarse_solve, count };
inline constexpr std::array<const char*, static_cast<int>(MgPart::count)> kMgPartNames = {
    "smoothing", "restriction", "prolongation", "coarse_solve"};
using MgPartSeconds = std::array<double, static_cast<int>(MgPart::count)>;

struct MultigridSettings {
    int smoothing_degree = 1;
};

// Whether the grid of `dom` over `process_grid` has a coarser level (the preconditioner needs
// one); the rule is problems/mg_levels.hpp's.
bool multigrid_coarsens(const Domain& dom, const std::array<int, 3>& process_grid);

template <class T>
class MultigridPreconditioner {
public:
    // `fine`: the problem's grid and operator (symmetric positive definite, constant
    // coefficients). Collective: builds every level's halo exchange.
    MultigridPreconditioner(Simulation<T>& sim, SimulationGrid<T>& fine,
                            const MultigridSettings& settings);

    // z = B r; r and z are zero outside the updated points, and are left so.
    void apply(FieldView<T> r, FieldView<T> z);

    // Global points of each level, the coarsest's Chebyshev degree, and one V-cycle's passes
    // over memory in the problem grid's field sizes.
    [[nodiscard]] std::vector<std::array<int, 3>> level_points() const;
    [[nodiscard]] int coarse_degree() const { return levels_.back().degree; }
    // The first level gathered onto rank 0, or -1 where every level is shared by the ranks.
    [[nodiscard]] int gathered_level() const;
    [[nodiscard]] double vcycle_passes() const;
    // Seconds this rank's V-cycles spent in each part so far (waits for the unfinished ones).
    [[nodiscard]] MgPartSeconds part_seconds();

private:
    struct Level {
        MgLevel geometry;
        GridOperator<T>* grid = nullptr;
        std::unique_ptr<CoarseGrid<T>> coarse;  // below level 0
        std::optional<Field<T>> b, x;           // below level 0 (level 0: the CG's r and z)
        Field<T> s;                             // the residual
        int degree = 0;                         // the smoother's, or the coarse solve's
        // The Chebyshev preconditioner's passes; absent where the smoother is of degree one
        // (but on the coarsest level): alpha b + beta A b, one fused pass.
        std::unique_ptr<ChebyshevPreconditioner<T>> smoother;
        T alpha = T(0), beta = T(0);
    };
    // Level l's grid, fields and smoother, from its geometry (set for every level first).
    void make_level(std::size_t l, SimulationGrid<T>& fine);
    void cycle(std::size_t l, FieldView<T> b, FieldView<T> x);
    // Whether level l + 1 is level l gathered onto rank 0.
    [[nodiscard]] bool gathers_next(std::size_t l) const {
        return l + 1 < levels_.size() && levels_[l + 1].geometry.gathered &&
               !levels_[l].geometry.gathered;
    }
    // x = the V-cycle of rank 0's levels from l + 1 on b gathered there, scattered back.
    void solve_gathered(std::size_t l, FieldView<T> b, FieldView<T> x);
    // x = q(A) b, or x += q(A) b where `accumulate`.
    void smooth(Level& L, FieldView<T> b, FieldView<T> x, bool accumulate);
    // out = a in + b A(in) + c add over the level's updated points, in's halos exchanged first.
    void combine(Level& L, FieldView<T> in, T a, T b, T c, FieldView<T> add, FieldView<T> out);
    // The move between fine field `f` and `coarse`'s field `c`.
    [[nodiscard]] static GridTransfer<T> transfer(const Level& coarse, FieldView<T> f,
                                                  FieldView<T> c);
    // Times the returned object's lifetime as `part`, in a sampled V-cycle.
    [[nodiscard]] PhaseTimer::Scope time(MgPart part) {
        const int slot = static_cast<int>(part);
        return {timing_ ? part_timer_.get() : nullptr, slot, kMgPartNames[slot], Lane::boundary};
    }

    Simulation<T>& sim_;
    MultigridSettings settings_;
    std::vector<Level> levels_;  // a gathered level has a grid and fields on rank 0 only
    bool root_ = true;           // rank 0
    std::unique_ptr<LevelGather<T>> gather_;
    std::unique_ptr<IntervalTimer> part_timer_;
    std::vector<double> part_seconds_;
    std::int64_t cycles_ = 0, timed_cycles_ = 0;
    bool timing_ = false;  // this V-cycle's parts
};

}  // namespace gridsim
