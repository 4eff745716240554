// The state every problem shares, as one facade over the engine's parts: the process grid and
// the backend, the field pair, the plan the tuner chose once (engine/tuner.hpp), the sweeper that
// executes it, the residual pipeline, the stencil operator (the implicit heat's CG) and the host
// mirror (output, checks). docs/architecture.md, "The engine", draws the parts.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "engine/field_measures.hpp"
#include "engine/field_pair.hpp"
#include "engine/halo_setup.hpp"
#include "engine/host_mirror.hpp"
#include "engine/phase_timer.hpp"
#include "engine/residual_pipeline.hpp"
#include "engine/stencil_operator.hpp"
#include "engine/sweep_plan.hpp"
#include "engine/sweeper.hpp"
#include "engine/trial.hpp"
#include "parallel/collectives.hpp"

namespace gridsim {

template <class T>
class Simulation {
public:
    using Blocks = gridsim::Blocks;
    // Throws ConfigError for a deck this rank count, build or machine cannot run, counting
    // `extra_fields` more fields (make_field) in the memory it needs. `kind`: the stencil the
    // sweeps apply (what "auto"'s start-up trials time).
    Simulation(const Config& cfg, MPI_Comm comm, int extra_fields = 0,
               Blocks blocks = Blocks::plain, StencilKind kind = StencilKind::heat);

    // current = initial condition (Dirichlet points included), or what `load` reads into the
    // owned points (a restart); halos exchanged; next = current.
    void initialise(const std::function<void(const HostField&)>& load = {});

    // Sweeps (engine/sweeper.hpp; residual sweeps with residual_sweeps or request_residual).
    void sweep(const StencilParams<T>& p, bool residual = false) { sweeper_.sweep(p, residual); }
    void sweeps(const StencilParams<T>& p, int count) { sweeper_.sweeps(p, count); }
    [[nodiscard]] int most_sweeps() const { return sweeper_.most_sweeps(); }
    // `count` (1..most_residual_sweeps()) sweeps, each summing its change, and every one's
    // residual requested, in order. The pass's input stays in the other buffer: roll_back().
    void residual_sweeps(const StencilParams<T>& p, int count);
    [[nodiscard]] int most_residual_sweeps() const { return sweeper_.most_residual_sweeps(); }
    // Returns to the field of the previous sweep (still held in the other buffer, halos
    // included): a sweep issued before a convergence test read its result is undone.
    void roll_back() {
        sweeper_.end_pipeline();
        fields_.swap();
    }

    // Residuals (engine/residual_pipeline.hpp): after sweep(p, true); the oldest; forget all.
    void request_residual() { residuals_.request(sweeper_.take_recorded_read()); }
    // `count` sweeps with their residuals requested, replayed as one recording where
    // groups_residuals(count) holds (Sweeper::residual_group).
    [[nodiscard]] bool groups_residuals(int count) const {
        return sweeper_.groups_residuals(count);
    }
    void residual_group(const StencilParams<T>& p, int count) {
        residuals_.request_group(sweeper_.residual_group(p, count), count);
    }
    double take_residual() { return residuals_.take(); }
    void drop_residuals() { residuals_.drop(); }

    // The plan and the trials that chose it.
    [[nodiscard]] const SweepPlan& plan() const { return sweeper_.plan(); }
    [[nodiscard]] int time_block() const { return plan().block; }
    [[nodiscard]] bool sums_in_passes() const { return plan().sums_in_passes(); }
    [[nodiscard]] bool records_sweeps() const { return plan().record_sweeps; }
    [[nodiscard]] const std::vector<TimeBlockTrial>& time_block_trials() const { return trials_; }
    [[nodiscard]] const ExchangeTrial& exchange_trial() const { return exchange_trial_; }
    // Passes over memory so far (sweeps_per_pass in the report).
    [[nodiscard]] std::int64_t memory_passes() const {
        return timer_.passes() + sweeper_.extra_memory_passes();
    }
    // This rank's passes of a pipeline so far (Sweeper::pipelined_passes).
    [[nodiscard]] std::int64_t pipelined_passes() const { return sweeper_.pipelined_passes(); }

