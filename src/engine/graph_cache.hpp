// Recorded sweeps (parallel.graphs: CUDA graphs), keyed by what a recording depends on: the halo
// layers left (a sweep's extent), which field is current (a recording reads the fields at fixed
// addresses) and whether the sweep sums its residual; pairs of exchanging sweeps and groups of
// residual sweeps by the parity they start from. The first sweep of each kind runs unrecorded (it
// also sizes the residual's partials), the next is recorded, later ones replay it. Sampled passes
// (phase timing) always run unrecorded: they record timing events.
#pragma once

#include <array>
#include <memory>

#include "config/config.hpp"
#include "engine/sweep_plan.hpp"
#include "kernels/backend.hpp"
#include "kernels/trace_range.hpp"

namespace gridsim {

template <class T>
class GraphCache {
public:
    struct Entry {
        bool ran = false;
        std::unique_ptr<Recording> work;
    };

    GraphCache(Backend<T>& be, const SweepPlan& plan) : be_(be), plan_(plan) {}

    [[nodiscard]] Entry& sweep(int extend, int parity, bool residual) {
        return sweeps_[extend][parity][residual ? 1 : 0];
    }
    // Whether a sweep of `e`'s kind replays now (not a sampled pass).
    [[nodiscard]] bool replays(const Entry& e, bool residual, bool sampled) const {
        return plan_.record_sweeps && !sampled && e.ran && (!residual || plan_.record_residuals);
    }
    // A sweep ran unrecorded: the next of its kind is recorded, and a replay must first join the
    // lanes it wrote on.
    void ran_unrecorded(Entry& e) {
        e.ran = true;
        lanes_joined_ = false;
    }
    // Work outside any recording (a pass) ran on both lanes.
    void lanes_moved() { lanes_joined_ = false; }

    // A pair of exchanging sweeps replays once both single sweeps ran unrecorded (whatever their
    // first run sets up is then in place before a capture).
    [[nodiscard]] bool pair_ready() const {
        return plan_.record_sweeps && sweeps_[0][0][0].ran && sweeps_[0][1][0].ran;
    }
    [[nodiscard]] Entry& pair(int parity) { return pairs_[parity]; }

    // A group of 2 to Recording::kMostReads residual sweeps replays once both single residual
    // sweeps ran unrecorded. Each size and parity has two recordings, replayed in turn: a group's
    // reads are taken after the next group is launched, and a recording's next replay would
    // overwrite them.
    [[nodiscard]] bool residual_group_ready() const {
        return plan_.record_sweeps && plan_.record_residuals && sweeps_[0][0][1].ran &&
               sweeps_[0][1][1].ran;
    }
    [[nodiscard]] Entry& residual_group(int count, int parity) {
        const auto size = static_cast<std::size_t>(count - 2);
        const int turn = residual_group_turn_[size][parity];
        residual_group_turn_[size][parity] = 1 - turn;
        return residual_groups_[size][parity][turn];
    }

    // Replays `e`, capturing what `capture` issues first if need be (`read_on_host`: the capture
    // ends in a read the host sums); returns the id of the read it ends with, or -1. A replay
    // waits for the work issued before it on the boundary lane only: after a sweep that ran
    // unrecorded, the interior lane may still be writing the field the replay reads, so the
    // lanes are joined first.
    template <class Capture>
    int replay(Entry& e, bool read_on_host, Capture&& capture) {
        const TraceRange range(e.work ? "replay" : "record");
        if (!e.work) {
            be_.recorder()->begin_capture(read_on_host);
            capture();
            e.work = be_.recorder()->end_capture();
        }
        if (!lanes_joined_) be_.join_lanes();
        lanes_joined_ = true;
        return e.work->launch();
    }

private:
    Backend<T>& be_;
    const SweepPlan& plan_;
    bool lanes_joined_ = true;  // no unrecorded work since the last replay
    std::array<std::array<std::array<Entry, 2>, 2>, kMaxTimeBlock> sweeps_;
    std::array<Entry, 2> pairs_;
    static constexpr int kGroupSizes = Recording::kMostReads - 1;  // 2 .. kMostReads sweeps
    // [sweeps - 2][parity][turn]
    std::array<std::array<std::array<Entry, 2>, 2>, kGroupSizes> residual_groups_;
    std::array<std::array<int, 2>, kGroupSizes> residual_group_turn_{};
};

}  // namespace gridsim
