// The updates of a time block that leave halo layers valid and exchange nothing: with `extend`
// sweeps of the block still to come, a point up to extend x radius layers out reads the radius
// layers beyond it, which the current field holds (room = extend + 1 sweeps' worth), and each such
// point is computed from the same values as on the rank that owns it.
#include "engine/sweep_strategy.hpp"

namespace gridsim {

// A pass updates its points and the layers it leaves valid as one box in one launch. A sweep
// updates the halo rings first (without its sum, which covers the owned points only), then its
// shell and its interior, as the plain sweep splits them. Either then reflects its field beyond
// the fixed faces where a wider star reads there.
template <class T>
class WithinHalos final : public SweepStrategy<T> {
public:
    explicit WithinHalos(SweepParts<T>& s) : s_(s) {}

    void run(const Update<T>& u) override {
        u.start(s_);
        auto apply = [&](const Box& b, Lane lane) { u.apply(s_, b, lane); };
        if (u.kind != UpdateKind::sweep) {
            {
                auto t = s_.timer.on_lane(Phase::interior, Lane::boundary);
                apply(extend_into_halos(s_.geo.updated, s_.sub, s_.geo.halo_layers(u.extend)),
                      Lane::boundary);
            }
            reflect();
            return;
        }
        {
            Update<T> ring = u;
            ring.sum = StencilSum::none;
            auto t = s_.timer.on_lane(Phase::boundary, Lane::boundary);
            for (const Box& b : s_.halos.rings[u.extend]) ring.apply(s_, b, Lane::boundary);
        }
        s_.phases.shell(apply, s_.geo.regions);
        s_.phases.interior(apply, s_.plan.overlapped() ? Lane::interior : Lane::boundary,
                           s_.geo.regions);
        reflect();
    }

private:
    // The next update of a wider star reads the reflection beyond the fixed faces of this
    // one's points, which the shell and the rings hold (its split), on the boundary lane
    // after them.
    void reflect() {
        if (s_.geo.radius > 1) {
            auto t = s_.timer.on_lane(Phase::boundary, Lane::boundary);
            s_.halos.halo->reflect(s_.fields.next());
        }
    }

    SweepParts<T>& s_;
};

template <class T>
std::unique_ptr<SweepStrategy<T>> make_within_halos(SweepParts<T>& s) {
    return std::make_unique<WithinHalos<T>>(s);
}

template std::unique_ptr<SweepStrategy<float>> make_within_halos(SweepParts<float>&);
template std::unique_ptr<SweepStrategy<double>> make_within_halos(SweepParts<double>&);

}  // namespace gridsim
