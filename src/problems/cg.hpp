// Matrix-free conjugate gradient on a Simulation's fields (the implicit heat step): the
// operator is a stencil applied by the backend's kernels with the halo exchange overlapped
// (StencilOperator::apply), the vector operations are the backend's (cuBLAS or fused kernels on the
// GPU, loops on the CPU), and each reduction is one all-reduce over the ranks: MPI on the host,
// or, when asked and the halo transport is NCCL, NCCL on the boundary stream (the sums then
// reach the host already added).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/simulation.hpp"
#include "problems/chebyshev.hpp"
#include "problems/multigrid.hpp"

namespace gridsim {

enum class CgPreconditioner { none, jacobi, chebyshev, multigrid };

struct CgSettings {
    double tolerance = 1e-8;  // stop when ||r|| <= tolerance * ||b||
    std::int64_t max_iterations = 1000;
    CgPreconditioner preconditioner = CgPreconditioner::none;
    int chebyshev_degree = 8;  // operator applications per preconditioning
    int lanczos_steps = 20;    // plain iterations of a solve that give the Chebyshev interval
    MultigridSettings multigrid;
    // Fused vector passes instead of the BLAS sequence (none or jacobi only).
    bool fused = false;
    // All-reduce on the device when the simulation can (NCCL); false: MPI on the host.
    bool device_allreduce = false;
};

struct CgOutcome {
    std::int64_t iterations = 0;
    double relative_residual = 0.0;  // ||r|| / ||b|| when it stopped
    bool converged = false;
};

template <class T>
class ConjugateGradient {
public:
    // `op` must be symmetric positive definite on the updated points with the constant diagonal
    // `diagonal` (the Jacobi preconditioner divides by it). Allocates the work vectors.
    ConjugateGradient(Simulation<T>& sim, const StencilParams<T>& op, double diagonal,
                      const CgSettings& settings);

    // Solves op(x) = b at the updated points, x the simulation's current field (updated in place
    // from its own value as the first guess; its Dirichlet points hold) and b its value on entry.
    CgOutcome solve();
    // Seconds this rank has spent in the all-reduces so far, waiting for the other ranks
    // included (on the boundary lane's clock for NCCL, the host's for MPI).
    [[nodiscard]] double allreduce_seconds() const { return allreduce_seconds_[0]; }
    // Whether the all-reduces run on the device (NCCL).
    [[nodiscard]] bool allreduce_on_device() const { return on_device_; }
    // All-reduces so far (each one sum over the ranks of up to 3 values).
    [[nodiscard]] std::int64_t allreduces() const { return allreduces_; }
    // The Chebyshev preconditioner's interval, once known.
    [[nodiscard]] std::optional<SpectrumBounds> chebyshev_bounds() const {
        return chebyshev_ ? chebyshev_->bounds() : std::nullopt;
    }
    // The multigrid preconditioner, where it is the one.
    [[nodiscard]] MultigridPreconditioner<T>* multigrid() { return multigrid_.get(); }

private:
    // `local_sums()` queues this rank's N sums on the boundary lane and returns where they will
    // be in backend memory (the sum slots, or the operator's folded p.q), timed as `phase`
    // (reduction for dot products, vector for the fused update, which is mostly a vector pass);
    // they are combined over the ranks in one all-reduce, timed as reduction, and returned to
    // the host.
    template <std::size_t N, class F>
    std::array<double, N> reduce(Phase phase, F local_sums);
    // The preconditioned residual: z itself, or r without a preconditioner.
    [[nodiscard]] FieldView<T> z() { return (z_ ? *z_ : r_).view(); }
    // z = r / d, z = q(A) r (z = r while the Chebyshev interval is unknown) or z = B r (a
    // V-cycle); nothing without a preconditioner. BLAS sequence only.
    void precondition();
    // Whether this solve's plain iterations are still gathering the Chebyshev interval.
    [[nodiscard]] bool gathering_interval() const { return chebyshev_ && !chebyshev_->bounds(); }
    // The interval from the iterations so far; the CG restarts from x with the preconditioner.
    void start_chebyshev(double& rz, double& rr);
    // NCCL connects the ranks for a collective at its first use, a cost that would otherwise land
    // in the first timed all-reduce: one empty all-reduce on the device pays it at start-up.
    void connect_device_sums();
    void setup(FieldView<T> x);
    void iterate_blas(FieldView<T> x, double& rz, double& rr);
    void iterate_fused(FieldView<T> x, double& rz, double& rr);

    Simulation<T>& sim_;
    Backend<T>& be_;
    SimulationGrid<T> grid_;  // the operator
    T inv_diagonal_;
    CgSettings settings_;
    Field<T> b_, r_, p_, q_;
    std::optional<Field<T>> z_;  // the preconditioned residual (r itself without one)
    std::optional<ChebyshevPreconditioner<T>> chebyshev_;
    std::unique_ptr<MultigridPreconditioner<T>> multigrid_;
    std::vector<double> lanczos_alpha_, lanczos_beta_;  // this solve's, while gathering
    std::int64_t allreduces_ = 0;
    bool on_device_;
    std::unique_ptr<IntervalTimer> allreduce_timer_;  // slot 0: the all-reduces
    std::vector<double> allreduce_seconds_{0.0};
};

}  // namespace gridsim
