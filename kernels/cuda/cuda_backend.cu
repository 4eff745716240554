// The CUDA backend: lanes are two streams (boundary: high priority, interior: low priority)
// ordered through events only; kernels from the family headers (stream, tiled, levels 2D and 3D,
// summing, moves); reductions from reductions.cu.
#include <cublas_v2.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/cuda_raii.hpp"
#include "kernels/cuda/initial.cuh"
#include "kernels/cuda/reductions.cuh"
#include "kernels/cuda/levels_2d.cuh"
#include "kernels/cuda/levels_3d.cuh"
#include "kernels/cuda/move_kernels.cuh"
#include "kernels/cuda/stream_kernels.cuh"
#include "kernels/cuda/tiled_kernel.cuh"
#include "kernels/device_runtime.hpp"

namespace gridsim {

namespace {

// Default launch shapes per variant, the fastest measured on an H200 (the git history of
// docs/performance.md, "Kernel variants"); parallel.block and parallel.rows_per_thread override
// them. The stream kernel's x extent counts threads, each of which covers 16 bytes of x points on
// wide boxes.
struct LaunchDefaults {
    int block_x, block_y, points;
};
constexpr LaunchDefaults kStream2d{32, 4, 4};
constexpr LaunchDefaults kStream3dDouble{32, 4, 8};
constexpr LaunchDefaults kStream3dFloat{16, 8, 8};
constexpr LaunchDefaults kTiled2d{128, 1, 8};
constexpr LaunchDefaults kTiled3d{64, 4, 8};
// Naive: points per thread by value size, enough bytes in flight per thread.
constexpr int kNaiveRowsFloat = 4;
constexpr int kNaiveRowsDouble = 2;
constexpr int kCopyThreads = 256;
constexpr int kFoldThreads = 1024;
#ifndef GRIDSIM_STREAM_VECTOR
#define GRIDSIM_STREAM_VECTOR 1  // stream kernel: 16-byte packs of x points on wide boxes
#endif
#ifndef GRIDSIM_WALK_BYTES
#define GRIDSIM_WALK_BYTES 32  // bytes of walk-axis loads in flight per thread (measured)
#endif

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

// cuBLAS calls go through GRIDSIM_CUBLAS_CHECK: a failure ends every rank as a CUDA error does.
#define GRIDSIM_CUBLAS_CHECK(expr)                                                           \
    do {                                                                                     \
        const cublasStatus_t gridsim_blas_rc_ = (expr);                                      \
        if (gridsim_blas_rc_ != CUBLAS_STATUS_SUCCESS) cublas_fail(gridsim_blas_rc_, #expr); \
    } while (0)

[[noreturn]] void cublas_fail(cublasStatus_t rc, const char* expr) {
    const std::string message = fmt::format("cuBLAS error in {}: {} ({})", expr,
                                            cublasGetStatusString(rc), cublasGetStatusName(rc));
    fatal_error(message.c_str());
}

// One cuBLAS handle per backend (so per rank), made at the first vector operation (a run
// without a solver never pays for it) and bound to the boundary lane's stream: the BLAS calls
// are ordered with the operator's kernels like any other work of that lane.
class CublasHandle {
public:
    CublasHandle() = default;
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    ~CublasHandle() {
        if (handle_ != nullptr) cublasDestroy(handle_);
    }
    cublasHandle_t on(cudaStream_t stream) {
        if (handle_ == nullptr) {
            GRIDSIM_CUBLAS_CHECK(cublasCreate(&handle_));
            GRIDSIM_CUBLAS_CHECK(cublasSetStream(handle_, stream));
        }
        return handle_;
    }

private:
    cublasHandle_t handle_ = nullptr;
};

// The BLAS level-1 calls by precision (64-bit sizes: a field may hold more than 2^31 values).
cublasStatus_t blas_axpy(cublasHandle_t h, std::int64_t n, float a, const float* x, float* y) {
    return cublasSaxpy_64(h, n, &a, x, 1, y, 1);
}
cublasStatus_t blas_axpy(cublasHandle_t h, std::int64_t n, double a, const double* x, double* y) {
    return cublasDaxpy_64(h, n, &a, x, 1, y, 1);
}
cublasStatus_t blas_scal(cublasHandle_t h, std::int64_t n, float a, float* x) {
    return cublasSscal_64(h, n, &a, x, 1);
}
cublasStatus_t blas_scal(cublasHandle_t h, std::int64_t n, double a, double* x) {
    return cublasDscal_64(h, n, &a, x, 1);
}
cublasStatus_t blas_dot(cublasHandle_t h, std::int64_t n, const float* x, const float* y,
                        float* out) {
    return cublasSdot_64(h, n, x, 1, y, 1, out);
}
cublasStatus_t blas_dot(cublasHandle_t h, std::int64_t n, const double* x, const double* y,
                        double* out) {
    return cublasDdot_64(h, n, x, 1, y, 1, out);
}

int blocks_for(long long n) {
    return static_cast<int>(std::clamp<long long>((n + kCopyThreads - 1) / kCopyThreads, 1, 65535));
}

unsigned pow2_ceil(int n) {
    unsigned p = 1;
    while (p < static_cast<unsigned>(n)) p *= 2;
    return p;
}

unsigned ceil_div(long long n, long long d) { return static_cast<unsigned>((n + d - 1) / d); }

// Calls f(std::integral_constant<int, L>{}) with L = `levels` for Lo <= levels < Hi, else with
// Hi: the kernel template for a level count chosen at run time.
template <int Lo, int Hi, class F>
void with_levels(int levels, F&& f) {
    if constexpr (Lo == Hi) {
        f(std::integral_constant<int, Hi>{});
    } else if (levels == Lo) {
        f(std::integral_constant<int, Lo>{});
    } else {
        with_levels<Lo + 1, Hi>(levels, f);
    }
}

// Lets `kernel` launch with up to `bytes` of dynamic shared memory (above 48 KiB a launch must
// ask for it). A launcher calls it once per kernel: `static const bool ok = allow_shared(...)`.
template <class Kernel>
bool allow_shared(Kernel kernel, std::size_t bytes) {
    GRIDSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)));
    return true;
}

// A launch's grid, block and dynamic shared memory.
struct Launch {
    dim3 grid;
    dim3 block;
    int points = 0;  // walk-axis points per thread
    std::size_t smem = 0;
    cuda::PackGroups groups;  // the x blocks' packs (walk_pack)
    [[nodiscard]] long long blocks() const {
        return static_cast<long long>(grid.x) * grid.y * grid.z;
    }
};

// The block shape for `box`: the configured one, narrowed for thin boxes (the shell slabs of the
// overlap recipe) so that threads are not launched for points that do not exist: an x face one
// point thick runs with blocks of 1 x (bx * by) instead of leaving 31 of 32 lanes idle.
dim3 fit_block(int bx, int by, int nx, int ny) {
    const unsigned x = std::min<unsigned>(bx, pow2_ceil(nx));
    const unsigned y =
        std::min<unsigned>(std::max(1u, static_cast<unsigned>(bx * by) / x), pow2_ceil(ny));
    return {x, y, 1};
}

__global__ void widen_kernel(const float* in, double* out) { *out = static_cast<double>(*in); }

// One block adds `count` partials in a fixed order (thread t: t, t + blockDim.x, ... in
// order, then store_block_sum's fixed tree), so a rerun reproduces the sum bit for bit. The block
// is fold_threads(count) wide, a function of the count alone: every path that folds the same
// partials gets the same bits. Each thread loads kFoldLoads partials before adding them, in the
// same order (the last batch bounds-checked): one load at a time took about 50 us for the 131072
// partials of a 16384^2 sweep (measured on an H200), which a recorded sweep waits for.
constexpr int kFoldLoads = 16;
// Block b of the grid folds the b-th run of `count` partials (a summing pass's levels, each as
// its own sweep's fold) into result[b]; `host` (page-locked, or nullptr): where the sums are also
// stored, so that reading them back needs no copy of its own.
__global__ void fold_kernel(const double* __restrict__ partials, long long count,
                            double* __restrict__ result, double* host) {
    partials += blockIdx.x * count;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Launched as a programmatic dependent of the sweep (launch_fold): wait for its partials.
    // Launched plainly: returns at once.
    cudaGridDependencySynchronize();
#endif
    double sum = 0.0;
    const long long stride = blockDim.x;
    for (long long t = threadIdx.x; t < count; t += kFoldLoads * stride) {
        double v[kFoldLoads];
#pragma unroll
        for (int k = 0; k < kFoldLoads; ++k) {
            v[k] = t + k * stride < count ? partials[t + k * stride] : 0.0;
        }
#pragma unroll
        for (int k = 0; k < kFoldLoads; ++k) {
            if (t + k * stride < count) sum += v[k];
        }
    }
    cuda::store_block_sum(sum, result);  // into result[blockIdx.x]
    if (host != nullptr && threadIdx.x == 0) host[blockIdx.x] = result[blockIdx.x];  // stored by it
}

