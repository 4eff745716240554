// ResidualSums: block partials, their folds in a fixed order, reads back to the host, recordings.
#include "kernels/cuda/residual_sums.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "kernels/cuda/walk_common.cuh"

namespace gridsim::cuda {

namespace {

constexpr int kFoldThreads = 1024;
constexpr int kReads = Backend<double>::kReads;  // the same for every precision

// One block adds `count` partials in a fixed order (thread t: t, t + blockDim.x, ... in
// order, then store_block_sum's fixed tree), so a rerun reproduces the sum bit for bit. The block
// is fold_threads(count) wide, a function of the count alone: every path that folds the same
// partials gets the same bits. Each thread loads kFoldLoads partials before adding them, in the
// same order (the last batch bounds-checked): loads one at a time leave a large fold, which a
// recorded sweep waits for, bound by their latency.
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
    store_block_sum(sum, result);  // into result[blockIdx.x]
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
// device goes on with the next sweep. Up to this many partials, which the host adds within the
// next sweep (docs/tuning.md, "Launches, graphs and timing").
constexpr long long kHostFoldPartials = 8192;

constexpr int kMaxReadValues = 8;  // a summing pass's levels

}  // namespace

// One double read back to the host: a page-locked slot and the event after which it holds the
// value, or (`fold_count` > 0) the page-locked partials the host folds into it, owned here so
// that a read outlives the recording that launched it. `unread`: a recording's read launched
// and not yet finished (its next launch would overwrite the value).
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

namespace {

// A recorded sweep or group of sweeps (a CUDA graph) and the memory its work uses besides the
// fields: the block partials (those the host folds are its read slots') and folded sum of a
// residual, and the slots its reads land in (ids from `first_read` on, in order).
class CudaRecording final : public Recording {
public:
    CudaRecording(cudaGraph_t graph, cudaStream_t stream, std::vector<ReadSlot*> reads,
                  int first_read, Buffer<double> partials, Buffer<double> result)
        : exec_(graph),
          stream_(stream),
          reads_(std::move(reads)),
          first_read_(first_read),
          partials_(std::move(partials)),
          result_(std::move(result)) {}

