#include "solver/simulation.hpp"

#include <cmath>

#include "comm/gather.hpp"
#include "solver/initial.hpp"

namespace gridsim {

template <class T>
std::unique_ptr<Backend<T>> make_backend(const Config& cfg) {
    if (cfg.backend == BackendKind::cuda) {
        throw ConfigError(cfg.where("parallel.backend") +
                          "\"cuda\" is not available: this build has no CUDA backend yet; use "
                          "\"cpu\" or \"auto\"");
    }
    if (cfg.transport == TransportKind::cuda_aware || cfg.transport == TransportKind::nccl) {
        throw ConfigError(
            cfg.where("parallel.transport") + "\"" + to_string(cfg.transport) +
            "\" moves device memory and needs the CUDA backend; the CPU backend uses \"staged\"");
    }
    return make_cpu_backend<T>();
}

template <class T>
Simulation<T>::Simulation(const Config& cfg, MPI_Comm comm)
    : cfg_(cfg),
      dom_(make_domain(cfg)),
      topo_(comm, cfg, dom_, kStencilRadius),
      backend_(make_backend<T>(cfg)) {
    const Subdomain& sub = topo_.subdomain();
    const FieldExtents ext = FieldExtents::make(dom_.dims, sub.size, kStencilRadius);
    for (auto& f : u_) f = backend_->allocate_field(ext);
    halo_ = std::make_unique<HaloExchange<T>>(topo_, kStencilRadius, *backend_,
                                              std::make_unique<HostMpiTransport<T>>(topo_.comm()));
    updated_ = updated_box(sub);
    regions_ = split_for_overlap(updated_, sub, kStencilRadius);
    global_updated_ = static_cast<std::int64_t>(
        std::llround(allreduce_sum(static_cast<double>(updated_.count()))));
}

template <class T>
void Simulation<T>::initialise() {
    const Subdomain& sub = topo_.subdomain();
    const FieldExtents& ext = u_[0].extents();
    std::vector<T> host(ext.total, T(0));
    for (int k = 0; k < sub.size[2]; ++k) {
        for (int j = 0; j < sub.size[1]; ++j) {
            for (int i = 0; i < sub.size[0]; ++i) {
                const std::array<int, 3> g{sub.offset[0] + i + dom_.solved_origin[0],
                                           sub.offset[1] + j + dom_.solved_origin[1],
                                           sub.offset[2] + k + dom_.solved_origin[2]};
                host[ext.index(i, j, k)] = static_cast<T>(initial_value(cfg_, dom_, g));
            }
        }
    }
    for (auto& f : u_) {
        backend_->upload(host, f.view());
        halo_->exchange(f.view());
    }
    cur_ = 0;
}

template <class T>
void Simulation<T>::update(const StencilParams<T>& p, const Box& box, Lane lane, Phase phase) {
    auto t = timer_.scope(phase);
    backend_->apply(p, u_[cur_].view(), u_[1 - cur_].view(), box, lane);
}

template <class T>
void Simulation<T>::sweep(const StencilParams<T>& p) {
    FieldView<T> next = u_[1 - cur_].view();
    {
        auto t = timer_.scope(Phase::boundary);
        for (const Box& b : regions_.shell)
            backend_->apply(p, u_[cur_].view(), next, b, Lane::boundary);
    }
    {
        auto t = timer_.scope(Phase::pack);
        halo_->pack(next);
    }
    {
        auto t = timer_.scope(Phase::transfer);
        halo_->start();
    }
    if (cfg_.overlap) update(p, regions_.interior, Lane::interior, Phase::interior);
    {
        auto t = timer_.scope(Phase::transfer);
        halo_->wait();
    }
    {
        auto t = timer_.scope(Phase::unpack);
        halo_->unpack(next);
    }
    if (!cfg_.overlap) update(p, regions_.interior, Lane::interior, Phase::interior);
    cur_ = 1 - cur_;
}

template <class T>
double Simulation<T>::allreduce_sum(double local) {
    double global = 0.0;
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, topo_.comm()));
    return global;
}

template <class T>
void Simulation<T>::finish_all_work() {
    backend_->wait(Lane::boundary);
    backend_->wait(Lane::interior);
}

template <class T>
double Simulation<T>::residual() {
    finish_all_work();
    auto t = timer_.scope(Phase::reduction);
    return std::sqrt(
        allreduce_sum(backend_->sum_sq_diff(u_[cur_].view(), u_[1 - cur_].view(), updated_)));
}

template <class T>
double Simulation<T>::norm() {
    finish_all_work();
    auto t = timer_.scope(Phase::reduction);
    const Box owned{{0, 0, 0}, topo_.subdomain().size};
    return std::sqrt(allreduce_sum(backend_->sum_sq(u_[cur_].view(), owned)));
}

template <class T>
FieldView<const T> Simulation<T>::current_on_host() {
    finish_all_work();
    backend_->download(u_[cur_].view(), host_copy_);
    return {host_copy_.data(), u_[cur_].extents()};
}

template <class T>
std::vector<double> Simulation<T>::gather() {
    return gather_to_root(topo_, dom_, current_on_host());
}

template class Simulation<float>;
template class Simulation<double>;
template std::unique_ptr<Backend<float>> make_backend<float>(const Config&);
template std::unique_ptr<Backend<double>> make_backend<double>(const Config&);

}  // namespace gridsim
