// The current and the next field of a run, and how many of each one's halo layers still hold
// the neighbours' current values.
#pragma once

#include <array>

#include "kernels/backend.hpp"

namespace gridsim {

template <class T>
class FieldPair {
public:
    // Two zero-filled fields of `ext`, in backend memory.
    void allocate(Backend<T>& be, const FieldExtents& ext) {
        for (auto& f : u_) f = be.allocate_field(ext);
    }
    [[nodiscard]] FieldView<T> current() { return u_[cur_].view(); }
    [[nodiscard]] FieldView<T> next() { return u_[1 - cur_].view(); }
    [[nodiscard]] FieldView<const T> previous() const { return u_[1 - cur_].view(); }
    [[nodiscard]] FieldView<T> field(int f) { return u_[f].view(); }
    [[nodiscard]] const FieldExtents& extents() const { return u_[0].extents(); }
    // Which of the two is current (a recording reads the fields at fixed addresses).
    [[nodiscard]] int parity() const { return cur_; }
    // Sweeps the current field can take before its halos must be exchanged.
    [[nodiscard]] int room() const { return room_[cur_]; }

    // After a sweep or a block of them that leaves `extend` halo layers valid (none: it
    // exchanged, and all `depth` are), current <-> next.
    void advance(int extend, int depth) {
        room_[1 - cur_] = extend == 0 ? depth : extend;
        cur_ = 1 - cur_;
    }
    // current <-> next, nothing else: a roll back, or a capture's bookkeeping.
    void swap() { cur_ = 1 - cur_; }
    // The first field current, every halo layer of `depth` taken as valid.
    void reset(int depth) {
        cur_ = 0;
        room_ = {depth, depth};
    }
    // Every halo layer of `depth` taken as valid, as after an exchange.
    void refill(int depth) { room_ = {depth, depth}; }
    // A staged download of the current field is in flight.
    void mark_download() { downloading_[cur_] = true; }
    // Before work that writes field f: the boundary lane waits for a staged download of it (for
    // the last download: the copies run in order, so that covers the other field's too).
    // Returns whether it did.
    bool settle_download(Backend<T>& be, int f) {
        if (!downloading_[f]) return false;
        be.join_download();
        downloading_ = {false, false};
        return true;
    }
    bool settle_next(Backend<T>& be) { return settle_download(be, 1 - cur_); }

private:
    std::array<Field<T>, 2> u_;
    int cur_ = 0;
    std::array<int, 2> room_{1, 1};
    std::array<bool, 2> downloading_{false, false};
};

}  // namespace gridsim