    int launch() override {
        for (const ReadSlot* r : reads_) {
            if (r->unread)
                throw std::logic_error("a recording replayed before its last read was finished");
        }
        exec_.launch(stream_);
        if (reads_.empty()) return -1;
        for (ReadSlot* r : reads_) {
            r->done.record(stream_);
            r->unread = true;
        }
        return first_read_;
    }

private:
    GraphExec exec_;
    cudaStream_t stream_;
    std::vector<ReadSlot*> reads_;
    int first_read_;
    Buffer<double> partials_;
    Buffer<double> result_;
};

}  // namespace

// While recording: the recording's partials and folded sum, and its reads' slots.
struct ResidualSums::Capture {
    Buffer<double> partials;  // device memory, or page-locked where partials_on_host
    bool partials_on_host = false;
    long long used = 0;
    Buffer<double> result = device_buffer<double>(1);
    // Where the reads started while recording land, and the page-locked partials of the reads
    // after the first that the host folds: allocated before the capture, which may not allocate.
    std::vector<std::unique_ptr<ReadSlot>> reads;
    int reads_used = 0;
    std::vector<Buffer<double>> spare_partials;
};

ResidualSums::ResidualSums(Lanes& lanes)
    : lanes_(lanes), result_(device_buffer<double>(2 * kMaxReadValues)) {
    for (int i = 0; i < kReads; ++i) reads_.push_back(std::make_unique<ReadSlot>());
}

ResidualSums::~ResidualSums() { settle(); }

void ResidualSums::settle() const noexcept {
    cudaStreamSynchronize(reduce_.get());
    cudaStreamSynchronize(lanes_.boundary());
}

void ResidualSums::sync_all() const {
    lanes_.wait(Lane::boundary);
    lanes_.wait(Lane::interior);
    GRIDSIM_CUDA_CHECK(cudaStreamSynchronize(reduce_.get()));
}

double* ResidualSums::fold_residual() {
    if (capture_) return fold_in_capture();
    return fold_set(1, nullptr);
}

int ResidualSums::fold_and_read_levels(int levels) {
    if (capture_) throw std::logic_error("a summing pass is not recorded");
    const int id = static_cast<int>(reads_issued_++ % kReads);
    fold_set(levels, reads_[id]->host.data());
    reads_[id]->done.record(reduce_.get());
    return id;
}

double ResidualSums::finish_read_level(int id, int level) {
    return finished(id).host.data()[level];
}

void ResidualSums::join_fold(cudaStream_t s) {
    if (capture_) return;  // a recording folds on the boundary lane
    GRIDSIM_CUDA_CHECK(cudaStreamWaitEvent(s, fold_done_[1 - partial_set_].get(), 0));
}

int ResidualSums::read_after_fold(const double* src) {
    const int id = static_cast<int>(reads_issued_++ % kReads);
    GRIDSIM_CUDA_CHECK(cudaMemcpyAsync(reads_[id]->host.data(), src, sizeof(double),
                                       cudaMemcpyDeviceToHost, reduce_.get()));
    reads_[id]->done.record(reduce_.get());
    return id;
}

int ResidualSums::fold_and_read() {
    if (!capture_) return read_after_fold(fold_residual());
    if (capture_->reads_used == Recording::kMostReads)
        throw std::logic_error("a recording reads back more sums than it has slots for");
    ReadSlot& read = *capture_->reads[static_cast<std::size_t>(capture_->reads_used++)];
    if (capture_->partials_on_host) {
        lanes_.join_interior(recording());  // the replay's end then covers every block's partial
        read.fold_count = capture_->used;
        Buffer<double> next;
        if (!capture_->spare_partials.empty()) {
            next = std::move(capture_->spare_partials.back());
            capture_->spare_partials.pop_back();
        }
        read.partials = std::exchange(capture_->partials, std::move(next));
        capture_->used = 0;
    } else {
        fold_in_capture(read.host.data());
    }
    return -1;
}

double ResidualSums::finish_read(int id) {
    ReadSlot& r = finished(id);
    r.unread = false;
    return r.value();
}

void ResidualSums::begin_capture(bool sum_read_by_host) {
    capture_ = std::make_unique<Capture>();
    const auto most = static_cast<std::size_t>(std::max(most_partials_, 1LL));
    capture_->partials_on_host = sum_read_by_host && most_partials_ <= kHostFoldPartials;
    capture_->partials =
        capture_->partials_on_host ? pinned_buffer<double>(most) : device_buffer<double>(most);
    for (int i = 1; capture_->partials_on_host && i < Recording::kMostReads; ++i)
        capture_->spare_partials.push_back(pinned_buffer<double>(most));
    for (int i = 0; i < Recording::kMostReads; ++i)
        capture_->reads.push_back(std::make_unique<ReadSlot>());
    GRIDSIM_CUDA_CHECK(cudaStreamBeginCapture(lanes_.boundary(), cudaStreamCaptureModeThreadLocal));
}

std::unique_ptr<Recording> ResidualSums::end_capture() {
    lanes_.join_interior(recording());
    cudaGraph_t graph = nullptr;
    GRIDSIM_CUDA_CHECK(cudaStreamEndCapture(lanes_.boundary(), &graph));
    std::unique_ptr<Capture> c = std::move(capture_);
    const int first_read = static_cast<int>(reads_.size());
    std::vector<ReadSlot*> reads;
    for (int i = 0; i < c->reads_used; ++i) {
        reads.push_back(c->reads[static_cast<std::size_t>(i)].get());
        reads_.push_back(std::move(c->reads[static_cast<std::size_t>(i)]));
    }
    return std::make_unique<CudaRecording>(graph, lanes_.boundary(), std::move(reads), first_read,
                                           std::move(c->partials), std::move(c->result));
}

double* ResidualSums::fold_in_capture(double* host) {
    if (capture_->partials_on_host)
        throw std::logic_error("a recording whose sum the host folds folded on the device");
    lanes_.join_interior(recording());
    launch_fold(lanes_.boundary(), capture_->partials.data(), capture_->used,
                capture_->result.data(), host, true);
    capture_->used = 0;
    return capture_->result.data();
}

ReadSlot& ResidualSums::finished(int id) {
    ReadSlot& r = *reads_.at(static_cast<std::size_t>(id));
    GRIDSIM_CUDA_CHECK(cudaEventSynchronize(r.done.get()));
    return r;
}

double* ResidualSums::fold_set(int parts, double* host) {
    const int set = partial_set_;
    lanes_.follow(reduce_.get());
    double* result = result_.data() + set * kMaxReadValues;
    launch_fold(reduce_.get(), partials_[set].data(), partials_used_ / parts, result, host, false,
                parts);
    fold_done_[set].record(reduce_.get());
    folded_[set] = true;
    most_partials_ = std::max(most_partials_, partials_used_);
    partial_set_ = 1 - set;  // the next check writes the other set while this one is read
    partials_used_ = 0;
    return result;
}

double* ResidualSums::partial_slots(long long more) {
    if (capture_) {
        if (capture_->used + more > static_cast<long long>(capture_->partials.size()))
            throw std::logic_error("a recorded sweep needs more partials than it did unrecorded");
        double* slots = capture_->partials.data() + capture_->used;
        capture_->used += more;
        return slots;
    }
    Buffer<double>& buf = partials_[partial_set_];
    if (partials_used_ == 0 && folded_[partial_set_]) {
        for (cudaStream_t s : {lanes_.boundary(), lanes_.interior()})
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

}  // namespace gridsim::cuda
