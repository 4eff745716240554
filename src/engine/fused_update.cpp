// The fused update: every updated point in one launch on the boundary lane, then the halos.
#include "engine/sweep_strategy.hpp"

namespace gridsim {

// A sweep goes as one launch over several boxes where the backend takes them
// (BoxSweeps::apply_boxes): a sum's partials follow the split sweep's boxes (the shell, then the
// interior), so its residual is bitwise the split sweep's, and a periodic walk axis this rank
// holds alone is copied into the halo by the sweep itself (plan wrap_period).
template <class T>
class FusedUpdate final : public SweepStrategy<T> {
public:
    explicit FusedUpdate(SweepParts<T>& s) : s_(s) {}

    void run(const Update<T>& u) override {
        u.start(s_);
        auto apply = [&](const Box& b, Lane lane) { u.apply(s_, b, lane); };
        BoxSweeps<T>* boxes = s_.be.box_sweeps();
        if (u.kind != UpdateKind::sweep || boxes == nullptr) {
            s_.phases.fused(apply, s_.geo.updated, s_.fields.next());
            return;
        }
        {
            auto t = s_.timer.on_lane(Phase::interior, Lane::boundary);
            boxes->apply_boxes(
                u.p, s_.fields.current(), s_.fields.next(),
                u.sum != StencilSum::none ? s_.geo.sum_boxes : std::vector<Box>{s_.geo.updated},
                Lane::boundary, u.sum, s_.plan.wrap_period);
        }
        if (s_.plan.wrap_period == 0)
            s_.phases.exchange_beside_interior(s_.fields.next(), apply, nullptr);
    }

private:
    SweepParts<T>& s_;
};

template <class T>
std::unique_ptr<SweepStrategy<T>> make_fused(SweepParts<T>& s) {
    return std::make_unique<FusedUpdate<T>>(s);
}

template std::unique_ptr<SweepStrategy<float>> make_fused(SweepParts<float>&);
template std::unique_ptr<SweepStrategy<double>> make_fused(SweepParts<double>&);

}  // namespace gridsim
