#include "engine/residual_pipeline.hpp"

#include <cmath>

#include "parallel/collectives.hpp"

namespace gridsim {

// The fold and the read-back run beside the next sweep: neither lane waits for them. An
// all-reduce on the device (NCCL, several ranks) must be ordered on the boundary lane with the
// halo messages of the same communicator; it is issued only when the value is taken, after the
// next sweep's boundary work, so it runs beside that sweep's interior instead of delaying it.
template <class T>
void ResidualPipeline<T>::request(int recorded_read) {
    if (recorded_read >= 0) {
        pending_.push_back({nullptr, false, recorded_read, true});
        return;
    }
    double* sum = be_.sums().fold_residual();
    const bool on_device = reduces_on_device();
    const int read = on_device ? -1 : be_.sums().start_read(sum, Backend<T>::ReadAfter::fold);
    pending_.push_back({sum, on_device, read, false});
}

template <class T>
int ResidualPipeline<T>::reduce_on_device_and_read(double* sum) {
    be_.sums().join_fold(Lane::boundary);
    halo_.allreduce_sum_on_lane(sum, 1);
    return be_.sums().start_read(sum, Backend<T>::ReadAfter::boundary_lane);
}

template <class T>
void ResidualPipeline<T>::connect() {
    if (reduces_on_device())
        (void)be_.sums().finish_read(reduce_on_device_and_read(be_.sums().fold_residual()));
}

// Every rank's value added in rank order, the first rank's first: the order of the ipc
// transport's mailbox all-reduce, so bitwise its result.
template <class T>
double ResidualPipeline<T>::sum_in_rank_order(double local) {
    const std::vector<double> all = allgather(topo_.comm(), local);
    double sum = all[0];
    for (std::size_t r = 1; r < all.size(); ++r) sum += all[r];
    return sum;
}

// The wait in finish_read() is for the requesting sweep itself to finish, so it is not timed as
// a reduction; the all-reduce is (on the boundary lane, or on the host).
template <class T>
double ResidualPipeline<T>::take() {
    const Pending p = pending_.front();
    pending_.pop_front();
    if (p.on_device) {
        int read = -1;
        {
            auto t = timer_.on_lane(Phase::reduction, Lane::boundary);
            read = reduce_on_device_and_read(p.sum);
        }
        return std::sqrt(be_.sums().finish_read(read));
    }
    // A pass's level is summed over the ranks as its own sweep's residual would be: where that
    // is on the device (the ipc transport's mailboxes add the ranks' values in rank order; NCCL,
    // which runs summing passes on two ranks only, adds two values, which commute), in rank
    // order on the host; else through the same MPI_Allreduce of one double (one call for all of
    // a pass's levels might let MPI sum in another order).
    // The device's all-reduce would hold the boundary lane until every rank's fold arrived.
    const double sum = p.level >= 0 ? be_.level_sums()->finish_read_level(p.read, p.level)
                                    : be_.sums().finish_read(p.read);
    if (p.global || topo_.size() == 1) return std::sqrt(sum);
    auto t = timer_.on_host(Phase::reduction);
    if (p.level >= 0 && reduces_on_device()) return std::sqrt(sum_in_rank_order(sum));
    return std::sqrt(allreduce(topo_.comm(), sum, Reduce::sum));
}

template class ResidualPipeline<float>;
template class ResidualPipeline<double>;

}  // namespace gridsim
