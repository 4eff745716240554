#include "engine/residual_pipeline.hpp"

#include <cmath>

#include "parallel/collectives.hpp"

namespace gridsim {

void residuals_over_ranks(MPI_Comm comm, double* sums, int count, TransportKind transport) {
    if (transport_row(transport).sums) {
        sum_in_rank_order(comm, sums, count);
        return;
    }
    for (int i = 0; i < count; ++i) sums[i] = allreduce(comm, sums[i], Reduce::sum);
}

// The fold and the read-back run beside the next sweep: neither lane waits for them.
template <class T>
void ResidualPipeline<T>::request(int recorded_read) {
    const int read = recorded_read >= 0 ? recorded_read : be_.sums().fold_and_read();
    pending_.push_back({read});
}

template <class T>
double ResidualPipeline<T>::take() {
    if (taken_.empty()) take_request();
    const double r = taken_.front();
    taken_.pop_front();
    return r;
}

// The wait in finish_read() is for the requesting sweeps themselves to finish, so it is not timed
// as a reduction; the sum over the ranks (residuals_over_ranks) is. Summed on the host, the ranks'
// sums hold no lane: on the device the boundary lane would wait for every rank's fold.
template <class T>
void ResidualPipeline<T>::take_request() {
    const Pending p = pending_.front();
    pending_.pop_front();
    sums_.clear();
    for (int i = 0; i < p.count; ++i) {
        sums_.push_back(p.levels ? be_.level_sums()->finish_read_level(p.read, i)
                                 : be_.sums().finish_read(p.read + i));
    }
    if (topo_.size() > 1) {
        auto t = timer_.on_host(Phase::reduction);
        residuals_over_ranks(topo_.comm(), sums_.data(), p.count, transport_);
    }
    for (const double s : sums_) taken_.push_back(std::sqrt(s));
}

template class ResidualPipeline<float>;
template class ResidualPipeline<double>;

}  // namespace gridsim
