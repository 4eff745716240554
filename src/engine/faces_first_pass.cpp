// The faces-first pass (SweepPlan::faces_first; docs/architecture.md, "One step"): one launch on
// the interior lane that writes the faces an exchange reads first, the halos moving on the
// boundary lane beside the rest of it once those are written.
#include "engine/sweep_strategy.hpp"

namespace gridsim {

template <class T>
class FacesFirstPass final : public SweepStrategy<T> {
public:
    explicit FacesFirstPass(SweepParts<T>& s) : s_(s) {}

    void run(const Update<T>& u) override {
        u.start(s_);
        FacesFirstPasses<T>& ff = *s_.be.time_blocking()->faces_first(s_.sub.dims, s_.geo.kind);
        s_.phases.faces_first(
            [&] {
                ff.apply_levels_faces_first(u.p, s_.fields.current(), s_.fields.next(),
                                            s_.geo.updated, s_.geo.live, u.levels,
                                            s_.halos.halo->read_boxes(), Lane::interior);
            },
            [&] { ff.wait_for_faces(Lane::boundary); }, s_.fields.next());
    }

private:
    SweepParts<T>& s_;
};

template <class T>
std::unique_ptr<SweepStrategy<T>> make_faces_first(SweepParts<T>& s) {
    return std::make_unique<FacesFirstPass<T>>(s);
}

template std::unique_ptr<SweepStrategy<float>> make_faces_first(SweepParts<float>&);
template std::unique_ptr<SweepStrategy<double>> make_faces_first(SweepParts<double>&);

}  // namespace gridsim