// The fold's block: about kFoldLoads partials per thread (one batch of loads in flight, then
// a tree only as deep as it needs: a 2048^2 sweep's 2064 partials on 256 threads instead of
// 1024), in whole warps, at most kFoldThreads.
unsigned fold_threads(long long count) {
    unsigned threads = 32;
    while (threads < kFoldThreads && threads * static_cast<long long>(kFoldLoads) < count)
        threads *= 2;
    return threads;
}

// The fold on `s`. `dependent`: as a programmatic dependent launch of the kernel before it on
// `s` (Hopper and later): the fold is set up while that kernel's last blocks run, and waits in
// cudaGridDependencySynchronize() for them, instead of starting only once it has finished.
void launch_fold(cudaStream_t s, const double* partials, long long count, double* result,
                 double* host, bool dependent, int parts = 1) {
    cudaLaunchConfig_t c{};
    c.gridDim = dim3(parts);
    c.blockDim = dim3(fold_threads(count));
    c.stream = s;
    cudaLaunchAttribute a{};
    a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a.val.programmaticStreamSerializationAllowed = 1;
    c.attrs = &a;
    c.numAttrs = dependent ? 1 : 0;
    GRIDSIM_CUDA_CHECK(cudaLaunchKernelEx(&c, fold_kernel, partials, count, result, host));
}

// fold_kernel's sum of `count` partials (one block), added on the host in the kernel's order:
// each of fold_threads(count) threads adds its partials t, t + threads, ... from 0.0 in turn,
// each warp's 32 sums meet in warp_tree_sum's tree (shuffles down), and the warps' sums are
// added from 0.0 in index order (store_place_sum). So a sum folded here has the bits the
// kernel gives the same partials.
double fold_on_host(const double* partials, long long count) {
    const long long threads = fold_threads(count);
    double total = 0.0;
    for (long long warp = 0; warp < threads; warp += 32) {
        double lane[32];
        for (int l = 0; l < 32; ++l) {
            double sum = 0.0;
            for (long long t = warp + l; t < count; t += threads) sum += partials[t];
            lane[l] = sum;
        }
        for (int offset = 16; offset > 0; offset /= 2) {
            for (int l = 0; l < offset; ++l) lane[l] += lane[l + offset];
        }
        total += lane[0];
    }
    return total;
}

// A recorded residual sweep whose sum only the host reads leaves out the fold: its blocks store
// their partials in page-locked memory and finish_read() folds them (fold_on_host), while the
// device goes on with the next sweep. Up to this many partials (64 KiB: 4096^2 float's residual
// sweep has 4160): the host adds them well within the next sweep.
constexpr long long kHostFoldPartials = 8192;

// One double read back to the host: a page-locked slot and the event after which it holds the
// value, or (`fold_count` > 0) the page-locked partials the host folds into it, owned here so
// that a read outlives the recording that launched it. `unread`: a recording's read launched
// and not yet finished (its next launch would overwrite the value).
constexpr int kMaxReadValues = 8;  // a summing pass's levels
struct ReadSlot {
    Buffer<double> host = pinned_buffer<double>(kMaxReadValues);
    Event done;
    bool unread = false;
    Buffer<double> partials;
    long long fold_count = 0;

    [[nodiscard]] double value() const {
        return fold_count > 0 ? fold_on_host(partials.data(), fold_count) : host.data()[0];
    }
};

// A recorded sweep (a CUDA graph) and the memory its work uses besides the fields: the block
// partials (those the host folds are its read slot's) and folded sum of a residual, and the
// slot its read-back lands in.
class CudaRecording final : public Recording {
public:
    CudaRecording(cudaGraph_t graph, cudaStream_t stream, ReadSlot* read, int read_id,
                  Buffer<double> partials, Buffer<double> result)
        : exec_(graph),
          stream_(stream),
          read_(read),
          read_id_(read_id),
          partials_(std::move(partials)),
          result_(std::move(result)) {}

    int launch() override {
        if (read_ != nullptr && read_->unread)
            throw std::logic_error("a recording replayed before its last read was finished");
        exec_.launch(stream_);
        if (read_ == nullptr) return -1;
        read_->done.record(stream_);
        read_->unread = true;
        return read_id_;
    }

private:
    GraphExec exec_;
    cudaStream_t stream_;
    ReadSlot* read_;
    int read_id_;
    Buffer<double> partials_;
    Buffer<double> result_;
};

// A download's landing marked from the copy stream (a driver thread; no CUDA call in it).
void land_download(void* data) {
    const std::unique_ptr<std::shared_ptr<Landing>> landing(
        static_cast<std::shared_ptr<Landing>*>(data));
    (*landing)->land();
}

// cudaMemcpy3DAsync's view of a box of `src` into packed host memory: the field as planes of rows
// of sy elements (halos and row padding included), the box's corner located in it. The copy
// engine packs the box on the way, so the host never copies it again.
template <class T>
cudaMemcpy3DParms box_download(FieldView<const T> src, const Box& b, T* dst) {
    const FieldExtents& e = src.ext;
    const auto corner = static_cast<std::size_t>(e.index(b.lo[0], b.lo[1], b.lo[2]));
    const auto sy = static_cast<std::size_t>(e.sy);
    const auto sz = static_cast<std::size_t>(e.sz);
    const auto width = static_cast<std::size_t>(b.hi[0] - b.lo[0]);
    const auto height = static_cast<std::size_t>(b.hi[1] - b.lo[1]);
    cudaMemcpy3DParms p{};
    p.srcPtr = make_cudaPitchedPtr(const_cast<T*>(src.data), sy * sizeof(T), sy, sz / sy);
    p.srcPos = make_cudaPos(corner % sz % sy * sizeof(T), corner % sz / sy, corner / sz);
    p.dstPtr = make_cudaPitchedPtr(dst, width * sizeof(T), width, height);
    p.extent =
        make_cudaExtent(width * sizeof(T), height, static_cast<std::size_t>(b.hi[2] - b.lo[2]));
    p.kind = cudaMemcpyDeviceToHost;
    return p;
}

