// Recorded sweeps (parallel.graphs): a single sweep's capture, pairs of exchanging sweeps and
// groups of residual sweeps replayed as one recording each (engine/graph_cache.hpp).
#include <stdexcept>

#include "engine/sweeper.hpp"

namespace gridsim {

template <class T>
void Sweeper<T>::capture_sweep(const Update<T>& u) {
    strategy(u).run(u);
    if (u.sum != StencilSum::none) (void)s_.be.sums().fold_and_read();
}

// Two exchanging sweeps as one recording, where neither of its passes is sampled for phase
// timing; it writes both fields.
template <class T>
void Sweeper<T>::sweep_pair(const StencilParams<T>& p) {
    if (!cache_.pair_ready() || s_.timer.samples_within(2)) {
        sweep(p);
        sweep(p);
        return;
    }
    (void)replay_group(p, StencilSum::none, cache_.pair(s_.fields.parity()), 2);
}

template <class T>
int Sweeper<T>::residual_group(const StencilParams<T>& p, int count) {
    if (count < 2 || count > Recording::kMostReads || !groups_residuals(count))
        throw std::logic_error("a group of residual sweeps where none replays");
    return replay_group(p, StencilSum::change, cache_.residual_group(count, s_.fields.parity()),
                        count);
}

// The capture sweeps the fields in turn and swaps them back as often, so that the recording's
// fields are those of the replay's start.
template <class T>
int Sweeper<T>::replay_group(const StencilParams<T>& p, StencilSum sum,
                             typename GraphCache<T>::Entry& e, int count) {
    ++s_.touches;
    (void)s_.fields.settle_download(s_.be, 0);
    (void)s_.fields.settle_download(s_.be, 1);
    for (int i = 0; i < count; ++i) s_.timer.start_pass();
    const Update<T> u{p, UpdateKind::sweep, 1, sum, 0};
    const int read = cache_.replay(e, sum != StencilSum::none, [&] {
        for (int i = 0; i < count; ++i) {
            capture_sweep(u);
            s_.fields.swap();
        }
        for (int i = 0; i < count; ++i) s_.fields.swap();
    });
    for (int i = 0; i < count; ++i) s_.fields.advance(0, plan_.block);
    return read;
}

template void Sweeper<float>::capture_sweep(const Update<float>&);
template void Sweeper<double>::capture_sweep(const Update<double>&);
template void Sweeper<float>::sweep_pair(const StencilParams<float>&);
template void Sweeper<double>::sweep_pair(const StencilParams<double>&);
template int Sweeper<float>::residual_group(const StencilParams<float>&, int);
template int Sweeper<double>::residual_group(const StencilParams<double>&, int);

}  // namespace gridsim
