// The phases of the overlap recipe (docs/architecture.md, "One step"), each timed on its lane:
// the shell, the interior, every point at once, and the halo exchange beside the interior.
// `apply(box, lane)` updates a box: one sweep's, a pass's, or an operator application's.
#pragma once

#include "engine/phase_timer.hpp"
#include "kernels/backend.hpp"
#include "parallel/halo_exchange.hpp"

namespace gridsim {

template <class T>
class SweepPhases {
public:
    SweepPhases(PhaseTimer& timer, HaloExchange<T>& halo, bool overlapped)
        : timer_(timer), halo_(halo), overlapped_(overlapped) {}

    // The shell of `r` on the boundary lane: the updated points that read a halo.
    template <class Apply>
    void shell(Apply&& apply, const SweepRegions& r) {
        auto t = timer_.on_lane(Phase::boundary, Lane::boundary);
        for (const Box& b : r.shell) apply(b, Lane::boundary);
    }
    // The interior of `r`, which reads no halo, on `lane`.
    template <class Apply>
    void interior(Apply&& apply, Lane lane, const SweepRegions& r) {
        auto t = timer_.on_lane(Phase::interior, lane);
        apply(r.interior, lane);
    }
    // Every point of `updated` at once on the boundary lane, then the halos of `halos`.
    template <class Apply>
    void fused(Apply&& apply, const Box& updated, FieldView<T> halos) {
        {
            auto t = timer_.on_lane(Phase::interior, Lane::boundary);
            apply(updated, Lane::boundary);
        }
        exchange_beside_interior(halos, apply, nullptr);
    }
    // Packs, transfers and unpacks the halos of `halos` on the boundary lane (axis by axis for
    // deep halos) while the interior lane (low priority) updates the interior of `interior`;
    // without overlap that follows the unpack, on the boundary lane; nullptr (a fused sweep has
    // updated every point already) updates none.
    template <class Apply>
    void exchange_beside_interior(FieldView<T> halos, Apply&& apply, const SweepRegions* interior) {
        for (int g = 0; g < halo_.groups(); ++g) {
            {
                auto t = timer_.on_lane(Phase::pack, Lane::boundary);
                halo_.pack(halos, g);
            }
            if (interior && overlapped_ && g == 0) this->interior(apply, Lane::interior, *interior);
            {
                auto t = timer_.on_lane(Phase::transfer, Lane::boundary);
                halo_.transfer(halos, g, interior != nullptr && overlapped_);
            }
            {
                auto t = timer_.on_lane(Phase::unpack, Lane::boundary);
                halo_.unpack(halos, g);
            }
        }
        if (interior && !overlapped_) this->interior(apply, Lane::boundary, *interior);
    }
    [[nodiscard]] bool overlapped() const { return overlapped_; }

private:
    PhaseTimer& timer_;
    HaloExchange<T>& halo_;
    bool overlapped_;
};

}  // namespace gridsim
