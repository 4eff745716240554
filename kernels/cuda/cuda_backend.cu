// The CUDA backend: lanes are two streams (boundary: high priority, interior: low priority)
// ordered through events only; kernels from stencil_kernels.cuh; reductions from reductions.cu.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

#include "device/cuda_raii.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/reductions.cuh"
#include "kernels/cuda/stencil_kernels.cuh"

namespace gridsim {

namespace {

// Default tiled block: the fastest of 32x4, 32x8, 32x16, 64x4, 64x8, 128x2, 128x4 and 256x1
// for both benchmark decks on an H100 (docs/performance.md, "Tiled block size").
constexpr int kTiledBlockX = 32;
constexpr int kTiledBlockY = 4;
constexpr int kZChunk = 16;  // planes a tiled 3D block marches through
// Default naive rows per thread by value size: enough bytes in flight per thread
// (docs/performance.md has the measurement behind the choice).
constexpr int kNaiveRowsFloat = 4;
constexpr int kNaiveRowsDouble = 2;
constexpr int kCopyThreads = 256;

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

int blocks_for(long long n) {
    return static_cast<int>(std::clamp<long long>((n + kCopyThreads - 1) / kCopyThreads, 1, 65535));
}

template <class T>
class CudaBackend final : public Backend<T> {
public:
    explicit CudaBackend(const CudaLaunchConfig& cfg) : cfg_(cfg) {
        if (cfg_.tiled) {
            if (cfg_.block_x == 0) cfg_.block_x = kTiledBlockX;
            if (cfg_.block_y == 0) cfg_.block_y = kTiledBlockY;
        } else if (cfg_.block_x == 0 || cfg_.block_y == 0) {
            // The occupancy API's block size for the naive 3D heat kernel, as 32 x (n / 32).
            int min_grid = 0;
            int block = 0;
            GRIDSIM_CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(
                &min_grid, &block, cuda::stencil_naive_kernel<T, 3, StencilKind::heat, 1>, 0, 0));
            cfg_.block_x = 32;
            cfg_.block_y = std::max(1, block / 32);
        }
        if (cfg_.rows == 0)
            cfg_.rows = cfg_.tiled ? 1 : (sizeof(T) == 4 ? kNaiveRowsFloat : kNaiveRowsDouble);
    }

    [[nodiscard]] std::string name() const override { return "cuda"; }
    [[nodiscard]] std::string launch_description() const override {
        return fmt::format(
            "{} {}x{}{}", cfg_.tiled ? "tiled" : "naive", cfg_.block_x, cfg_.block_y,
            cfg_.tiled ? fmt::format(" z-chunk {}", kZChunk) : fmt::format(" rows {}", cfg_.rows));
    }
    [[nodiscard]] bool on_device() const override { return true; }
    [[nodiscard]] void* native_stream(Lane lane) const override { return stream(lane); }
    // 128 bytes: the span of a warp's 32 float loads, four 32-byte sectors.
    [[nodiscard]] int row_alignment() const override { return static_cast<int>(128 / sizeof(T)); }

    Buffer<T> allocate(std::size_t n) override { return device_buffer<T>(n); }
    Buffer<T> allocate_host(std::size_t n) override { return pinned_buffer<T>(n); }

