// CUDA-event intervals per lane (IntervalTimer).
#include <cuda_runtime.h>

#include <array>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_raii.hpp"
#include "kernels/cuda/interval_timer.hpp"

namespace gridsim::cuda {

namespace {

// CUDA-event intervals per lane: events are recorded on the lane's stream and read back only
// once they have completed (collect() never blocks unless asked), so timing adds no
// synchronisation to the step loop.
class CudaIntervalTimer final : public IntervalTimer {
public:
    explicit CudaIntervalTimer(std::array<cudaStream_t, 2> streams) : streams_(streams) {}

    void begin(int slot, Lane lane) override { open_.push_back({slot, record(lane)}); }
    void end(int slot, Lane lane) override {
        for (auto it = open_.rbegin(); it != open_.rend(); ++it) {
            if (it->slot != slot) continue;
            pending_.push_back({slot, std::move(it->start), record(lane)});
            open_.erase(std::next(it).base());
            return;
        }
    }
    void collect(std::vector<double>& seconds, bool block) override {
        std::vector<Pending> still;
        for (Pending& p : pending_) {
            if (block) {
                GRIDSIM_CUDA_CHECK(cudaEventSynchronize(p.end.get()));
            } else if (cudaEventQuery(p.end.get()) == cudaErrorNotReady) {
                still.push_back(std::move(p));
                continue;
            }
            float ms = 0.0f;
            GRIDSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, p.start.get(), p.end.get()));
            seconds[p.slot] += 1e-3 * ms;
            pool_.push_back(std::move(p.start));
            pool_.push_back(std::move(p.end));
        }
        pending_ = std::move(still);
    }

private:
    struct Open {
        int slot;
        Event start;
    };
    struct Pending {
        int slot;
        Event start;
        Event end;
    };
    Event record(Lane lane) {
        Event e = pool_.empty() ? Event(true) : std::move(pool_.back());
        if (!pool_.empty()) pool_.pop_back();
        e.record(streams_[static_cast<int>(lane)]);
        return e;
    }

    std::array<cudaStream_t, 2> streams_;
    std::vector<Open> open_;
    std::vector<Pending> pending_;
    std::vector<Event> pool_;
};

}  // namespace

std::unique_ptr<IntervalTimer> make_event_timer(cudaStream_t boundary, cudaStream_t interior) {
    return std::make_unique<CudaIntervalTimer>(std::array<cudaStream_t, 2>{boundary, interior});
}

}  // namespace gridsim::cuda
