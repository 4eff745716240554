#include "engine/simulation.hpp"

#include <cmath>

#include "engine/initial.hpp"
#include "engine/tuner.hpp"
#include "platform/resource_checks.hpp"

namespace gridsim {

template <class T>
Simulation<T>::Simulation(const Config& cfg, MPI_Comm comm, int extra_fields, Blocks blocks,
                          StencilKind kind)
    : cfg_(cfg),
      extra_fields_(extra_fields),
      kind_(kind),
      dom_(make_domain(cfg)),
      topo_(comm, cfg, dom_, stencil_radius(kind)),
      choice_(choose_backend<T>(cfg, topo_.comm())),
      be_(*choice_.backend),
      timer_(be_.make_interval_timer(), resolved_phase_every(cfg.phase_every, be_.on_device())),
      geo_(topo_.subdomain(), kind),
      sweeper_(be_, timer_, fields_, geo_, halos_, plan_sweeps(blocks, kind), topo_.subdomain()),
      residuals_(be_, timer_, topo_, choice_.transport),
      operator_(be_, timer_, halos_, geo_, sweeper_.plan()),
      host_(be_, fields_, topo_, dom_),
      measures_(be_, timer_, fields_, geo_, topo_) {
    global_updated_ = std::llround(
        allreduce(topo_.comm(), static_cast<double>(geo_.updated.count()), Reduce::sum));
    const bool gpu = choice_.device.device >= 0;
    devices_ = describe_devices(topo_.comm(), gpu ? choice_.device.name : be_.name(),
                                gpu ? choice_.device.pci_bus_id : std::string());
}

template <class T>
SweepPlan Simulation<T>::plan_sweeps(Blocks blocks, StencilKind kind) {
    Tuner<T> tuner(cfg_, dom_, topo_, choice_, geo_, blocks, kind);
    SweepPlan plan = tuner.plan(fields_, halos_, [&](const FieldExtents& ext) {
        const int fields = field_count() + (cfg_.dump_on_failure ? 1 : 0);  // the last good state
        check_memory(cfg_, topo_,
                     {static_cast<std::size_t>(ext.total) * sizeof(T), fields, be_.on_device(),
                      be_.on_device() ? be_.free_memory() : 0});
    });
    trials_ = tuner.time_block_trials();
    exchange_trial_ = tuner.exchange_trial();
    return plan;
}

// The initial condition is computed where the field lives (on the device for the CUDA backend:
// nothing crosses the host); a restart's field is read on the host and uploaded. Either way the
// first field's halos are exchanged and the whole field, halos included, copied to the second.
template <class T>
void Simulation<T>::initialise(const std::function<void(const HostField&)>& load) {
    const FieldExtents& ext = fields_.extents();
    if (load) {
        std::vector<T> host(ext.total, T(0));
        load(HostField{host.data(), sizeof(T) == 4, ext});
        be_.upload(host, fields_.field(0));
    } else {
        be_.fill_initial(make_initial_params(cfg_, dom_), fields_.field(0),
                         global_origin(dom_, topo_.subdomain()));
    }
    operator_.exchange(fields_.field(0));
    be_.copy(fields_.field(1).data, fields_.field(0).data, static_cast<std::size_t>(ext.total),
             Lane::boundary);
    be_.wait(Lane::boundary);
    fields_.reset(plan().block);
}

// A single sweep is a sweep with its residual.
template <class T>
void Simulation<T>::residual_sweeps(const StencilParams<T>& p, int count) {
    if (count == 1) {
        sweep(p, true);
        request_residual();
        return;
    }
    residuals_.request_levels(sweeper_.summing_pass(p, count), count);
}

template <class T>
PhaseTimes Simulation<T>::finish() {
    measures_.wait_for_lanes();
    return timer_.totals();
}

template class Simulation<float>;
template class Simulation<double>;

}  // namespace gridsim