    // Ordered on the boundary stream and waited for: a plain cudaMemcpy from pageable memory
    // may return before its DMA lands, and our streams do not synchronise with the legacy one.
    void upload(const std::vector<T>& host, FieldView<T> dst) override {
        sync_all();
        GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(dst.data, host.data(), host.size() * sizeof(T),
                                           cudaMemcpyHostToDevice, boundary_.get()));
        wait(Lane::boundary);
    }
    void download(FieldView<const T> src, std::vector<T>& host) override {
        sync_all();
        host.resize(src.ext.total);
        GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(host.data(), src.data, host.size() * sizeof(T),
                                           cudaMemcpyDeviceToHost, boundary_.get()));
        wait(Lane::boundary);
    }
    void copy(T* dst, const T* src, std::size_t n, Lane lane) override {
        GRIDSIM_CUDA_CHECK(
            cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDefault, stream(lane)));
    }

    void apply(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out, const Box& b,
               Lane lane) override {
        if (b.empty()) return;
        const bool heat = p.kind == StencilKind::heat;
        if (in.ext.dims == 2) {
            heat ? launch<2, StencilKind::heat>(in, out, b, p.r, lane)
                 : launch<2, StencilKind::jacobi>(in, out, b, p.r, lane);
        } else {
            heat ? launch<3, StencilKind::heat>(in, out, b, p.r, lane)
                 : launch<3, StencilKind::jacobi>(in, out, b, p.r, lane);
        }
    }

    void pack(FieldView<const T> u, const Box& b, T* dst, Lane lane) override {
        const long long n = b.count();
        if (n == 0) return;
        cuda::pack_kernel<<<blocks_for(n), kCopyThreads, 0, stream(lane)>>>(u, b, dst, n);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }
    void unpack(const T* src, FieldView<T> u, const Box& b, Lane lane) override {
        const long long n = b.count();
        if (n == 0) return;
        cuda::unpack_kernel<<<blocks_for(n), kCopyThreads, 0, stream(lane)>>>(src, u, b, n);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    double sum_sq_diff(FieldView<const T> a, FieldView<const T> b, const Box& box) override {
        sync_all();
        return scratch_.sum_sq_diff(a, b, box, boundary_.get());
    }
    double sum_sq(FieldView<const T> a, const Box& box) override {
        sync_all();
        return scratch_.sum_sq(a, box, boundary_.get());
    }
    FieldStats stats(FieldView<const T> a, const Box& box) override {
        sync_all();
        return scratch_.stats(a, box, boundary_.get());
    }

    void join_lanes() override {
        boundary_done_.record(boundary_.get());
        interior_done_.record(interior_.get());
        GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(interior_.get(), boundary_done_.get(), 0));
        GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(boundary_.get(), interior_done_.get(), 0));
    }
    void wait(Lane lane) override { GRIDSIM_CUDA_CHECK(cudaStreamSynchronize(stream(lane))); }

    std::unique_ptr<IntervalTimer> make_interval_timer() override {
        return std::make_unique<CudaIntervalTimer>(
            std::array<cudaStream_t, 2>{boundary_.get(), interior_.get()});
    }

    double measure_copy_bandwidth() override {
        const std::size_t bytes = std::size_t{512} << 20;  // 512 MiB: ten times the L2
        Buffer<char> a = device_buffer<char>(bytes);
        Buffer<char> b = device_buffer<char>(bytes);
        Event start(true);
        Event stop(true);
        GRIDSIM_CUDA_CHECK(
            cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, boundary_.get()));
        float best = 1e30f;
        for (int rep = 0; rep < 5; ++rep) {
            start.record(boundary_.get());
            GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice,
                                               boundary_.get()));
            stop.record(boundary_.get());
            GRIDSIM_CUDA_CHECK(cudaEventSynchronize(stop.get()));
            float ms = 0.0f;
            GRIDSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
            best = std::min(best, ms);
        }
        return 2.0 * static_cast<double>(bytes) / (1e-3 * best);
    }

private:
    [[nodiscard]] cudaStream_t stream(Lane lane) const {
        return lane == Lane::boundary ? boundary_.get() : interior_.get();
    }
    void sync_all() {
        wait(Lane::boundary);
        wait(Lane::interior);
    }

    template <int Dims, StencilKind Kind>
    void launch(FieldView<const T> in, FieldView<T> out, const Box& b, const HeatCoeffs<T>& r,
                Lane lane) {
        const dim3 block(cfg_.block_x, cfg_.block_y, 1);
        const int nx = b.hi[0] - b.lo[0];
        const int ny = b.hi[1] - b.lo[1];
        const int nz = b.hi[2] - b.lo[2];
        const unsigned gx = (nx + block.x - 1) / block.x;
        const unsigned gy = (ny + block.y - 1) / block.y;
        if (cfg_.tiled) {
            const unsigned gz = Dims == 3 ? (nz + kZChunk - 1) / kZChunk : 1;
            const std::size_t smem = (block.x + 2) * (block.y + 2) * sizeof(T);
            cuda::stencil_tiled_kernel<T, Dims, Kind>
                <<<dim3(gx, gy, gz), block, smem, stream(lane)>>>(in, out, b, r, kZChunk);
        } else {
            const unsigned gy_rows = (ny + block.y * cfg_.rows - 1) / (block.y * cfg_.rows);
            const dim3 grid(gx, gy_rows, nz);
            switch (cfg_.rows) {
                case 1:
                    cuda::stencil_naive_kernel<T, Dims, Kind, 1>
                        <<<grid, block, 0, stream(lane)>>>(in, out, b, r);
                    break;
                case 2:
                    cuda::stencil_naive_kernel<T, Dims, Kind, 2>
                        <<<grid, block, 0, stream(lane)>>>(in, out, b, r);
                    break;
                case 4:
                    cuda::stencil_naive_kernel<T, Dims, Kind, 4>
                        <<<grid, block, 0, stream(lane)>>>(in, out, b, r);
                    break;
                default:
                    cuda::stencil_naive_kernel<T, Dims, Kind, 8>
                        <<<grid, block, 0, stream(lane)>>>(in, out, b, r);
                    break;
            }
        }
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    CudaLaunchConfig cfg_;
    Stream boundary_{Stream::Priority::high};
    Stream interior_{Stream::Priority::low};
    Event boundary_done_;
    Event interior_done_;
    cuda::ReductionScratch scratch_;
};

}  // namespace

template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(const CudaLaunchConfig& cfg) {
    return std::make_unique<CudaBackend<T>>(cfg);
}

template std::unique_ptr<Backend<float>> make_cuda_backend<float>(const CudaLaunchConfig&);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(const CudaLaunchConfig&);

}  // namespace gridsim
