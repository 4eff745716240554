#include "problems/multigrid.hpp"

#include <algorithm>
#include <cmath>

namespace gridsim {

namespace {

// r_d of the fine operator, whose parameters hold -r_d (A = I - sum_d r_d D_d).
template <class T>
std::array<double, 3> diffusion_numbers(const StencilParams<T>& p) {
    return {-static_cast<double>(p.r.rx), -static_cast<double>(p.r.ry),
            -static_cast<double>(p.r.rz)};
}

}  // namespace

bool multigrid_coarsens(const Domain& dom, const std::array<int, 3>& process_grid) {
    const MgLevel last = plan_levels(dom, process_grid, {0, 0, 0}, 3).back();
    return last.halvings[0] + last.halvings[1] + last.halvings[2] > 0;
}

template <class T>
MultigridPreconditioner<T>::MultigridPreconditioner(Simulation<T>& sim, SimulationGrid<T>& fine,
                                                    const MultigridSettings& settings)
    : sim_(sim),
      settings_(settings),
      part_timer_(sim.backend_ops().make_interval_timer()),
      part_seconds_(static_cast<int>(MgPart::count), 0.0) {
    auto geometry = plan_levels(sim.domain(), sim.topology().process_grid(),
                                sim.topology().coords(), kMaxLevels);
    drop_gathering_that_does_not_pay(geometry, diffusion_numbers(fine.params()), kCoarseReduction,
                                     kGatherBeyondDegree);
    root_ = sim.topology().rank() == 0;
    levels_.resize(geometry.size());
    for (std::size_t l = 0; l < geometry.size(); ++l) levels_[l].geometry = geometry[l];
    for (std::size_t l = 0; l < geometry.size(); ++l) {
        if (!geometry[l].gathered || root_) make_level(l, fine);
        if (gathers_next(l))
            gather_ = std::make_unique<LevelGather<T>>(sim.topology().comm(), sim.backend_ops(),
                                                       geometry[l].sub);
    }
}

// Level l's grid (its operator: the fine one's with r_d / 4^halvings), fields and smoother.
template <class T>
void MultigridPreconditioner<T>::make_level(std::size_t l, SimulationGrid<T>& fine) {
    Level& L = levels_[l];
    const MgLevel& geometry = L.geometry;
    const bool coarsest = l + 1 == levels_.size();
    if (l == 0) {
        L.grid = &fine;
    } else {
        StencilParams<T> op = fine.params();
        op.r.rx = static_cast<T>(std::ldexp(op.r.rx, -2 * geometry.halvings[0]));
        op.r.ry = static_cast<T>(std::ldexp(op.r.ry, -2 * geometry.halvings[1]));
        op.r.rz = static_cast<T>(std::ldexp(op.r.rz, -2 * geometry.halvings[2]));
        L.coarse = std::make_unique<CoarseGrid<T>>(sim_, geometry, op);
        L.grid = L.coarse.get();
        L.b.emplace(L.grid->make_field());
        L.x.emplace(L.grid->make_field());
    }
    L.s = L.grid->make_field();
    const LevelSpectrum spectrum = level_spectrum(geometry, diffusion_numbers(fine.params()));
    const int degree =
        coarsest ? std::min(kMaxCoarseDegree, chebyshev_degree_for(spectrum, kCoarseReduction))
                 : settings_.smoothing_degree;
    const SpectrumBounds bounds = coarsest
                                      ? SpectrumBounds{spectrum.lo, spectrum.hi}
                                      : SpectrumBounds{spectrum.hi / kSmoothingRange, spectrum.hi};
    L.degree = degree;
    if (degree == 1 && !coarsest) {  // q(lambda) = alpha + beta lambda, fused
        const double q0 = chebyshev_q(bounds, 1, 0.0);
        L.alpha = static_cast<T>(q0);
        L.beta = static_cast<T>(chebyshev_q(bounds, 1, 1.0) - q0);
        return;
    }
    L.smoother = std::make_unique<ChebyshevPreconditioner<T>>(*L.grid, degree);
    L.smoother->set_bounds(bounds);
}

template <class T>
void MultigridPreconditioner<T>::apply(FieldView<T> r, FieldView<T> z) {
    timing_ = sampled_pass(++cycles_, sim_.timer().every());
    if (timing_) {
        ++timed_cycles_;
        part_timer_->collect(part_seconds_, false);
    }
    cycle(0, r, z);
    // The exchanges wrote r's and z's halos; the CG needs them zero outside the updated points.
    sim_.stencil_operator().zero_outside_updated(r);
    sim_.stencil_operator().zero_outside_updated(z);
}

template <class T>
void MultigridPreconditioner<T>::combine(Level& L, FieldView<T> in, T a, T b, T c, FieldView<T> add,
                                         FieldView<T> out) {
    L.grid->exchange(in);
    auto t = L.grid->timer().on_lane(Phase::vector, Lane::boundary);
    L.grid->backend().vector_ops().combine(
        {L.grid->params().r, a, b, c, L.geometry.dims, in, add, out}, L.grid->updated_points());
}

template <class T>
void MultigridPreconditioner<T>::smooth(Level& L, FieldView<T> b, FieldView<T> x, bool accumulate) {
    if (L.smoother) {
        L.smoother->apply(b, x, accumulate);
        return;
    }
    combine(L, b, L.alpha, L.beta, accumulate ? T(1) : T(0), x, x);
}

template <class T>
GridTransfer<T> MultigridPreconditioner<T>::transfer(const Level& coarse, FieldView<T> f,
                                                     FieldView<T> c) {
    const MgLevel& g = coarse.geometry;
    return {f, c, {g.halved[0], g.halved[1], g.halved[2]}, {g.shift[0], g.shift[1], g.shift[2]}};
}

template <class T>
void MultigridPreconditioner<T>::solve_gathered(std::size_t l, FieldView<T> b, FieldView<T> x) {
    auto part = time(MgPart::coarse_solve);
    const bool timing = timing_;
    timing_ = false;  // rank 0's levels are the coarse solve
    if (root_) {
        Level& C = levels_[l + 1];
        const FieldView<T> cb = C.b->view();
        const FieldView<T> cx = C.x->view();
        gather_->gather(b, &cb);
        cycle(l + 1, cb, cx);
        gather_->scatter(&cx, x);
    } else {
        gather_->gather(b, nullptr);
        gather_->scatter(nullptr, x);
    }
    timing_ = timing;
}

template <class T>
void MultigridPreconditioner<T>::cycle(std::size_t l, FieldView<T> b, FieldView<T> x) {
    if (gathers_next(l)) {
        solve_gathered(l, b, x);
        return;
    }
    Level& L = levels_[l];
    if (l + 1 == levels_.size()) {  // the coarsest: its Chebyshev iteration is the solve
        auto part = time(MgPart::coarse_solve);
        L.smoother->apply(b, x);
        return;
    }
    Level& C = levels_[l + 1];
    auto& ops = L.grid->backend().vector_ops();
    {
        auto part = time(MgPart::smoothing);
        smooth(L, b, x, false);
    }
    {
        auto part = time(MgPart::restriction);
        combine(L, x, T(0), T(-1), T(1), b, L.s.view());  // s = b - A x
        L.grid->exchange(L.s.view());
        auto t = L.grid->timer().on_lane(Phase::vector, Lane::boundary);
        ops.restrict_to(transfer(C, L.s.view(), C.b->view()), C.grid->updated_points());
    }
    cycle(l + 1, C.b->view(), C.x->view());
    {
        auto part = time(MgPart::prolongation);
        C.grid->exchange(C.x->view());
        auto t = L.grid->timer().on_lane(Phase::vector, Lane::boundary);
        ops.prolong_add(transfer(C, x, C.x->view()), L.grid->updated_points());
    }
    auto part = time(MgPart::smoothing);
    combine(L, x, T(0), T(-1), T(1), b, L.s.view());
    smooth(L, L.s.view(), x, true);
}

template <class T>
MgPartSeconds MultigridPreconditioner<T>::part_seconds() {
    part_timer_->collect(part_seconds_, true);
    const double scale = timed_cycles_ > 0 ? static_cast<double>(cycles_) / timed_cycles_ : 1.0;
    MgPartSeconds out{};
    for (std::size_t p = 0; p < out.size(); ++p) out[p] = scale * part_seconds_[p];
    return out;
}

template <class T>
std::vector<std::array<int, 3>> MultigridPreconditioner<T>::level_points() const {
    std::vector<std::array<int, 3>> out;
    for (const Level& L : levels_) out.push_back(L.geometry.points);
    return out;
}

template <class T>
int MultigridPreconditioner<T>::gathered_level() const {
    for (std::size_t l = 0; l < levels_.size(); ++l)
        if (levels_[l].geometry.gathered) return static_cast<int>(l);
    return -1;
}

// Per level but the coarsest, in its own field sizes: two residuals (read x and b, write s: 3
// each), the restriction's read of s (1), the prolongation's read and write of x (2), and two
// smoothings: fused, alpha b + beta A b (read b, write x: 2) and x += alpha s + beta A s (3), or
// chebyshev_passes each (the second's first pass reading and writing x as well: 1 more). The
// coarsest's solve is one Chebyshev application; a level gathered onto rank 0 is read once and
// written once by the move. Each level counts by its share of level 0's points.
template <class T>
double MultigridPreconditioner<T>::vcycle_passes() const {
    const auto size = [](const MgLevel& g) {
        double n = 1.0;
        for (int d = 0; d < g.dims; ++d) n *= g.points[d];
        return n;
    };
    const double fine = size(levels_[0].geometry);
    double passes = 0.0;
    for (std::size_t l = 0; l < levels_.size(); ++l) {
        const Level& L = levels_[l];
        const int m = L.degree;
        const double own = gathers_next(l)           ? 2  // b read, x written
                           : l + 1 == levels_.size() ? chebyshev_passes(m)
                           : !L.smoother             ? 6 + 1 + 2 + 2 + 3
                                                     : 6 + 1 + 2 + 2 * chebyshev_passes(m) + 1;
        passes += size(L.geometry) / fine * own;
    }
    return passes;
}

template class MultigridPreconditioner<float>;
template class MultigridPreconditioner<double>;

}  // namespace gridsim
