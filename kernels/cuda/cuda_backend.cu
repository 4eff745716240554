// The CUDA backend: lanes are two streams (boundary: high priority, interior: low priority)
// ordered through events only (lanes.hpp). Its parts, one concern each: the stencil launches
// (stencil_launches.cuh over the kernel family headers), the residual's partials, folds, reads
// and recordings (residual_sums), the CG's BLAS calls (blas_ops), the phase timer
// (interval_timer), the box reductions (reductions.cu); halo moves, copies and downloads here.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/blas_ops.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/cuda_raii.hpp"
#include "kernels/cuda/initial.cuh"
#include "kernels/cuda/interval_timer.hpp"
#include "kernels/cuda/lanes.hpp"
#include "kernels/cuda/move_kernels.cuh"
#include "kernels/cuda/reductions.cuh"
#include "kernels/cuda/residual_sums.hpp"
#include "kernels/cuda/stencil_launches.cuh"
#include "kernels/device_runtime.hpp"

namespace gridsim {

namespace {

constexpr int kCopyThreads = 256;

int blocks_for(long long n) {
    return static_cast<int>(std::clamp<long long>((n + kCopyThreads - 1) / kCopyThreads, 1, 65535));
}

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
class CudaBackend final : public Backend<T>,
                          FoldedSums,
                          FieldReductions<T>,
                          VectorOps<T>,
                          BoxSweeps<T>,
                          TimeBlocking<T>,
                          FacesFirstPasses<T>,
                          PipelinedPasses<T>,
                          LevelSums<T>,
                          Recorder {
public:
    // Box sweeps with the stream kernel only.
    explicit CudaBackend(const LaunchConfig& cfg) : launches_(cfg, lanes_, residuals_) {
        this->set_parts(
            {this, this, this, launches_.applies_boxes() ? this : nullptr, this, this, this});
    }
    // Before any part is freed: the reads still in flight (they write into read slots) and the
    // boundary lane's work are waited for, errors ignored as in every destructor; downloads land
    // unless the device has failed, and then their waiters are let go.
    ~CudaBackend() override {
        residuals_.settle();
        cudaStreamSynchronize(copy_.get());
        for (const auto& landing : landings_) landing->abandon();
    }

    [[nodiscard]] std::string name() const override { return "cuda"; }
    [[nodiscard]] std::string launch_description(StencilKind kind, int dims) const override {
        return launches_.description(kind, dims);
    }
    [[nodiscard]] bool on_device() const override { return true; }
    [[nodiscard]] void* native_stream(Lane lane) const override { return lanes_.stream(lane); }
    // 128 bytes: the span of a warp's 32 float loads, four 32-byte sectors.
    [[nodiscard]] int row_alignment() const override { return static_cast<int>(128 / sizeof(T)); }

    Buffer<T> allocate(std::size_t n) override { return device_buffer<T>(n); }
    Buffer<T> allocate_host(std::size_t n) override { return pinned_buffer<T>(n); }

    void fill_initial(const InitialParams& p, FieldView<T> u,
                      const std::array<int, 3>& origin) override {
        cuda::fill_initial(p, u, origin, lanes_.boundary());
    }
    // Ordered on the boundary stream and waited for: a plain cudaMemcpy from pageable memory
    // may return before its DMA lands, and our streams do not synchronise with the legacy one.
    void upload(const std::vector<T>& host, FieldView<T> dst) override {
        residuals_.sync_all();
        GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(dst.data, host.data(), host.size() * sizeof(T),
                                           cudaMemcpyHostToDevice, lanes_.boundary()));
        lanes_.wait(Lane::boundary);
    }
    void download(FieldView<const T> src, std::vector<T>& host) override {
        residuals_.sync_all();
        host.resize(src.ext.total);
        GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(host.data(), src.data, host.size() * sizeof(T),
                                           cudaMemcpyDeviceToHost, lanes_.boundary()));
        lanes_.wait(Lane::boundary);
    }
    void copy(T* dst, const T* src, std::size_t n, Lane lane) override {
        GRIDSIM_CUDA_CHECK(
            cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDefault, lanes_.stream(lane)));
    }
    // On the copy stream, after both lanes' work so far: the steps issued after it run beside
    // it, and the host learns of its landing from a host function queued behind it.
    void download_box(FieldView<const T> src, const Box& b, T* dst,
                      std::shared_ptr<Landing> landing) override {
        lanes_.follow(copy_.get());
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
        GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(lanes_.boundary(), downloaded_.get(), 0));
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
    void reflect(FieldView<T> u, const FaceMoves<T>& m, Lane lane) override {
        launch_faces(m, cuda::ReflectFaces<T>{u}, lane);
    }
    double sum_sq_diff(FieldView<const T> a, FieldView<const T> b, const Box& box) override {
        residuals_.sync_all();
        return scratch_.sum_sq_diff(a, b, box, lanes_.boundary());
    }
    double sum_sq(FieldView<const T> a, const Box& box) override {
        residuals_.sync_all();
        return scratch_.sum_sq(a, box, lanes_.boundary());
    }
    FieldStats stats(FieldView<const T> a, const Box& box) override {
        residuals_.sync_all();
        return scratch_.stats(a, box, lanes_.boundary());
    }
    void fill(FieldView<T> u, const Box& b, T value) override {
        const long long n = b.count();
        if (n == 0) return;
        cuda::box_kernel<<<blocks_for(n), kCopyThreads, 0, lanes_.boundary()>>>(
            b, n, cuda::FillOp<T>{u, value});
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }
    // The fused passes; the sums are the deterministic box reductions' (double).
    void cg_update(const CgUpdate<T>& u, const Box& box, double* sum) override {
        scratch_.cg_update(u, box, sum, lanes_.boundary());
    }
    void xpay(FieldView<const T> z, T b, FieldView<T> p, const Box& box) override {
        if (box.empty()) return;
        cuda::xpay_kernel<T, kRowPoints>
            <<<row_grid(box, kRowPoints), kRowThreads, 0, lanes_.boundary()>>>(z, b, p, box);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }
    void chebyshev_step(const ChebyshevStep<T>& s, const Box& box) override {
        if (box.empty()) return;
        cuda::chebyshev_kernel<T, kRowPoints>
            <<<row_grid(box, kRowPoints), kRowThreads, 0, lanes_.boundary()>>>(s, box);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }
    void restrict_to(const GridTransfer<T>& t, const Box& box) override {
        launch_rows(box, cuda::RestrictOp<T>{t});
    }
    void prolong_add(const GridTransfer<T>& t, const Box& box) override {
        launch_rows(box, cuda::ProlongOp<T>{t});
    }
    void combine(const StencilCombination<T>& s, const Box& box) override {
        launch_rows(box, cuda::CombinationOp<T>{s});
    }
    template <class Op>
    void launch_rows(const Box& box, const Op& op) {
        if (box.empty()) return;
        cuda::rows_kernel<<<row_grid(box, 1), kRowThreads, 0, lanes_.boundary()>>>(box, op);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }
    // The row kernels' launch (xpay_kernel, chebyshev_kernel: kRowPoints points a thread;
    // rows_kernel: the multigrid passes, one), a block's threads along x, the rows in blockIdx.y.
    static constexpr int kRowThreads = 128;
    static constexpr int kRowPoints = 4;
    static dim3 row_grid(const Box& box, int points) {
        const long long rows =
            static_cast<long long>(box.hi[1] - box.lo[1]) * (box.hi[2] - box.lo[2]);
        return {static_cast<unsigned>(cuda::ceil_div(box.hi[0] - box.lo[0], kRowThreads * points)),
                static_cast<unsigned>(std::min<long long>(rows, 65535))};
    }
    double* sum_slots() override { return cg_sums_.data(); }
    void read_sums(const double* src, int n, double* host) override {
        GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(cg_sums_host_.data(), src, n * sizeof(double),
                                           cudaMemcpyDeviceToHost, lanes_.boundary()));
        lanes_.wait(Lane::boundary);
        std::copy_n(cg_sums_host_.data(), n, host);
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
        GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice,
                                           lanes_.boundary()));
        float best = 1e30f;
        for (int rep = 0; rep < 5; ++rep) {
            start.record(lanes_.boundary());
            GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice,
                                               lanes_.boundary()));
            stop.record(lanes_.boundary());
            GRIDSIM_CUDA_CHECK(cudaEventSynchronize(stop.get()));
            float ms = 0.0f;
            GRIDSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
            best = std::min(best, ms);
        }
        return 2.0 * static_cast<double>(bytes) / (1e-3 * best);
    }

    void apply(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out, const Box& b,
               Lane lane, StencilSum sum) override {
        launches_.apply(p, in, out, b, lane, sum);
    }
    void apply_boxes(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                     const std::vector<Box>& boxes, Lane lane, StencilSum sum,
                     int wrap_period) override {
        launches_.apply_boxes(p, in, out, boxes, lane, sum, wrap_period);
    }
    [[nodiscard]] int max_levels(int dims, StencilKind kind) const override {
        return launches_.max_levels(dims, kind);
    }
    [[nodiscard]] int levels_on_chip(int dims, StencilKind kind) const override {
        return launches_.max_levels(dims, kind);
    }
    void apply_levels(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                      const Box& b, const Box& live, int levels, const FaceMoves<T>& reflections,
                      Lane lane) override {
        (void)launches_.apply_levels(p, in, out, b, live, levels, lane, {}, reflections);
    }
    [[nodiscard]] FacesFirstPasses<T>* faces_first(int dims, StencilKind kind) override {
        return cuda::StencilLaunches<T>::signals_levels(dims, kind) ? this : nullptr;
    }
    [[nodiscard]] PipelinedPasses<T>* pipelined(int dims, StencilKind kind) override {
        return cuda::StencilLaunches<T>::signals_levels(dims, kind) ? this : nullptr;
    }
    void apply_levels_faces_first(const StencilParams<T>& p, FieldView<const T> in,
                                  FieldView<T> out, const Box& b, const Box& live, int levels,
                                  const std::vector<Box>& faces, Lane lane) override {
        face_blocks_ =
            launches_.apply_levels(p, in, out, b, live, levels, lane, {&faces, faces_done_.data()});
    }
    void wait_for_faces(Lane lane) override {
        cuda::wait_for_blocks(faces_done_.data(), static_cast<unsigned>(face_blocks_),
                              lanes_.stream(lane));
    }
    void apply_levels_pipelined(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                                const Box& b, const Box& live, int levels,
                                const HaloArrivals& arrivals, bool goes_on) override {
        Event& previous = pipeline_marks_[(arrivals.pass + 1) % 2];
        if (goes_on) GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(lanes_.interior(), previous.get(), 0));
        pipeline_marks_[arrivals.pass % 2].record(lanes_.boundary());
        (void)launches_.apply_levels(p, in, out, b, live, levels, Lane::interior, {{}, &arrivals});
        lanes_.join_interior(false);
    }
    [[nodiscard]] bool sums_levels(const std::vector<Box>& boxes, int dims) const override {
        return launches_.sums_levels(boxes, dims);
    }
    void start_summing_pass(const std::vector<Box>& sum_boxes, int levels) override {
        launches_.start_summing_pass(sum_boxes, levels);
    }
    void apply_levels_summing(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                              const Box& b, const Box& live, int levels, Lane lane) override {
        launches_.apply_levels_summing(p, in, out, b, live, levels, lane);
    }

    double* fold_residual() override { return residuals_.fold_residual(); }
    int fold_and_read_levels(int levels) override {
        return residuals_.fold_and_read_levels(levels);
    }
    double finish_read_level(int id, int level) override {
        return residuals_.finish_read_level(id, level);
    }
    void join_fold(Lane lane) override { residuals_.join_fold(lanes_.stream(lane)); }
    int fold_and_read() override { return residuals_.fold_and_read(); }
    double finish_read(int id) override { return residuals_.finish_read(id); }
    void begin_capture(bool sum_read_by_host) override {
        residuals_.begin_capture(sum_read_by_host);
    }
    std::unique_ptr<Recording> end_capture() override { return residuals_.end_capture(); }

    void prepare() override { blas_.prepare(); }
    void axpy(T a, FieldView<const T> x, FieldView<T> y) override { blas_.axpy(a, x, y); }
    void scale(T a, FieldView<T> x) override { blas_.scale(a, x); }
    void dot(FieldView<const T> x, FieldView<const T> y, double* sum) override {
        blas_.dot(x, y, sum);
    }

    void join_lanes() override { lanes_.join(residuals_.recording()); }
    void wait(Lane lane) override { lanes_.wait(lane); }

    std::unique_ptr<IntervalTimer> make_interval_timer() override {
        return cuda::make_event_timer(lanes_.boundary(), lanes_.interior());
    }

