// The phases of the overlap recipe (docs/architecture.md, "One step"), each timed on its lane:
// the shell, the interior, every point at once, the halo exchange beside the interior, and a
// faces-first pass with the exchange beside it.
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
        const bool beside = interior != nullptr && overlapped_;
        move_halos(halos, beside, [&] {
            if (beside) this->interior(apply, Lane::interior, *interior);
        });
        if (interior && !overlapped_) this->interior(apply, Lane::boundary, *interior);
    }
    // A pass over every point in one launch on the interior lane that writes the faces first
    // (`launch`), then on the boundary lane a wait until those are written (`wait_for_faces`)
    // and the halos of `halos`, beside the rest of the pass.
    template <class Launch, class Wait>
    void faces_first(Launch&& launch, Wait&& wait_for_faces, FieldView<T> halos) {
        {
            auto t = timer_.on_lane(Phase::interior, Lane::interior);
            launch();
        }
        {
            auto t = timer_.on_lane(Phase::boundary, Lane::boundary);
            wait_for_faces();
        }
        move_halos(halos, true, [] {});
    }
    // A pass of a pipeline (`launch` on the interior lane; the boundary lane's later work waits
    // for it), then the halos of `halos` on the boundary lane, beside the next pass.
    template <class Launch>
    void pipelined(Launch&& launch, FieldView<T> halos) {
        {
            auto t = timer_.on_lane(Phase::interior, Lane::interior);
            launch();
        }
        move_halos(halos, true, [] {});
    }
    [[nodiscard]] bool overlapped() const { return overlapped_; }

private:
    // Each group's pack, transfer and unpack on the boundary lane, each timed where it does any
    // work; `after_first_pack` once, after the first group's pack. `beside_work`:
    // Transport::exchange's.
    template <class AfterPack>
    void move_halos(FieldView<T> halos, bool beside_work, AfterPack&& after_first_pack) {
        for (int g = 0; g < halo_.groups(); ++g) {
            if (halo_.packs(halos, g)) {
                auto t = timer_.on_lane(Phase::pack, Lane::boundary);
                halo_.pack(halos, g);
            }
            if (g == 0) after_first_pack();
            if (halo_.transfers(g)) {
                auto t = timer_.on_lane(Phase::transfer, Lane::boundary);
                halo_.transfer(halos, g, beside_work);
            }
            if (halo_.unpacks(halos, g)) {
                auto t = timer_.on_lane(Phase::unpack, Lane::boundary);
                halo_.unpack(halos, g);
            }
        }
    }

    PhaseTimer& timer_;
    HaloExchange<T>& halo_;
    bool overlapped_;
};

}  // namespace gridsim