template <class T>
class CudaBackend final : public Backend<T> {
public:
    explicit CudaBackend(const LaunchConfig& cfg) : cfg_(cfg) {
        if (cfg_.kernel == KernelKind::naive) {
            if (cfg_.block_x == 0) {
                // The occupancy API's block size for the naive 3D heat kernel, as 32 x (n / 32).
                int min_grid = 0;
                int block = 0;
                GRIDSIM_CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(
                    &min_grid, &block,
                    cuda::stencil_naive_kernel<T, 3, StencilKind::heat, 1, StencilSum::none>, 0,
                    0));
                cfg_.block_x = 32;
                cfg_.block_y = std::max(1, block / 32);
            }
            if (cfg_.points == 0) cfg_.points = sizeof(T) == 4 ? kNaiveRowsFloat : kNaiveRowsDouble;
        }
    }
    // A residual read still in flight writes into reads_: wait for it (errors ignored, as in
    // every destructor) before the members are freed.
    ~CudaBackend() override {
        cudaStreamSynchronize(reduce_.get());
        cudaStreamSynchronize(boundary_.get());
        // Downloads land here unless the device has failed: then their waiters are let go.
        cudaStreamSynchronize(copy_.get());
        for (const auto& landing : landings_) landing->abandon();
    }

    [[nodiscard]] std::string name() const override { return "cuda"; }
    [[nodiscard]] std::string launch_description() const override {
        if (cfg_.kernel == KernelKind::naive)
            return fmt::format("naive {}x{} rows {}", cfg_.block_x, cfg_.block_y, cfg_.points);
        const char* kind = cfg_.kernel == KernelKind::tiled ? "tiled" : "stream";
        if (cfg_.block_x != 0)
            return fmt::format("{} {}x{} points {}", kind, cfg_.block_x, cfg_.block_y, cfg_.points);
        const LaunchDefaults d2 = defaults(2);
        const LaunchDefaults d3 = defaults(3);
        const std::string summing = cfg_.points == 0 && cfg_.kernel == KernelKind::stream
                                        ? fmt::format(" ({} summing boxes of 2^{} points or more)",
                                                      2 * d2.points, kSumRowsFromBits)
                                        : "";
        return fmt::format("{} 2D {}x{} points {}{} / 3D {}x{} points {}", kind, d2.block_x,
                           d2.block_y, cfg_.points != 0 ? cfg_.points : d2.points, summing,
                           d3.block_x, d3.block_y, cfg_.points != 0 ? cfg_.points : d3.points);
    }
    [[nodiscard]] bool on_device() const override { return true; }
    [[nodiscard]] void* native_stream(Lane lane) const override { return stream(lane); }
    // 128 bytes: the span of a warp's 32 float loads, four 32-byte sectors.
    [[nodiscard]] int row_alignment() const override { return static_cast<int>(128 / sizeof(T)); }

    Buffer<T> allocate(std::size_t n) override { return device_buffer<T>(n); }
    Buffer<T> allocate_host(std::size_t n) override { return pinned_buffer<T>(n); }

    void fill_initial(const InitialParams& p, FieldView<T> u,
                      const std::array<int, 3>& origin) override {
        cuda::fill_initial(p, u, origin, boundary_.get());
    }
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
    // On the copy stream, after both lanes' work so far: the steps issued after it run beside
    // it, and the host learns of its landing from a host function queued behind it.
    void download_box(FieldView<const T> src, const Box& b, T* dst,
                      std::shared_ptr<Landing> landing) override {
        follow_lanes(copy_.get());
        const cudaMemcpy3DParms params = box_download(src, b, dst);
        GRIDSIM_CUDA_CHECK(cudaMemcpy3DAsync(&params, copy_.get()));
        downloaded_.record(copy_.get());
        auto marker = std::make_unique<std::shared_ptr<Landing>>(landing);
        GRIDSIM_CUDA_CHECK(cudaLaunchHostFunc(copy_.get(), land_download, marker.get()));
        marker.release();  // the host function owns it now
        landings_.erase(std::remove_if(landings_.begin(), landings_.end(),
                                       [](const auto& l) { return !l->pending(); }),
                        landings_.end());
        landings_.push_back(std::move(landing));
    }
    void join_download() override {
        GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(boundary_.get(), downloaded_.get(), 0));
    }

    void apply(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out, const Box& b,
               Lane lane, StencilSum sum) override {
        if (b.empty()) return;
        visit(in.ext.dims, p.kind, sum, [&](auto dims, auto kind, auto with) {
            this->template launch<dims.value, kind.value, with.value>(in, out, b, p.r, lane);
        });
    }
    [[nodiscard]] bool applies_boxes() const override { return cfg_.kernel == KernelKind::stream; }
    void apply_boxes(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                     const std::vector<Box>& boxes, Lane lane, StencilSum sum,
                     int wrap_period) override {
        if (!applies_boxes()) throw std::logic_error("apply_boxes needs the stream kernel");
        visit(in.ext.dims, p.kind, sum, [&](auto dims, auto kind, auto with) {
            this->template launch_boxes<dims.value, kind.value, with.value>(
                in, out, boxes, p.r, lane, cuda::SelfWrap{wrap_period});
        });
    }

    [[nodiscard]] int max_levels(int dims) const override {
        return dims == 2 ? kMaxLevels : kMaxLevels3d;
    }
    void apply_levels(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                      const Box& b, const Box& live, int levels, Lane lane) override {
        if (b.empty()) return;
        if (levels < 2 || levels > max_levels(in.ext.dims))
            throw std::logic_error("apply_levels: 2 to 8 levels in 2D, 2 to 4 in 3D");
        if (in.ext.dims == 3) {
            if (p.kind == StencilKind::heat) {
                levels_3d_for<StencilKind::heat>(p.r, in, out, b, live, levels, stream(lane));
            } else {
                levels_3d_for<StencilKind::jacobi>(p.r, in, out, b, live, levels, stream(lane));
            }
            return;
        }
        if (p.kind == StencilKind::heat) {
            levels_for<StencilKind::heat>(p.r, in, out, b, live, levels, stream(lane));
        } else {
            levels_for<StencilKind::jacobi>(p.r, in, out, b, live, levels, stream(lane));
        }
    }

    // 2D jacobi sweeps whose summing launches this backend's levels kernel can reproduce: the
    // stream kernel with its default shapes, every box a row slab of the same columns wide
    // enough for 16-byte packs (the x blocks are then 32 packs wide, one warp per thread row).
    [[nodiscard]] bool sums_levels(const std::vector<Box>& boxes, int dims) const override {
        if (dims != 2 || boxes.empty() ||
            boxes.size() > static_cast<std::size_t>(cuda::kMaxBoxes) || cfg_.points != 0 ||
            cfg_.block_x != 0)
            return false;
        for (const Box& b : boxes) {  // takes_packs: the stream kernel, 16-byte packs
            if (b.lo[0] != boxes[0].lo[0] || b.hi[0] != boxes[0].hi[0] || !takes_packs(b))
                return false;
        }
        return true;
    }
    void apply_levels_summing(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                              const Box& b, const Box& live, int levels, Lane lane,
                              const std::vector<Box>& sum_boxes) override {
        // The caller asked sums_levels(sum_boxes) once (Simulation::sums_in_passes).
        if (p.kind != StencilKind::jacobi || levels < 2 || levels > kMaxLevels)
            throw std::logic_error("apply_levels_summing: jacobi, 2 to 8 levels");
        const cuda::LevelSumLayout layout = level_sum_layout(sum_boxes, levels);
        levels_for<StencilKind::jacobi>(p.r, in, out, b, live, levels, stream(lane), &layout);
    }

    double* fold_residual() override {
        if (capture_) return fold_in_capture();
        return fold_set(1, nullptr);
    }
    int fold_and_read_levels(int levels) override {
        if (capture_) throw std::logic_error("a summing pass is not recorded");
        const int id = static_cast<int>(reads_issued_++ % Backend<T>::kReads);
        fold_set(levels, reads_[id]->host.data());
        reads_[id]->done.record(reduce_.get());
        return id;
    }
    double finish_read_level(int id, int level) override { return finished(id).host.data()[level]; }
    void join_fold(Lane lane) override {
        if (capture_) return;  // a recording folds on the boundary lane
        GRIDSIM_CUDA_CHECK(
            cudaStreamWaitEvent(stream(lane), fold_done_[1 - partial_set_].get(), 0));
    }
    // Reads outside a recording take the first kReads slots in turn; a recording's read gets a
    // slot of its own, filled at each launch.
    int start_read(const double* src, typename Backend<T>::ReadAfter after) override {
        if (capture_) {
            capture_->read_used = true;
            GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(capture_->read->host.data(), src, sizeof(double),
                                               cudaMemcpyDeviceToHost, boundary_.get()));
            return -1;
        }
        const cudaStream_t s =
            after == Backend<T>::ReadAfter::fold ? reduce_.get() : boundary_.get();
        const int id = static_cast<int>(reads_issued_++ % Backend<T>::kReads);
        GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(reads_[id]->host.data(), src, sizeof(double),
                                           cudaMemcpyDeviceToHost, s));
        reads_[id]->done.record(s);
        return id;
    }
    // While recording, the fold stores its sum into the recording's read slot itself: one node
    // fewer on the recorded sweep's critical path than a fold and a copy; with the partials in
    // page-locked memory (kHostFoldPartials), the host folds them when it reads.
    int fold_and_read() override {
        if (!capture_) return Backend<T>::fold_and_read();
        capture_->read_used = true;
        if (capture_->partials_on_host) {
            join_interior();  // the replay's end then covers every block's partial
            capture_->read->fold_count = capture_->used;
            capture_->read->partials = std::move(capture_->partials);
            capture_->used = 0;
        } else {
            fold_in_capture(capture_->read->host.data());
        }
        return -1;
    }
    double finish_read(int id) override {
        ReadSlot& r = finished(id);
        r.unread = false;
        return r.value();
    }

    [[nodiscard]] bool can_capture() const override { return true; }
    // Thread-local capture mode: NCCL's and the watchdog's threads may call CUDA meanwhile.
    // Memory is allocated before the capture begins (allocations are not allowed during one):
    // a residual folded while recording needs at most the partials the same sweep needed when
    // it ran unrecorded (the caller runs each kind of sweep once before recording it).
    void begin_capture(bool sum_read_by_host) override {
        capture_ = std::make_unique<Capture>();
        capture_->read = std::make_unique<ReadSlot>();
        const auto most = static_cast<std::size_t>(std::max(most_partials_, 1LL));
        capture_->partials_on_host = sum_read_by_host && most_partials_ <= kHostFoldPartials;
        capture_->partials =
            capture_->partials_on_host ? pinned_buffer<double>(most) : device_buffer<double>(most);
        GRIDSIM_CUDA_CHECK(
            cudaStreamBeginCapture(boundary_.get(), cudaStreamCaptureModeThreadLocal));
    }
    std::unique_ptr<Recording> end_capture() override {
        join_interior();
        cudaGraph_t graph = nullptr;
        GRIDSIM_CUDA_CHECK(cudaStreamEndCapture(boundary_.get(), &graph));
        std::unique_ptr<Capture> c = std::move(capture_);
        ReadSlot* read = nullptr;
        int read_id = -1;
        if (c->read_used) {
            read_id = static_cast<int>(reads_.size());
            read = c->read.get();
            reads_.push_back(std::move(c->read));
        }
        return std::make_unique<CudaRecording>(graph, boundary_.get(), read, read_id,
                                               std::move(c->partials), std::move(c->result));
    }

    void pack(FieldView<const T> u, const FaceMoves<T>& m, Lane lane) override {
        launch_faces(m, cuda::PackFaces<T>{u}, lane);
    }
    void unpack(FieldView<T> u, const FaceMoves<T>& m, Lane lane) override {
        launch_faces(m, cuda::UnpackFaces<T>{u}, lane);
    }
    void wrap(FieldView<T> u, const FaceMoves<T>& m, Lane lane) override {
        launch_faces(m, cuda::WrapFaces<T>{u}, lane);
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

    void fill(FieldView<T> u, const Box& b, T value) override {
        const long long n = b.count();
        if (n == 0) return;
        cuda::box_kernel<<<blocks_for(n), kCopyThreads, 0, boundary_.get()>>>(
            b, n, cuda::FillOp<T>{u, value});
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    // cuBLAS makes its handle and loads its kernels at first use: one call of each routine the
    // solver uses, on two scratch values, pays that here.
    void prepare_vector_ops() override {
        cublasHandle_t h = blas_.on(boundary_.get());
        Buffer<T> x = device_buffer<T>(2);
        Buffer<T> y = device_buffer<T>(2);
        Buffer<T> product = device_buffer<T>(1);
        GRIDSIM_CUDA_CHECK(cudaMemsetAsync(x.data(), 0, 2 * sizeof(T), boundary_.get()));
        GRIDSIM_CUDA_CHECK(cudaMemsetAsync(y.data(), 0, 2 * sizeof(T), boundary_.get()));
        GRIDSIM_CUBLAS_CHECK(blas_axpy(h, 2, T(1), x.data(), y.data()));
        GRIDSIM_CUBLAS_CHECK(blas_scal(h, 2, T(1), y.data()));
        GRIDSIM_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
        GRIDSIM_CUBLAS_CHECK(blas_dot(h, 2, x.data(), y.data(), product.data()));
        GRIDSIM_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
        wait(Lane::boundary);
    }
    // The BLAS sequence. axpy and scal take their factor from the host (the handle's default
    // pointer mode); dot writes its result to device memory and so returns without waiting.
    void axpy(T a, FieldView<const T> x, FieldView<T> y) override {
        GRIDSIM_CUBLAS_CHECK(blas_axpy(blas_.on(boundary_.get()), x.ext.total, a, x.data, y.data));
    }
    void scale(T a, FieldView<T> x) override {
        GRIDSIM_CUBLAS_CHECK(blas_scal(blas_.on(boundary_.get()), x.ext.total, a, x.data));
    }
    void dot(FieldView<const T> x, FieldView<const T> y, double* sum) override {
        cublasHandle_t h = blas_.on(boundary_.get());
        GRIDSIM_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
        if constexpr (std::is_same_v<T, double>) {
            GRIDSIM_CUBLAS_CHECK(blas_dot(h, x.ext.total, x.data, y.data, sum));
        } else {
            // Sdot's result is a float; the slots hold doubles. One scratch float is enough:
            // the next Sdot on the lane starts after this widening.
            GRIDSIM_CUBLAS_CHECK(blas_dot(h, x.ext.total, x.data, y.data, blas_float_.data()));
            widen_kernel<<<1, 1, 0, boundary_.get()>>>(blas_float_.data(), sum);
            GRIDSIM_CUDA_CHECK(cudaGetLastError());
        }
        GRIDSIM_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    }
    // The fused passes; the sums are the deterministic box reductions' (double).
    void cg_update(const CgUpdate<T>& u, const Box& box, double* sum) override {
        scratch_.cg_update(u, box, sum, boundary_.get());
    }
    void xpay(FieldView<const T> z, T b, FieldView<T> p, const Box& box) override {
        if (box.empty()) return;
        constexpr int kThreads = 128;
        constexpr int kPoints = 4;
        const long long rows =
            static_cast<long long>(box.hi[1] - box.lo[1]) * (box.hi[2] - box.lo[2]);
        const dim3 grid(ceil_div(box.hi[0] - box.lo[0], kThreads * kPoints),
                        static_cast<unsigned>(std::min<long long>(rows, 65535)));
        cuda::xpay_kernel<T, kPoints><<<grid, kThreads, 0, boundary_.get()>>>(z, b, p, box);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }
    double* sum_slots() override { return sums_.data(); }
    void read_sums(const double* src, int n, double* host) override {
        GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(sums_host_.data(), src, n * sizeof(double),
                                           cudaMemcpyDeviceToHost, boundary_.get()));
        wait(Lane::boundary);
        std::copy_n(sums_host_.data(), n, host);
    }

    // The interior stream waits first, so that while recording it joins the capture before
    // anything is recorded on it.
    void join_lanes() override {
        boundary_done_.record(boundary_.get());
        GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(interior_.get(), boundary_done_.get(), 0));
        join_interior();
    }
    void wait(Lane lane) override { GRIDSIM_CUDA_CHECK(cudaStreamSynchronize(stream(lane))); }

    std::unique_ptr<IntervalTimer> make_interval_timer() override {
        return std::make_unique<CudaIntervalTimer>(
            std::array<cudaStream_t, 2>{boundary_.get(), interior_.get()});
    }

    [[nodiscard]] std::size_t free_memory() const override {
        std::size_t free = 0;
        std::size_t total = 0;
        GRIDSIM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
        return free;
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
    // `s`'s later work waits for both lanes' work so far (a stream of the backend's own).
    void follow_lanes(cudaStream_t s) {
        boundary_done_.record(boundary_.get());
        interior_done_.record(interior_.get());
        GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(s, boundary_done_.get(), 0));
        GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(s, interior_done_.get(), 0));
    }
    // The boundary stream's later work waits for the interior stream's work so far.
    void join_interior() {
        if (capture_) {
            // Recording: only a stream that joined the capture may be waited on.
            cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
            GRIDSIM_CUDA_CHECK(cudaStreamIsCapturing(interior_.get(), &status));
            if (status != cudaStreamCaptureStatusActive) return;
        }
        interior_done_.record(interior_.get());
        GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(boundary_.get(), interior_done_.get(), 0));
    }
    // The residual of a recorded sweep: the interior's partials joined into the boundary lane,
    // folded there into the recording's own result.
    // `host`: the recording's read slot, when the fold is also the read (fold_and_read).
    double* fold_in_capture(double* host = nullptr) {
        if (capture_->partials_on_host)
            throw std::logic_error("a recording whose sum the host folds folded on the device");
        join_interior();
        launch_fold(boundary_.get(), capture_->partials.data(), capture_->used,
                    capture_->result.data(), host, true);
        capture_->used = 0;
        return capture_->result.data();
    }
    // Read slot `id`, once its read has landed.
    ReadSlot& finished(int id) {
        ReadSlot& r = *reads_.at(static_cast<std::size_t>(id));
        GRIDSIM_CUDA_CHECK(cudaEventSynchronize(r.done.get()));
        return r;
    }
    // Folds the partials written since the last fold, as `parts` equal runs (a summing pass's
    // levels), on the reduce stream after both lanes' work; `host`: where the sums are also
    // stored. Returns the device address of the first sum.
    double* fold_set(int parts, double* host) {
        const int set = partial_set_;
        follow_lanes(reduce_.get());
        double* result = result_.data() + set * kMaxReadValues;
        launch_fold(reduce_.get(), partials_[set].data(), partials_used_ / parts, result, host,
                    false, parts);
        fold_done_[set].record(reduce_.get());
        folded_[set] = true;
        most_partials_ = std::max(most_partials_, partials_used_);
        partial_set_ = 1 - set;  // the next check writes the other set while this one is read
        partials_used_ = 0;
        return result;
    }
    void sync_all() {
        wait(Lane::boundary);
        wait(Lane::interior);
        GRIDSIM_CUDA_CHECK(cudaStreamSynchronize(reduce_.get()));
    }
    [[nodiscard]] LaunchDefaults defaults(int dims) const {
        if (cfg_.kernel == KernelKind::tiled) return dims == 2 ? kTiled2d : kTiled3d;
        if (dims == 2) return kStream2d;
        return sizeof(T) == 4 ? kStream3dFloat : kStream3dDouble;
    }

    template <class Op>
    void launch_faces(const FaceMoves<T>& m, Op op, Lane lane) {
        cuda::FaceLayout layout{};
        for (int f = 0; f < m.count; ++f) {
            const Box& b = m.box[f];
            if (b.count() > std::numeric_limits<int>::max())
                throw std::logic_error("a halo face of 2^31 points or more");
            layout.at[f + 1] = layout.at[f] + b.count();
            // An empty face's extent may be 0; FastDivide needs a divisor of 1 or more.
            layout.nx[f] = FastDivide(static_cast<unsigned>(std::max(1, b.hi[0] - b.lo[0])));
            layout.ny[f] = FastDivide(static_cast<unsigned>(std::max(1, b.hi[1] - b.lo[1])));
        }
        const long long n = layout.at[m.count];
        for (int f = m.count + 1; f <= FaceMoves<T>::kMaxFaces; ++f) layout.at[f] = n;
        if (n == 0) return;
        const auto blocks =
            static_cast<unsigned>(std::clamp<long long>(ceil_div(n, cuda::kFaceThreads), 1, 65535));
        cuda::faces_kernel<<<blocks, cuda::kFaceThreads, 0, stream(lane)>>>(m, layout, op);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    // Room for `more` block partials after those already written this check, in the current
    // set. Its first use waits (both lanes) for the fold that last read the set, two checks ago.
    // Grows only in the first sweep that needs it; earlier partials of that sweep are kept.
    double* partial_slots(long long more) {
        if (capture_) {
            if (capture_->used + more > static_cast<long long>(capture_->partials.size()))
                throw std::logic_error(
                    "a recorded sweep needs more partials than it did unrecorded");
            double* slots = capture_->partials.data() + capture_->used;
            capture_->used += more;
            return slots;
        }
        Buffer<double>& buf = partials_[partial_set_];
        if (partials_used_ == 0 && folded_[partial_set_]) {
            for (cudaStream_t s : {boundary_.get(), interior_.get()})
                GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(s, fold_done_[partial_set_].get(), 0));
        }
        const long long need = partials_used_ + more;
        if (need > static_cast<long long>(buf.size())) {
            sync_all();
            Buffer<double> bigger = device_buffer<double>(static_cast<std::size_t>(need));
            if (partials_used_ > 0) {
                GRIDSIM_CUDA_CHECK(cudaMemcpy(bigger.data(), buf.data(),
                                              partials_used_ * sizeof(double),
                                              cudaMemcpyDeviceToDevice));
            }
            buf = std::move(bigger);
        }
        double* slots = buf.data() + partials_used_;
        partials_used_ = need;
        return slots;
    }

    // The launch of a walking variant (stream, tiled) over `b`.
    // `vector`: points per thread along x (a thread then covers x from box.lo[0] rounded down to
    // a multiple of `vector`). `sum`: what the launch also sums (a residual's partials).
    template <int Dims>
    Launch walk_launch(const Box& b, int vector = 1, StencilSum sum = StencilSum::none) const {
        const bool summing = sum != StencilSum::none;
        const LaunchDefaults d = defaults(Dims);
        const int bx = cfg_.block_x != 0 ? cfg_.block_x : d.block_x;
        const int by = cfg_.block_x != 0 ? cfg_.block_y : d.block_y;
        int points = cfg_.points != 0 ? cfg_.points : d.points;
        // A 2D stream box of at least kSumRowsFrom points that sums walks twice the rows per
        // thread: half the blocks, so half the per-block sums to store and fold (one H200, jacobi
        // float, residual every sweep: 2048^2 12.4 us per sweep against 13.8, 4096^2 45.5
        // against 46.5, 8192^2 149.6 against 153.8; 1024^2, too few blocks then, 9.1 against
        // 8.3). A function of the box alone, so every path that sums a box sums it alike.
        if (Dims == 2 && summing && cfg_.points == 0 && cfg_.kernel == KernelKind::stream &&
            b.count() >= kSumRowsFrom)
            points *= 2;
        const int x0 = b.lo[0] - ((b.lo[0] % vector) + vector) % vector;
        const int nx = static_cast<int>(ceil_div(b.hi[0] - x0, vector));
        const int ny = b.hi[1] - b.lo[1];
        const int nz = b.hi[2] - b.lo[2];
        Launch l;
        if constexpr (Dims == 3) {
            l.block = fit_block(bx, by, nx, ny);
            l.grid = dim3(ceil_div(nx, l.block.x), ceil_div(ny, l.block.y), ceil_div(nz, points));
        } else {
            const int chunks = static_cast<int>(ceil_div(ny, points));
            l.block = fit_block(bx, by, nx, chunks);
            l.grid = dim3(ceil_div(nx, l.block.x), ceil_div(chunks, l.block.y), 1);
            // A jacobi residual sweep in packs: its x blocks as a summing pass's tiles.
            if (sum == StencilSum::change && vector > 1 && l.block.x == 32) {
                l.groups = cuda::sum_pass_groups<T>();
                l.grid.x = l.groups.blocks(nx);
            }
        }
        l.points = points;
        if (cfg_.kernel == KernelKind::tiled) {
            const std::size_t rows = Dims == 3 ? l.block.y + 2 : l.block.y;
            l.smem = 2 * (l.block.x + 2) * rows * sizeof(T);
        }
        return l;
    }
    static constexpr int kSumRowsFromBits = 21;
    static constexpr std::int64_t kSumRowsFrom = std::int64_t{1} << kSumRowsFromBits;

    // f(dims, kind, sum) with the run-time values as std::integral_constant. The sums each kind
    // needs, and no others, are compiled: jacobi's residual (the squared change) and heat's
    // p . A p for the CG (the product).
    template <class F>
    static void visit(int dims, StencilKind kind, StencilSum sum, F&& f) {
        auto with_sum = [&](auto d, auto k) {
            constexpr StencilSum kSum = decltype(k)::value == StencilKind::jacobi
                                            ? StencilSum::change
                                            : StencilSum::product;
            if (sum == StencilSum::none) {
                f(d, k, std::integral_constant<StencilSum, StencilSum::none>{});
            } else if (sum == kSum) {
                f(d, k, std::integral_constant<StencilSum, kSum>{});
            } else {
                throw std::logic_error("stencil sum not compiled for this stencil kind");
            }
        };
        auto with_kind = [&](auto d) {
            if (kind == StencilKind::heat) {
                with_sum(d, std::integral_constant<StencilKind, StencilKind::heat>{});
            } else {
                with_sum(d, std::integral_constant<StencilKind, StencilKind::jacobi>{});
            }
        };
        if (dims == 2) {
            with_kind(std::integral_constant<int, 2>{});
        } else {
            with_kind(std::integral_constant<int, 3>{});
        }
    }

    // Walk-axis loads each stream thread keeps in flight (the depth of its pipeline), and the
    // points of a 16-byte pack.
    static constexpr int kUnroll = GRIDSIM_WALK_BYTES / static_cast<int>(sizeof(T));
    static constexpr int kVector = 16 / static_cast<int>(sizeof(T));
    // Whether the stream kernel walks `b` in 16-byte packs of x points (a box wide enough).
    [[nodiscard]] bool takes_packs(const Box& b) const {
        return GRIDSIM_STREAM_VECTOR && cfg_.kernel == KernelKind::stream &&
               b.hi[0] - b.lo[0] >= 32 * kVector;
    }

    // `wrap` (stream kernel only): the instance that also stores the periodic walk-axis copy.
    template <int Dims, StencilKind Kind, StencilSum Sum>
    void launch(FieldView<const T> in, FieldView<T> out, const Box& b, const HeatCoeffs<T>& r,
                Lane lane, cuda::SelfWrap wrap = {}) {
        const cudaStream_t s = stream(lane);
        if (cfg_.kernel == KernelKind::naive) {
            launch_naive<Dims, Kind, Sum>(in, out, b, r, s);
            return;
        }
        constexpr bool kSums = Sum != StencilSum::none;
        const bool wraps = wrap.n > 0;
        if (takes_packs(b)) {
            const Launch l = walk_launch<Dims>(b, kVector, Sum);
            double* partial = kSums ? partial_slots(l.blocks()) : nullptr;
            auto kernel = wraps ? cuda::stencil_stream_vec_kernel<T, Dims, Kind, kUnroll / kVector,
                                                                  kVector, Sum, true>
                                : cuda::stencil_stream_vec_kernel<T, Dims, Kind, kUnroll / kVector,
                                                                  kVector, Sum, false>;
            kernel<<<l.grid, l.block, 0, s>>>(in, out, b, r, l.points, partial, wrap, l.groups);
            GRIDSIM_CUDA_CHECK(cudaGetLastError());
            return;
        }
        const Launch l = walk_launch<Dims>(b, 1, Sum);
        double* partial = kSums ? partial_slots(l.blocks()) : nullptr;
        if (cfg_.kernel == KernelKind::tiled) {
            cuda::stencil_tiled_kernel<T, Dims, Kind, kUnroll, Sum>
                <<<l.grid, l.block, l.smem, s>>>(in, out, b, r, l.points, partial);
        } else {
            auto kernel = wraps ? cuda::stencil_stream_kernel<T, Dims, Kind, kUnroll, Sum, true>
                                : cuda::stencil_stream_kernel<T, Dims, Kind, kUnroll, Sum, false>;
            kernel<<<l.grid, l.block, 0, s>>>(in, out, b, r, l.points, partial, wrap);
        }
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    // apply_boxes: the boxes in order, consecutive ones that take the same stream variant
    // (takes_packs, as launch() picks) in one launch each, so the partials land in the order of
    // launch() per box.
    template <int Dims, StencilKind Kind, StencilSum Sum>
    void launch_boxes(FieldView<const T> in, FieldView<T> out, const std::vector<Box>& boxes,
                      const HeatCoeffs<T>& r, Lane lane, cuda::SelfWrap wrap) {
        std::vector<std::vector<Box>> runs;
        for (const Box& b : boxes) {
            if (b.empty()) continue;
            if (runs.empty() || takes_packs(runs.back().front()) != takes_packs(b) ||
                runs.back().size() == static_cast<std::size_t>(cuda::kMaxBoxes))
                runs.emplace_back();
            runs.back().push_back(b);
        }
        for (const std::vector<Box>& run : runs) {
            if (run.size() == 1) {
                launch<Dims, Kind, Sum>(in, out, run[0], r, lane, wrap);
            } else if (takes_packs(run.front())) {
                launch_run<Dims, Kind, Sum, kUnroll / kVector, kVector>(in, out, run, r, lane,
                                                                        wrap);
            } else {
                launch_run<Dims, Kind, Sum, kUnroll, 1>(in, out, run, r, lane, wrap);
            }
        }
    }

    // One launch of stencil_boxes_kernel over `run` (2 to kMaxBoxes boxes), one block per box
    // block in order, each box's blocks shaped as walk_launch shapes its own launch, the
    // launch's blocks as wide as the widest.
    template <int Dims, StencilKind Kind, StencilSum Sum, int Unroll, int V>
    void launch_run(FieldView<const T> in, FieldView<T> out, const std::vector<Box>& run,
                    const HeatCoeffs<T>& r, Lane lane, cuda::SelfWrap wrap) {
        constexpr bool kSums = Sum != StencilSum::none;
        cuda::BoxGrids g;
        g.count = static_cast<int>(run.size());
        g.first[0] = 0;
        unsigned threads = 32;
        for (int k = 0; k < g.count; ++k) {
            const Launch l = walk_launch<Dims>(run[k], V, Sum);
            g.box[k] = run[k];
            g.points[k] = l.points;
            g.groups[k] = l.groups;
            g.grid[k][0] = l.grid.x;
            g.grid[k][1] = l.grid.y;
            g.block[k][0] = l.block.x;
            g.block[k][1] = l.block.y;
            g.first[k + 1] = g.first[k] + static_cast<unsigned>(l.blocks());
            threads = std::max(threads, l.block.x * l.block.y);
        }
        threads = (threads + 31) / 32 * 32;
        double* partial = kSums ? partial_slots(g.first[g.count]) : nullptr;
        cuda::stencil_boxes_kernel<T, Dims, Kind, Unroll, V, Sum>
            <<<g.first[g.count], threads, 0, stream(lane)>>>(in, out, g, r, wrap, partial);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    static constexpr int kMaxLevels = cuda::kMaxLevels2d;
    // Output rows per block of the levels kernel: each block also steps through 3 x levels rows
    // it does not store (the pipeline filling and draining), 5% at 8 levels.
    static constexpr int kLevelRows = 512;

    // `sums`: a summing pass's layout (partials included), or nullptr.
    template <StencilKind Kind>
    void levels_for(const HeatCoeffs<T>& r, FieldView<const T> in, FieldView<T> out, const Box& b,
                    const Box& live, int levels, cudaStream_t s,
                    const cuda::LevelSumLayout* sums = nullptr) {
        with_levels<2, kMaxLevels>(levels, [&](auto l) {
            constexpr int kLevels = decltype(l)::value;
            if (sums == nullptr) {
                this->template launch_levels<Kind, kLevels>(r, in, out, b, live, s);
            } else if constexpr (Kind == StencilKind::jacobi) {
                this->template launch_summing_levels<kLevels>(r, in, out, b, live, s, *sums);
            }
        });
    }

    // 16 bytes of consecutive columns per thread, 128 threads (fewer, in whole warps, for a
    // narrow box): a tile 512 floats or 256 doubles wide, of which 2 x Levels columns are
    // computed for the neighbouring tiles. Tiles start on a multiple of V (aligned loads); rows
    // in chunks by level_chunk_rows.
    template <StencilKind Kind, int Levels>
    void launch_levels(const HeatCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                       const Box& b, const Box& live, cudaStream_t s) {
        constexpr int V = 16 / static_cast<int>(sizeof(T));
        const int x0 = cuda::pack_start<V>(b.lo[0] - Levels);
        const int nx = b.hi[0] + Levels - x0;
        const int threads = std::clamp(static_cast<int>(ceil_div(nx, 32 * V)) * 32, 64, 128);
        const int stride = (threads * V - 2 * Levels) / V * V;
        const unsigned tiles = ceil_div(b.hi[0] - (x0 + Levels), stride);
        const std::size_t smem = 3 * Levels * 2 * (threads + 2) * sizeof(T);
        auto kernel = cuda::stencil_levels_2d_kernel<T, Kind, Levels, V>;
        static const bool allowed = allow_shared(kernel, 3 * Levels * 2 * (128 + 2) * sizeof(T));
        (void)allowed;
        // A wave of this kernel per block width (64, 96, 128 threads).
        static long long slots[3] = {0, 0, 0};
        long long& wave = slots[threads / 32 - 2];
        if (wave == 0) wave = wave_slots(kernel, threads, smem);
        const int ny = b.hi[1] - b.lo[1];
        const int rows = level_chunk_rows(tiles, ny, Levels, wave);
        const dim3 grid(tiles, ceil_div(ny, rows), 1);
        kernel<<<grid, threads, smem, s>>>(in, out, b, live, r, x0, stride, Levels, b.lo[1], rows);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    // A summing pass: its tiles are the residual sweep's x blocks in sum_pass_groups (one warp
    // each, LevelSums; the ring in the end lanes) from layout.x0; its rows are chunked on the
    // stream blocks' rows of layout box 0, so each block of the pass sums whole stream blocks.
    template <int Levels>
    void launch_summing_levels(const HeatCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                               const Box& b, const Box& live, cudaStream_t s,
                               const cuda::LevelSumLayout& layout) {
        constexpr int V = 16 / static_cast<int>(sizeof(T));
        using Summing = cuda::LevelSums<T, Levels, V>;
        constexpr int kWarps = Summing::kSumWarps;
        constexpr cuda::PackGroups kGroups = cuda::sum_pass_groups<T>();
        static_assert(kGroups.ring * V >= Levels && kGroups.warps == kWarps);
        constexpr int kRingPacks = kGroups.ring;
        const int stride = kGroups.stride() * V;
        // The first tile's stored columns start at or before b.lo[0], on the stream grid.
        const int back = static_cast<int>(ceil_div(std::max(0, layout.x0 - b.lo[0]), stride));
        const int stored0 = layout.x0 - back * stride;
        const unsigned tiles = ceil_div(b.hi[0] - stored0, stride);
        const int threads = Summing::kSumThreads;
        auto shared_bytes = [&](int row_words) {
            return 3 * Levels * 2 * (threads + 2) * sizeof(T) +
                   Summing::kSharedDoubles * sizeof(double) +
                   static_cast<std::size_t>(row_words + Summing::kRowsBefore +
                                            Summing::kRowsAfter) *
                       sizeof(unsigned);
        };
        auto kernel = cuda::stencil_levels_2d_sum_kernel<T, Levels, V>;
        // A wave, counted with the row words of the longest block there can be (a chunk and the
        // shell and ring rows beyond layout box 0).
        static std::size_t allowed = 0;  // the rows, and so the bytes, differ between launches
        static long long wave = 0;
        if (wave == 0) {
            const std::size_t most = shared_bytes(kLevelRows + 64);
            allowed = allow_shared(kernel, most) ? most : 0;
            wave = wave_slots(kernel, threads, most);
        }
        // Chunks of whole stream blocks' rows of layout box 0.
        const int anchor_rows = layout.hi[0] - layout.lo[0];
        const int block_rows = 1 << layout.block_rows_log2[0];
        const int rows = level_chunk_rows(tiles, anchor_rows, Levels, wave, block_rows);
        const auto chunks = static_cast<int>(ceil_div(anchor_rows, rows));
        // (chunks, tiles) where the pass trims its last tile, else (tiles, chunks): levels_2d.
        const dim3 grid =
            cuda::sum_pass_trims<T>() ? dim3(chunks, tiles, 1) : dim3(tiles, chunks, 1);
        // The row words (LevelSums) of the longest block: the first and last also take the rows
        // outside layout box 0's chunks.
        int longest = rows;
        for (int y : {0, chunks - 1}) {
            const cuda::RowRange own = cuda::level_block_rows(y, chunks, b, layout.lo[0], rows);
            longest = std::max(longest, own.y1 - own.y0);
        }
        const std::size_t smem = shared_bytes(longest);
        if (smem > allowed) allowed = allow_shared(kernel, smem) ? smem : 0;
        kernel<<<grid, threads, smem, s>>>(in, out, b, live, r, stored0 - kRingPacks * V, stride,
                                           kRingPacks * V, layout.lo[0], rows, layout,
                                           -back * kWarps);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    // The summing pass's layout over `boxes` (sums_levels), each box's blocks as walk_launch
    // shapes its summing stream launch, the partials `levels` runs of them.
    cuda::LevelSumLayout level_sum_layout(const std::vector<Box>& boxes, int levels) {
        constexpr int V = kVector;
        if (boxes.empty() || boxes.size() > static_cast<std::size_t>(cuda::kMaxBoxes))
            throw std::logic_error("a summing pass's layout takes 1 to kMaxBoxes boxes");
        cuda::LevelSumLayout l;
        l.count = static_cast<int>(boxes.size());
        l.x_lo = boxes[0].lo[0];
        l.x_hi = boxes[0].hi[0];
        l.x0 = cuda::pack_start<V>(l.x_lo);
        // The boxes in the sweep's order, each from its first partial; then the one with the
        // most rows moved to slot 0.
        unsigned first = 0;
        for (int k = 0; k < l.count; ++k) {
            const Box& b = boxes[k];
            const Launch w = walk_launch<2>(b, V, StencilSum::change);
            if (w.groups.warps != cuda::sum_pass_warps<T>())
                throw std::logic_error("a summing pass's box is not walked in its tiles' blocks");
            l.lo[k] = b.lo[1];
            l.hi[k] = b.hi[1];
            l.points_log2[k] = log2_exact(w.points);
            l.block_rows_log2[k] = log2_exact(w.points * static_cast<int>(w.block.y));
            l.first[k] = first;
            first += static_cast<unsigned>(w.blocks());
            l.gx = w.grid.x;
        }
        int most = 0;
        for (int k = 1; k < l.count; ++k) {
            if (l.hi[k] - l.lo[k] > l.hi[most] - l.lo[most]) most = k;
        }
        std::swap(l.lo[0], l.lo[most]);
        std::swap(l.hi[0], l.hi[most]);
        std::swap(l.points_log2[0], l.points_log2[most]);
        std::swap(l.block_rows_log2[0], l.block_rows_log2[most]);
        std::swap(l.first[0], l.first[most]);
        l.per_level = first;
        l.partial = partial_slots(levels * l.per_level);
        return l;
    }
    static int log2_exact(int v) {
        int n = 0;
        while ((1 << n) < v) ++n;
        if ((1 << n) != v) throw std::logic_error("a stream launch's rows are not a power of two");
        return n;
    }

    // 3D: the ring of a 32 x 48 tile is 1 - (32 - 2L)(48 - 2L) / (32 * 48) of its points (38%
    // at 4 levels), so deeper passes would compute more ring than tile.
    static constexpr int kMaxLevels3d = 4;

    // One block of 768 threads per multiprocessor, 2 tile rows per thread: float 2 points per
    // thread (a 64 x 48 tile), double 1 (32 x 48). Measured on an H200 at 512^3 (each with the
    // launch's chunks by waves): one row per thread in 1024 threads (64 x 32 and 32 x 32 tiles)
    // 1.15 x the copy rate in float (4 levels) and 1.17 in double (3), 2 rows in 768 threads
    // 1.48 and 1.57; ncu on 2-level passes: 29-36% fewer shared-memory wavefronts, 1.29-1.38 x
    // faster. 3 rows in 512 threads and 4 in 384 or 512 gave double 1.54-1.60 and float
    // 1.29-1.41; 2 rows in 512 threads (a 32-row tile) were slower.
    static constexpr int kRowsPerThread3d = 2;
    static constexpr int kThreadRows3d = 24;

    template <StencilKind Kind>
    void levels_3d_for(const HeatCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                       const Box& b, const Box& live, int levels, cudaStream_t s) {
        with_levels<2, kMaxLevels3d>(levels, [&](auto l) {
            this->template launch_levels_3d<Kind, decltype(l)::value, sizeof(T) == 4 ? 2 : 1,
                                            kRowsPerThread3d, kThreadRows3d>(r, in, out, b, live,
                                                                             s);
        });
    }

    // The rows (2D; planes in 3D) of each chunk a levels launch cuts its box's n rows into along
    // the walk axis, a whole number of `granule` rows and at most kLevelRows (at least 1): each
    // chunk of a tile is a block, and a block's steps are its rows plus 3 * levels to fill the
    // pipeline.
    // The choice minimises (waves of blocks) x (steps per block), `slots` blocks per wave, so
    // that the last wave is not a few blocks on an idle GPU (256^3 double at 4 levels: 77
    // tiles, so 2 chunks made 154 blocks for 132 multiprocessors; 5 make 385 in 3 waves of 64
    // steps: 0.80 -> 1.16 x the copy rate; a 2048^2 2D box in 512-row chunks made 20 blocks, and
    // a block of 2 sweeps took 216 us on an H200).
    static int level_chunk_rows(long long tiles, int n, int levels, long long slots,
                                int granule = 1) {
        const long long units = ceil_div(n, granule);
        const long long per_chunk = std::max(1, kLevelRows / granule);
        const int least = std::max(1, static_cast<int>(ceil_div(units, per_chunk)));
        int chunks = least;
        long long best = -1;
        const int most = std::max(
            least, static_cast<int>(std::min<long long>(units, 4 * ceil_div(slots, tiles))));
        for (int c = least; c <= most; ++c) {
            const long long waves = ceil_div(tiles * c, slots);
            const long long cost = waves * (ceil_div(units, c) * granule + 3LL * levels);
            if (best < 0 || cost < best) {
                best = cost;
                chunks = c;
            }
        }
        return std::max(1, static_cast<int>(ceil_div(units, chunks)) * granule);
    }

    // Blocks of `kernel` (`threads` and `smem` bytes each) the whole GPU runs at once: a wave.
    template <class Kernel>
    long long wave_slots(Kernel kernel, int threads, std::size_t smem) const {
        int n = 0;
        GRIDSIM_CUDA_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem));
        return static_cast<long long>(multiprocessors_) * std::max(n, 1);
    }

    // A 32 V x Rows R tile per block (V points and R rows per thread), z chunks by
    // level_chunk_rows.
    template <StencilKind Kind, int Levels, int V, int R, int Rows>
    void launch_levels_3d(const HeatCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                          const Box& b, const Box& live, cudaStream_t s) {
        constexpr int kStrideX = (32 * V - 2 * Levels) / V * V;
        constexpr int kStrideY = Rows * R - 2 * Levels;
        constexpr std::size_t kSmem = cuda::LevelsPlanes<T, Levels, V, R, Rows>::kBytes;
        auto kernel = cuda::stencil_levels_3d_kernel<T, Kind, Levels, V, R, Rows>;
        static const long long wave = [&] {
            allow_shared(kernel, kSmem);
            return wave_slots(kernel, 32 * Rows, kSmem);
        }();
        const int x0 = cuda::pack_start<V>(b.lo[0] - Levels);
        const unsigned tiles_x = ceil_div(b.hi[0] - (x0 + Levels), kStrideX);
        const unsigned tiles_y = ceil_div(b.hi[1] - b.lo[1], kStrideY);
        const int nz = b.hi[2] - b.lo[2];
        const int planes =
            level_chunk_rows(static_cast<long long>(tiles_x) * tiles_y, nz, Levels, wave);
        const dim3 grid(tiles_x, tiles_y, ceil_div(nz, planes));
        kernel<<<grid, dim3(32, Rows, 1), kSmem, s>>>(in, out, b, live, r, planes);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    template <int Dims, StencilKind Kind, StencilSum Sum>
    void launch_naive(FieldView<const T> in, FieldView<T> out, const Box& b, const HeatCoeffs<T>& r,
                      cudaStream_t s) {
        const int nx = b.hi[0] - b.lo[0];
        const int ny = b.hi[1] - b.lo[1];
        const dim3 block = fit_block(cfg_.block_x, cfg_.block_y, nx, ny);
        const dim3 grid(ceil_div(nx, block.x), ceil_div(ny, block.y * cfg_.points),
                        b.hi[2] - b.lo[2]);
        double* partial = Sum != StencilSum::none
                              ? partial_slots(static_cast<long long>(grid.x) * grid.y * grid.z)
                              : nullptr;
        switch (cfg_.points) {
            case 1:
                cuda::stencil_naive_kernel<T, Dims, Kind, 1, Sum>
                    <<<grid, block, 0, s>>>(in, out, b, r, partial);
                break;
            case 2:
                cuda::stencil_naive_kernel<T, Dims, Kind, 2, Sum>
                    <<<grid, block, 0, s>>>(in, out, b, r, partial);
                break;
            case 4:
                cuda::stencil_naive_kernel<T, Dims, Kind, 4, Sum>
                    <<<grid, block, 0, s>>>(in, out, b, r, partial);
                break;
            default:
                cuda::stencil_naive_kernel<T, Dims, Kind, 8, Sum>
                    <<<grid, block, 0, s>>>(in, out, b, r, partial);
                break;
        }
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    LaunchConfig cfg_;
    int multiprocessors_ = [] {
        int device = 0;
        int count = 0;
        GRIDSIM_CUDA_CHECK(cudaGetDevice(&device));
        GRIDSIM_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
        return count;
    }();
    Stream boundary_{Stream::Priority::high};
    Stream interior_{Stream::Priority::low};
    Event boundary_done_;
    Event interior_done_;
    // Downloads into page-locked memory (output staging) beside the lanes: the last one's
    // completion, and the landings not yet marked (several copies may be in flight).
    Stream copy_{Stream::Priority::low};
    Event downloaded_;
    std::vector<std::shared_ptr<Landing>> landings_;
    cuda::ReductionScratch scratch_;
    CublasHandle blas_;
    Buffer<float> blas_float_ = device_buffer<float>(1);
    // The CG's sums (device) and their page-locked copy on the host.
    Buffer<double> sums_ = device_buffer<double>(Backend<T>::kSumSlots);
    Buffer<double> sums_host_ = pinned_buffer<double>(Backend<T>::kSumSlots);
    // Fused residual: one partial per block of every residual launch of a check, in two sets
    // that alternate between checks (one is written while the other is folded); the folded sum
    // (device, one per set); a ring of page-locked doubles it is read back into.
    Stream reduce_{Stream::Priority::high};
    std::array<Buffer<double>, 2> partials_;
    std::array<Event, 2> fold_done_;
    std::array<bool, 2> folded_{false, false};
    int partial_set_ = 0;
    long long partials_used_ = 0;
    Buffer<double> result_ = device_buffer<double>(2 * kMaxReadValues);
    long long most_partials_ = 0;  // the most partials one fold has taken
    // Read-back slots: the first kReads for reads in turn, then one per recording that reads.
    std::vector<std::unique_ptr<ReadSlot>> reads_ = [] {
        std::vector<std::unique_ptr<ReadSlot>> v;
        for (int i = 0; i < Backend<T>::kReads; ++i) v.push_back(std::make_unique<ReadSlot>());
        return v;
    }();
    std::uint64_t reads_issued_ = 0;
    // While recording: the recording's partials and folded sum, and its read's slot.
    struct Capture {
        Buffer<double> partials;  // device memory, or page-locked where partials_on_host
        bool partials_on_host = false;
        long long used = 0;
        Buffer<double> result = device_buffer<double>(1);
        std::unique_ptr<ReadSlot> read;  // where a read started while recording lands
        bool read_used = false;
    };
    std::unique_ptr<Capture> capture_;
};

}  // namespace

template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(const LaunchConfig& cfg) {
    return std::make_unique<CudaBackend<T>>(cfg);
}

template std::unique_ptr<Backend<float>> make_cuda_backend<float>(const LaunchConfig&);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(const LaunchConfig&);

}  // namespace gridsim