private:
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
        const auto blocks = static_cast<unsigned>(
            std::clamp<long long>(cuda::ceil_div(n, cuda::kFaceThreads), 1, 65535));
        cuda::faces_kernel<<<blocks, cuda::kFaceThreads, 0, lanes_.stream(lane)>>>(m, layout, op);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

    cuda::Lanes lanes_;
    cuda::ResidualSums residuals_{lanes_};
    cuda::StencilLaunches<T> launches_;
    cuda::BlasOps<T> blas_{lanes_.boundary()};
    cuda::ReductionScratch scratch_;
    // Downloads into page-locked memory (output staging) beside the lanes: the last one's
    // completion, and the landings not yet marked (several copies may be in flight).
    Stream copy_{Stream::Priority::low};
    Event downloaded_;
    std::vector<std::shared_ptr<Landing>> landings_;
    // The CG's sums (device) and their page-locked copy on the host.
    Buffer<double> cg_sums_ = device_buffer<double>(VectorOps<T>::kSumSlots);
    Buffer<double> cg_sums_host_ = pinned_buffer<double>(VectorOps<T>::kSumSlots);
    // The face blocks of the last faces-first pass that have written their points (zero between
    // passes: its waiter sets it back).
    Buffer<unsigned> faces_done_ = device_buffer<unsigned>(1);
    long long face_blocks_ = 0;  // of the last faces-first pass
    // The boundary lane as it stood when each of a pipeline's last two passes was issued (by the
    // pass's parity).
    std::array<Event, 2> pipeline_marks_;
};

}  // namespace

template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(const LaunchConfig& cfg) {
    return std::make_unique<CudaBackend<T>>(cfg);
}

template std::unique_ptr<Backend<float>> make_cuda_backend<float>(const LaunchConfig&);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(const LaunchConfig&);

}  // namespace gridsim
