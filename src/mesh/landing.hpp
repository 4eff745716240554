// Whether an asynchronous download into host memory has landed (Backend::download_box). The
// backend marks it, on the CUDA backend from a thread of the driver's once the copy is done;
// whoever reads the host memory waits for it, e.g. the output's writer thread, which then needs
// no backend call of its own. A copy that will never land (the device failed and the backend is
// going away) is abandoned: the waiter is released and told not to read the memory.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "mesh/field.hpp"

namespace gridsim {

class Landing {
public:
    // The copy is done: the host memory holds it.
    void land() { settle(State::landed); }
    // The copy will never be done (a no-op once it has landed).
    void abandon() { settle(State::abandoned); }
    // Blocks until landed or abandoned; true when landed.
    bool wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [this] { return state_ != State::pending; });
        return state_ == State::landed;
    }
    [[nodiscard]] bool pending() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return state_ == State::pending;
    }

private:
    enum class State { pending, landed, abandoned };
    void settle(State to) {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            if (state_ != State::pending) return;  // the first word stands
            state_ = to;
        }
        changed_.notify_all();
    }

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    State state_ = State::pending;
};

// A field on its way to host memory: what it will be once `landing` says it has landed.
struct StagedField {
    HostField field;
    std::shared_ptr<Landing> landing;

    // Waits for the landing and returns the field; throws (std::runtime_error, a local error)
    // where the copy was abandoned: its memory must not be read.
    [[nodiscard]] const HostField& landed() const {
        if (!landing->wait())
            throw std::runtime_error("a field's copy from the device never completed");
        return field;
    }
};

}  // namespace gridsim
