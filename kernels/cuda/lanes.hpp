// The CUDA backend's two lanes: the boundary stream (high priority) and the interior stream (low
// priority), ordered through events only.
#pragma once

#include <cuda_runtime.h>

#include "kernels/backend.hpp"
#include "kernels/cuda/cuda_raii.hpp"

namespace gridsim::cuda {

class Lanes {
public:
    [[nodiscard]] cudaStream_t stream(Lane lane) const {
        return lane == Lane::boundary ? boundary_.get() : interior_.get();
    }
    [[nodiscard]] cudaStream_t boundary() const { return boundary_.get(); }
    [[nodiscard]] cudaStream_t interior() const { return interior_.get(); }

    // `s`'s later work waits for both lanes' work so far (a stream of the backend's own).
    void follow(cudaStream_t s) {
        boundary_done_.record(boundary_.get());
        interior_done_.record(interior_.get());
        GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(s, boundary_done_.get(), 0));
        GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(s, interior_done_.get(), 0));
    }
    // The boundary stream's later work waits for the interior stream's work so far. While
    // `recording`, only a stream that joined the capture may be waited on.
    void join_interior(bool recording) {
        if (recording) {
            cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
            GRIDSIM_CUDA_CHECK(cudaStreamIsCapturing(interior_.get(), &status));
            if (status != cudaStreamCaptureStatusActive) return;
        }
        interior_done_.record(interior_.get());
        GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(boundary_.get(), interior_done_.get(), 0));
    }
    // Each lane's later work waits for the other's. The interior stream waits first, so that
    // while recording it joins the capture before anything is recorded on it.
    void join(bool recording) {
        boundary_done_.record(boundary_.get());
        GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(interior_.get(), boundary_done_.get(), 0));
        join_interior(recording);
    }
    void wait(Lane lane) const { GRIDSIM_CUDA_CHECK(cudaStreamSynchronize(stream(lane))); }

private:
    Stream boundary_{Stream::Priority::high};
    Stream interior_{Stream::Priority::low};
    Event boundary_done_;
    Event interior_done_;
};

}  // namespace gridsim::cuda
