#include "engine/residual_pipeline.hpp"

#include <cmath>

#include "parallel/collectives.hpp"

namespace gridsim {

double residual_over_ranks(MPI_Comm comm, double local, TransportKind transport) {
    if (transport == TransportKind::ipc || transport == TransportKind::nccl)
        return sum_in_rank_order(comm, local);
    return allreduce(comm, local, Reduce::sum);
}

// The fold and the read-back run beside the next sweep: neither lane waits for them.
template <class T>
void ResidualPipeline<T>::request(int recorded_read) {
    const int read = recorded_read >= 0 ? recorded_read : be_.sums().fold_and_read();
    pending_.push_back({read});
}

// The wait in finish_read() is for the requesting sweep itself to finish, so it is not timed as a
// reduction; the sum over the ranks (residual_over_ranks) is. Summed on the host, the ranks' sums
// hold no lane: on the device the boundary lane would wait for every rank's fold.
template <class T>
double ResidualPipeline<T>::take() {
    const Pending p = pending_.front();
    pending_.pop_front();
    const double sum = p.level >= 0 ? be_.level_sums()->finish_read_level(p.read, p.level)
                                    : be_.sums().finish_read(p.read);
    if (topo_.size() == 1) return std::sqrt(sum);
    auto t = timer_.on_host(Phase::reduction);
    return std::sqrt(residual_over_ranks(topo_.comm(), sum, transport_));
}

template class ResidualPipeline<float>;
template class ResidualPipeline<double>;

}  // namespace gridsim
