#include "engine/residual_pipeline.hpp"

#include <cmath>

#include "parallel/collectives.hpp"

namespace gridsim {

// The fold and the read-back run beside the next sweep: neither lane waits for them.
template <class T>
void ResidualPipeline<T>::request(int recorded_read) {
    const int read = recorded_read >= 0 ? recorded_read : be_.sums().fold_and_read();
    pending_.push_back({read});
}

// The wait in finish_read() is for the requesting sweep itself to finish, so it is not timed as a
// reduction; the sum over the ranks is. A sweep's sum and each level's of a summing pass go
// through the same sum over the ranks, so a residual has the same bits whatever the time block:
// with the device transports (ipc, NCCL) every rank's value added in rank order, the first
// rank's first, whatever the rank count (NCCL's own all-reduce adds in an order of its own, ring
// or tree by size, beyond two ranks); with the host's (staged, cuda-aware) one MPI_Allreduce of
// one double (one call for all of a pass's levels might let MPI sum in another order). Summed on
// the host, the ranks' sums never hold a lane: on the device they held the boundary lane until
// every rank's fold had arrived.
template <class T>
double ResidualPipeline<T>::take() {
    const Pending p = pending_.front();
    pending_.pop_front();
    const double sum = p.level >= 0 ? be_.level_sums()->finish_read_level(p.read, p.level)
                                    : be_.sums().finish_read(p.read);
    if (topo_.size() == 1) return std::sqrt(sum);
    auto t = timer_.on_host(Phase::reduction);
    if (halo_.reduces_on_device()) return std::sqrt(sum_in_rank_order(topo_.comm(), sum));
    return std::sqrt(allreduce(topo_.comm(), sum, Reduce::sum));
}

template class ResidualPipeline<float>;
template class ResidualPipeline<double>;

}  // namespace gridsim
