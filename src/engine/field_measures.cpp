#include "engine/field_measures.hpp"

#include <cmath>

#include "parallel/collectives.hpp"

namespace gridsim {

template <class T>
void FieldMeasures<T>::wait_for_lanes() {
    be_.wait(Lane::boundary);
    be_.wait(Lane::interior);
}

// A host reduction waits for both lanes: it first waits for the work queued before it, whose
// time the lane phases already hold, so that the reduction phase times the reduction alone.
template <class T>
PhaseTimer::Scope FieldMeasures<T>::time_host_reduction() {
    wait_for_lanes();
    return timer_.on_host(Phase::reduction);
}

template <class T>
double FieldMeasures<T>::residual_separate_pass() {
    auto t = time_host_reduction();
    const double local =
        be_.reductions().sum_sq_diff(fields_.current(), fields_.previous(), geo_.updated);
    return std::sqrt(allreduce(topo_.comm(), local, Reduce::sum));
}

template <class T>
double FieldMeasures<T>::norm() {
    auto t = time_host_reduction();
    const double local = be_.reductions().sum_sq(fields_.current(), geo_.owned);
    return std::sqrt(allreduce(topo_.comm(), local, Reduce::sum));
}

template <class T>
FieldStats FieldMeasures<T>::stats() {
    auto t = time_host_reduction();
    const FieldStats mine = be_.reductions().stats(fields_.current(), geo_.owned);
    FieldStats all;
    all.min = allreduce(topo_.comm(), mine.min, Reduce::min);
    all.max = allreduce(topo_.comm(), mine.max, Reduce::max);
    all.sum = allreduce(topo_.comm(), mine.sum, Reduce::sum);
    all.nonfinite = allreduce(topo_.comm(), mine.nonfinite, Reduce::sum);
    return all;
}

template class FieldMeasures<float>;
template class FieldMeasures<double>;

}  // namespace gridsim