    // For solvers with more vectors (the CG): fields shaped like the solution, the operator, the
    // current field to update in place, sums over the ranks on the boundary lane (NCCL).
    [[nodiscard]] Field<T> make_field() { return be_.allocate_field(fields_.extents()); }
    [[nodiscard]] StencilOperator<T>& stencil_operator() { return operator_; }
    [[nodiscard]] FieldView<T> current_field() {
        sweeper_.end_pipeline();  // the caller may write it
        (void)fields_.settle_download(be_, fields_.parity());
        return fields_.current();
    }
    [[nodiscard]] Backend<T>& backend_ops() { return be_; }
    // Whether allreduce_on_lane() works: several ranks, a transport that sums on the device.
    [[nodiscard]] bool reduces_on_device() const {
        return topo_.size() > 1 && halos_.halo->reduces_on_device();
    }
    void allreduce_on_lane(double* sums, int n) { halos_.halo->allreduce_sum_on_lane(sums, n); }
    // How allreduce_on_lane() sums, as the report names it ("nccl", "ipc").
    [[nodiscard]] const char* allreduce_route() const { return halos_.halo->sums_route(); }

    // Global measures of the current field (engine/field_measures.hpp).
    [[nodiscard]] FieldMeasures<T>& measures() { return measures_; }
    // The fields as the host sees them (engine/host_mirror.hpp).
    [[nodiscard]] HostMirror<T>& host() { return host_; }
    // Waits for every lane; returns the per-phase totals so far.
    PhaseTimes finish();

    [[nodiscard]] const Config& config() const { return cfg_; }
    [[nodiscard]] const Domain& domain() const { return dom_; }
    [[nodiscard]] const CartTopology& topology() const { return topo_; }
    [[nodiscard]] const Subdomain& subdomain() const { return topo_.subdomain(); }
    [[nodiscard]] const BackendChoice<T>& backend() const { return choice_; }
    [[nodiscard]] const char* transport_name() const { return halos_.halo->transport_name(); }
    // What the sweeps launch (Backend::launch_description of the run's stencil).
    [[nodiscard]] std::string launch_description() const {
        return be_.launch_description(kind_, dom_.dims);
    }
    // How many of this rank's faces each transport moves (HaloExchange::route_counts).
    [[nodiscard]] const std::vector<std::pair<TransportKind, int>>& route_counts() const {
        return halos_.halo->route_counts();
    }
    [[nodiscard]] std::int64_t global_updated_points() const { return global_updated_; }
    // Bytes of this rank's fields (halos and row padding included).
    [[nodiscard]] std::size_t field_bytes() const {
        return sizeof(T) * static_cast<std::size_t>(field_count() * fields_.extents().total);
    }
    [[nodiscard]] int field_count() const { return 2 + extra_fields_; }
    // Read-only coefficient fields the run's stencil reads beside its field (the report's floor).
    [[nodiscard]] int coefficient_fields() const { return stencil_reads_field(kind_) ? 1 : 0; }
    [[nodiscard]] PhaseTimer& timer() { return timer_; }
    // What every rank computes on, e.g. "2 x NVIDIA H200, 2 x cpu"; the same string on all ranks.
    [[nodiscard]] const std::string& devices() const { return devices_; }

private:
    // Runs the tuner: allocates the fields, sets up the halos, keeps the trials; the plan.
    SweepPlan plan_sweeps(Blocks blocks, StencilKind kind);

    const Config& cfg_;
    int extra_fields_;
    StencilKind kind_;
    Domain dom_;
    CartTopology topo_;
    BackendChoice<T> choice_;
    Backend<T>& be_;
    PhaseTimer timer_;
    SweepGeometry geo_;
    FieldPair<T> fields_;
    HaloSetup<T> halos_;
    std::vector<TimeBlockTrial> trials_;
    ExchangeTrial exchange_trial_;
    Sweeper<T> sweeper_;  // holds the plan
    ResidualPipeline<T> residuals_;
    StencilOperator<T> operator_;
    HostMirror<T> host_;
    FieldMeasures<T> measures_;
    std::int64_t global_updated_ = 0;
    std::string devices_;
};

}  // namespace gridsim
