#include "problems/cg.hpp"

#include <array>
#include <cmath>
#include <stdexcept>

namespace gridsim {

template <class T>
ConjugateGradient<T>::ConjugateGradient(Simulation<T>& sim, const StencilParams<T>& op,
                                        double diagonal, const CgSettings& settings)
    : sim_(sim),
      be_(sim.backend_ops()),
      grid_(sim, op),
      inv_diagonal_(static_cast<T>(1.0 / diagonal)),
      settings_(settings),
      b_(sim.make_field()),
      r_(sim.make_field()),
      p_(sim.make_field()),
      q_(sim.make_field()),
      on_device_(settings.device_allreduce && sim.reduces_on_device()),
      allreduce_timer_(on_device_ ? be_.make_interval_timer() : make_wall_clock_timer()) {
    if (settings_.preconditioner != CgPreconditioner::none) z_ = sim.make_field();
    const CgPreconditioner pre = settings_.preconditioner;
    if (settings_.fused && pre == CgPreconditioner::chebyshev)
        throw std::logic_error("cg: the polynomial preconditioner runs the BLAS sequence");
    if (pre == CgPreconditioner::chebyshev) chebyshev_.emplace(grid_, settings_.chebyshev_degree);
    if (pre == CgPreconditioner::multigrid)
        multigrid_ = std::make_unique<MultigridPreconditioner<T>>(sim, grid_, settings_.multigrid);
    be_.vector_ops().prepare();  // start-up work, outside the timed steps
    if (on_device_) connect_device_sums();
}

template <class T>
void ConjugateGradient<T>::connect_device_sums() {
    double* sum = be_.sums().fold_residual();
    be_.sums().join_fold(Lane::boundary);
    sim_.allreduce_on_lane(sum, 1);
    be_.wait(Lane::boundary);
}

template <class T>
template <std::size_t N, class F>
std::array<double, N> ConjugateGradient<T>::reduce(Phase phase, F local_sums) {
    double* local = nullptr;
    {
        auto t = sim_.timer().on_lane(phase, Lane::boundary);
        local = local_sums();
    }
    std::array<double, N> sums{};
    ++allreduces_;
    if (on_device_) {
        {
            auto t = sim_.timer().on_lane(Phase::reduction, Lane::boundary);
            allreduce_timer_->begin(0, Lane::boundary);
            sim_.allreduce_on_lane(local, static_cast<int>(N));
            allreduce_timer_->end(0, Lane::boundary);
        }
        be_.vector_ops().read_sums(local, static_cast<int>(N), sums.data());
    } else {
        be_.vector_ops().read_sums(local, static_cast<int>(N), sums.data());
        auto t = sim_.timer().on_host(Phase::reduction);
        allreduce_timer_->begin(0, Lane::boundary);
        const std::array<double, N> mine = sums;
        allreduce(sim_.topology().comm(), mine.data(), sums.data(), static_cast<int>(N),
                  Reduce::sum);
        allreduce_timer_->end(0, Lane::boundary);
    }
    allreduce_timer_->collect(allreduce_seconds_, false);  // finished: read_sums waited
    return sums;
}

template <class T>
void ConjugateGradient<T>::precondition() {
    if (!z_) return;
    if (chebyshev_ && chebyshev_->bounds()) {
        chebyshev_->apply(r_.view(), z_->view());
        return;
    }
    if (multigrid_) {
        multigrid_->apply(r_.view(), z_->view());
        return;
    }
    auto t = sim_.timer().on_lane(Phase::vector, Lane::boundary);
    be_.copy(z_->view().data, r_.view().data, static_cast<std::size_t>(r_.view().ext.total),
             Lane::boundary);
    if (!chebyshev_) be_.vector_ops().scale(inv_diagonal_, z_->view());
}

template <class T>
void ConjugateGradient<T>::start_chebyshev(double& rz, double& rr) {
    chebyshev_->set_bounds(lanczos_bounds(lanczos_alpha_, lanczos_beta_));
    precondition();
    {
        auto t = sim_.timer().on_lane(Phase::vector, Lane::boundary);
        be_.copy(p_.view().data, z().data, static_cast<std::size_t>(p_.view().ext.total),
                 Lane::boundary);
    }
    const auto sums = reduce<2>(Phase::reduction, [&] {
        double* s = be_.vector_ops().sum_slots();
        be_.vector_ops().dot(r_.view(), z(), s);
        be_.vector_ops().dot(r_.view(), r_.view(), s + 1);
        return s;
    });
    rz = sums[0];
    rr = sums[1];
}

// b = x at the updated points, zero elsewhere (so whole-allocation sums over it are exact);
// r = b - op(x), also zero outside the updated points (q is never written there); z = r / d;
// p = z.
template <class T>
void ConjugateGradient<T>::setup(FieldView<T> x) {
    const auto total = static_cast<std::size_t>(x.ext.total);
    {
        auto t = sim_.timer().on_lane(Phase::vector, Lane::boundary);
        be_.copy(b_.view().data, x.data, total, Lane::boundary);
        sim_.stencil_operator().zero_outside_updated(b_.view());
    }
    grid_.apply(x, q_.view());
    {
        auto t = sim_.timer().on_lane(Phase::vector, Lane::boundary);
        be_.copy(r_.view().data, b_.view().data, total, Lane::boundary);
        be_.vector_ops().axpy(T(-1), q_.view(), r_.view());
    }
    precondition();
    auto t = sim_.timer().on_lane(Phase::vector, Lane::boundary);
    be_.copy(p_.view().data, z().data, total, Lane::boundary);
}

// The BLAS sequence: x += a p; r -= a q; z = r / d; p = z + beta p as scale and axpy.
template <class T>
void ConjugateGradient<T>::iterate_blas(FieldView<T> x, double& rz, double& rr) {
    grid_.apply(p_.view(), q_.view());
    const double pq = reduce<1>(Phase::reduction, [&] {
        double* s = be_.vector_ops().sum_slots();
        be_.vector_ops().dot(p_.view(), q_.view(), s);
        return s;
    })[0];
    const auto a = static_cast<T>(rz / pq);
    if (gathering_interval()) lanczos_alpha_.push_back(rz / pq);
    {
        auto t = sim_.timer().on_lane(Phase::vector, Lane::boundary);
        be_.vector_ops().axpy(a, p_.view(), x);
        be_.vector_ops().axpy(-a, q_.view(), r_.view());
    }
    precondition();
    // r.z, and r.r with a preconditioner (r.z itself without one).
    const auto sums = reduce<2>(Phase::reduction, [&] {
        double* s = be_.vector_ops().sum_slots();
        be_.vector_ops().dot(r_.view(), z(), s);
        if (z_) be_.vector_ops().dot(r_.view(), r_.view(), s + 1);
        return s;
    });
    const double beta = sums[0] / rz;
    if (gathering_interval()) lanczos_beta_.push_back(beta);
    rz = sums[0];
    rr = z_ ? sums[1] : sums[0];
    auto t = sim_.timer().on_lane(Phase::vector, Lane::boundary);
    be_.vector_ops().scale(static_cast<T>(beta), p_.view());
    be_.vector_ops().axpy(T(1), z(), p_.view());
}

// The fused passes: p.q summed by the operator's kernels as they write q, then one pass over
// the updated points for x, r, z and r.z, one for p. The diagonal is constant, so
// r.r = (r.z) d; with multigrid the pass sums r.r and a dot product r.z follows the V-cycle.
template <class T>
void ConjugateGradient<T>::iterate_fused(FieldView<T> x, double& rz, double& rr) {
    const Box& box = sim_.stencil_operator().updated_points();
    double* local_pq = sim_.stencil_operator().apply_and_dot(grid_.params(), p_.view(), q_.view());
    const double pq = reduce<1>(Phase::reduction, [&] { return local_pq; })[0];
    // With multigrid the pass makes x and r (and r.r); the V-cycle then makes z, and r.z joins
    // r.r in one all-reduce.
    const bool diagonal = z_ && !multigrid_;
    const CgUpdate<T> s{
        static_cast<T>(rz / pq),   inv_diagonal_, diagonal, p_.view(), q_.view(), x, r_.view(),
        diagonal ? z() : r_.view()};
    double rz_new = 0.0;
    if (multigrid_) {
        double* slots = be_.vector_ops().sum_slots();
        {
            auto t = sim_.timer().on_lane(Phase::vector, Lane::boundary);
            be_.vector_ops().cg_update(s, box, slots);
        }
        precondition();
        const auto sums = reduce<2>(Phase::reduction, [&] {
            be_.vector_ops().dot(r_.view(), z(), slots + 1);
            return slots;
        });
        rr = sums[0];
        rz_new = sums[1];
    } else {
        rz_new = reduce<1>(Phase::vector, [&] {
            double* sum = be_.vector_ops().sum_slots();
            be_.vector_ops().cg_update(s, box, sum);
            return sum;
        })[0];
        rr = z_ ? rz_new / static_cast<double>(inv_diagonal_) : rz_new;
    }
    const double beta = rz_new / rz;
    rz = rz_new;
    auto t = sim_.timer().on_lane(Phase::vector, Lane::boundary);
    be_.vector_ops().xpay(z(), static_cast<T>(beta), p_.view(), box);
}

template <class T>
CgOutcome ConjugateGradient<T>::solve() {
    const FieldView<T> x = sim_.current_field();
    lanczos_alpha_.clear();
    lanczos_beta_.clear();
    setup(x);
    // b.b, r.z and (with a preconditioner) r.r, in one all-reduce.
    const auto first = reduce<3>(Phase::reduction, [&] {
        double* s = be_.vector_ops().sum_slots();
        be_.vector_ops().dot(b_.view(), b_.view(), s);
        be_.vector_ops().dot(r_.view(), z(), s + 1);
        if (z_) be_.vector_ops().dot(r_.view(), r_.view(), s + 2);
        return s;
    });
    double rz = first[1];
    double rr = z_ ? first[2] : rz;
    // Relative to ||b||; a zero right-hand side (zero field, non-zero Dirichlet values) is
    // measured against the first residual instead.
    const double reference = first[0] > 0 ? std::sqrt(first[0]) : std::sqrt(rr);
    CgOutcome out;
    while (true) {
        out.relative_residual = reference > 0 ? std::sqrt(rr) / reference : 0.0;
        if (out.relative_residual <= settings_.tolerance) {
            out.converged = true;
            return out;
        }
        if (out.iterations == settings_.max_iterations) return out;
        if (gathering_interval() &&
            lanczos_alpha_.size() == static_cast<std::size_t>(settings_.lanczos_steps)) {
            start_chebyshev(rz, rr);
            continue;  // the restart's residual is the same: no iteration counted
        }
        if (settings_.fused) {
            iterate_fused(x, rz, rr);
        } else {
            iterate_blas(x, rz, rr);
        }
        ++out.iterations;
    }
}

template class ConjugateGradient<float>;
template class ConjugateGradient<double>;

}  // namespace gridsim
