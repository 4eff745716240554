// The `ipc` halo transport: ranks whose GPUs can reach each other (one node, peer access) open
// each other's receive buffers (cudaIpcGetMemHandle / cudaIpcOpenMemHandle) and the boundary
// lane stores its packed faces straight into the neighbour's buffer over NVLink, then raises a
// flag in the neighbour's memory; the neighbour's lane waits on that flag in a one-thread
// kernel. No message, no host and no NCCL kernel on the way: a step's exchange costs two small
// launches. Where every rank reaches every other, the sums over the ranks (the residual, the
// CG's dot products) go through mailboxes in the same way and no NCCL communicator is made;
// otherwise (some pair of ranks, not neighbours, cannot reach each other) the sums go through an
// NCCL transport kept beside it. Every face goes by IPC: Simulation refuses ipc where a
// neighbour cannot be reached.
//
// The handshake, per face pair (A's face f, B's opposite face), with counters that only grow:
// A's put of exchange n first tells B that A has unpacked exchange n - 1 from its own receive
// buffer (B may overwrite it), waits until B said the same of B's buffer, copies, and sets B's
// `ready` to n; A's wait spins until its own `ready` reaches n. The counters live in device
// memory and are advanced by the kernels themselves, so a recorded exchange replays correctly.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <cuda/atomic>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "comm/mpi_session.hpp"
#include "comm/nccl_transport.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace gridsim {

namespace {

// One face's handshake state. The owner's `ready` and `freed` are written by the peer.
struct FaceSignals {
    unsigned long long ready;  // exchanges whose data the peer has stored in our receive buffer
    unsigned long long freed;  // exchanges the peer has unpacked from the buffer we store into
    unsigned long long epoch;  // exchanges of this face we have waited for (ours only)
    unsigned int arrived;      // blocks of the running put that have stored their share (ours)
};

using SystemCounter = cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>;

constexpr int kMaxFaces = 6;
// 128 threads at 32 registers: a put fits beside a 3D levels block, as halo moves do
// (cuda::kFaceThreads).
constexpr int kPutThreads = 128;

struct PutFace {
    const uint4* src = nullptr;  // our packed face (16-byte aligned: its own cudaMalloc)
    uint4* dst = nullptr;        // the peer's receive buffer, opened here
    std::size_t words = 0;       // 4-byte words (a face of floats or doubles is whole words)
    FaceSignals* mine = nullptr;
    FaceSignals* peer = nullptr;  // the peer's signals of the opposite face, opened here
};
struct PutFaces {
    PutFace face[kMaxFaces];
};
struct WaitFaces {
    FaceSignals* mine[kMaxFaces];
    int count;
};

// `words` 4-byte words from src to dst, 16 bytes per load and store and the last up to three
// words one by one, by the whole grid's x dimension.
__device__ void copy_words(const uint4* src, uint4* dst, std::size_t words) {
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    const std::size_t first = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
    const std::size_t vectors = words / 4;
    for (std::size_t i = first; i < vectors; i += stride) dst[i] = src[i];
    const auto* s = reinterpret_cast<const unsigned*>(src);
    auto* d = reinterpret_cast<unsigned*>(dst);
    for (std::size_t i = 4 * vectors + first; i < words; i += stride) d[i] = s[i];
}

// Grid (blocks per face, faces).
__global__ void __launch_bounds__(kPutThreads, 16) peer_put(PutFaces faces) {
    const PutFace& p = faces.face[blockIdx.y];
    const unsigned long long done = p.mine->epoch;  // the previous exchange, waited for
    if (threadIdx.x == 0) {
        if (blockIdx.x == 0) SystemCounter(p.peer->freed).store(done, cuda::memory_order_release);
        while (SystemCounter(p.mine->freed).load(cuda::memory_order_acquire) < done) {
        }
    }
    __syncthreads();
    copy_words(p.src, p.dst, p.words);
    __threadfence_system();  // this block's stores reach the peer before it is told
    __syncthreads();
    if (threadIdx.x == 0 && atomicAdd(&p.mine->arrived, 1u) == gridDim.x - 1) {
        p.mine->arrived = 0;  // the last block: every store is out; the next put counts anew
        __threadfence_system();
        SystemCounter(p.peer->ready).store(done + 1, cuda::memory_order_release);
    }
}

// One thread per face: until the peer's data of this exchange is in our receive buffer. The
// unpack launched after it on the same stream reads it.
__global__ void peer_wait(WaitFaces faces) {
    if (static_cast<int>(threadIdx.x) >= faces.count) return;
    FaceSignals* s = faces.mine[threadIdx.x];
    const unsigned long long want = s->epoch + 1;
    while (SystemCounter(s->ready).load(cuda::memory_order_acquire) < want) {
    }
    s->epoch = want;
}

// The sums over the ranks where every rank reaches every other: each rank's mailbox holds a
// row of values per rank, twice (exchanges alternate between the two, so a rank one all-reduce
// ahead never overwrites a row still being read: to get there it needed every rank's arrival
// at the all-reduce in between, which each sends only after finishing the one before), and an
// arrival counter per rank. One block: store this rank's values into its row of every mailbox,
// raise its arrival counter there, wait for every rank's arrival here, and add the rows in rank
// order, so every rank gets the same bits (with two ranks the same as NCCL's a + b).
constexpr int kMaxSums = 8;

struct MailboxView {
    unsigned long long* arrived;  // [ranks]
    double* rows;                 // [2][ranks][kMaxSums]
};

__global__ void mailbox_allreduce(double* values, int count, const MailboxView* boxes, int ranks,
                                  int me, unsigned long long* epoch) {
    const unsigned long long step = *epoch + 1;
    const int parity = static_cast<int>(step & 1);
    const MailboxView& mine = boxes[me];
    for (int r = static_cast<int>(threadIdx.x); r < ranks; r += blockDim.x) {
        double* row = boxes[r].rows + (static_cast<std::size_t>(parity) * ranks + me) * kMaxSums;
        for (int c = 0; c < count; ++c) row[c] = values[c];
    }
    __threadfence_system();
    __syncthreads();
    for (int r = static_cast<int>(threadIdx.x); r < ranks; r += blockDim.x) {
        SystemCounter(boxes[r].arrived[me]).store(step, cuda::memory_order_release);
    }
    for (int r = static_cast<int>(threadIdx.x); r < ranks; r += blockDim.x) {
        while (SystemCounter(mine.arrived[r]).load(cuda::memory_order_acquire) < step) {
        }
    }
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < count) {
        const double* rows = mine.rows + static_cast<std::size_t>(parity) * ranks * kMaxSums;
        double sum = rows[threadIdx.x];
        for (int r = 1; r < ranks; ++r) sum += rows[r * kMaxSums + threadIdx.x];
        values[threadIdx.x] = sum;
    }
    if (threadIdx.x == 0) *epoch = step;
}

// A peer's allocation opened in this process, closed on destruction.
class PeerMemory {
public:
    explicit PeerMemory(const cudaIpcMemHandle_t& handle) {
        GRIDSIM_CUDA_CHECK(cudaIpcOpenMemHandle(&ptr_, handle, cudaIpcMemLazyEnablePeerAccess));
    }
    PeerMemory(const PeerMemory&) = delete;
    PeerMemory& operator=(const PeerMemory&) = delete;
    ~PeerMemory() { (void)cudaIpcCloseMemHandle(ptr_); }
    [[nodiscard]] void* get() const { return ptr_; }

private:
    void* ptr_ = nullptr;
};

// Zeroed device memory of our own (an allocation of its own, so that its IPC handle opens
// exactly it), freed on destruction.
class DeviceBlock {
public:
    explicit DeviceBlock(std::size_t bytes) {
        GRIDSIM_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
        GRIDSIM_CUDA_CHECK(cudaMemset(ptr_, 0, bytes));
        GRIDSIM_CUDA_CHECK(cudaDeviceSynchronize());
    }
    DeviceBlock(const DeviceBlock&) = delete;
    DeviceBlock& operator=(const DeviceBlock&) = delete;
    ~DeviceBlock() { (void)cudaFree(ptr_); }
    template <class U>
    [[nodiscard]] U* as() const {
        return static_cast<U*>(ptr_);
    }

private:
    void* ptr_ = nullptr;
};

// Every rank's mailbox, opened here (our own as it is), and their views in device memory.
class Mailboxes {
public:
    explicit Mailboxes(MPI_Comm comm)
        : ranks_(comm_size(comm)),
          me_(comm_rank(comm)),
          own_(bytes(ranks_)),
          epoch_(sizeof(unsigned long long)),
          views_(sizeof(MailboxView) * ranks_) {
        cudaIpcMemHandle_t mine{};
        GRIDSIM_CUDA_CHECK(cudaIpcGetMemHandle(&mine, own_.as<void>()));
        std::vector<cudaIpcMemHandle_t> all(ranks_);
        GRIDSIM_MPI_CHECK(
            MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm));
        std::vector<MailboxView> views(ranks_);
        for (int r = 0; r < ranks_; ++r) {
            char* base = own_.as<char>();
            if (r != me_) {
                opened_.push_back(std::make_unique<PeerMemory>(all[r]));
                base = static_cast<char*>(opened_.back()->get());
            }
            views[r].arrived = reinterpret_cast<unsigned long long*>(base);
            views[r].rows = reinterpret_cast<double*>(base + sizeof(unsigned long long) * ranks_);
        }
        GRIDSIM_CUDA_CHECK(cudaMemcpy(views_.as<void>(), views.data(), sizeof(MailboxView) * ranks_,
                                      cudaMemcpyHostToDevice));
    }
    void allreduce(double* values, int count, cudaStream_t stream) {
        if (count > kMaxSums) {
            throw std::logic_error(
                fmt::format("ipc all-reduce of {} values (at most {})", count, kMaxSums));
        }
        mailbox_allreduce<<<1, 32, 0, stream>>>(values, count, views_.as<MailboxView>(), ranks_,
                                                me_, epoch_.as<unsigned long long>());
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

private:
    static std::size_t bytes(int ranks) {
        return sizeof(unsigned long long) * ranks + sizeof(double) * 2 * ranks * kMaxSums;
    }
    int ranks_;
    int me_;
    DeviceBlock own_;
    DeviceBlock epoch_;
    DeviceBlock views_;
    std::vector<std::unique_ptr<PeerMemory>> opened_;
};

// What a rank sends the peer across one face: where to store and whom to tell.
struct FaceHandles {
    cudaIpcMemHandle_t buffer;
    cudaIpcMemHandle_t signals;
    unsigned long long bytes;  // of the receive buffer: the peer's send must be the same size
};

// One face: our signals, and the peer's buffer and signals opened here.
struct PeerFace {
    std::unique_ptr<DeviceBlock> signals;
    std::unique_ptr<PeerMemory> buffer;
    std::unique_ptr<PeerMemory> peer_signals;
};

template <class T>
class IpcTransport final : public Transport<T> {
public:
    // Collective over the face pairs: every face swaps handles with its peer (the message tagged
    // with the face it leaves through, as MpiTransport's are).
    IpcTransport(MPI_Comm comm, Backend<T>& backend, const std::vector<HaloFace<T>>& faces,
                 bool everywhere)
        : backend_(backend) {
        if (everywhere) {
            mailboxes_ = std::make_unique<Mailboxes>(comm);
        } else {
            nccl_ = make_nccl_transport<T>(comm, backend, {});  // the sums alone, no faces
        }
        peer_faces_.resize(faces.size());
        std::vector<FaceHandles> mine(faces.size()), theirs(faces.size());
        std::vector<MPI_Request> requests;
        for (std::size_t f = 0; f < faces.size(); ++f) {
            peer_faces_[f].signals = std::make_unique<DeviceBlock>(sizeof(FaceSignals));
            GRIDSIM_CUDA_CHECK(cudaIpcGetMemHandle(&mine[f].buffer, faces[f].recv_buf.data()));
            GRIDSIM_CUDA_CHECK(
                cudaIpcGetMemHandle(&mine[f].signals, peer_faces_[f].signals->as<FaceSignals>()));
            mine[f].bytes = faces[f].recv.count() * sizeof(T);
            requests.resize(requests.size() + 2);
            GRIDSIM_MPI_CHECK(MPI_Irecv(&theirs[f], sizeof(FaceHandles), MPI_BYTE, faces[f].peer,
                                        opposite_face(faces[f].face), comm, &requests.end()[-2]));
            GRIDSIM_MPI_CHECK(MPI_Isend(&mine[f], sizeof(FaceHandles), MPI_BYTE, faces[f].peer,
                                        faces[f].face, comm, &requests.end()[-1]));
        }
        GRIDSIM_MPI_CHECK(
            MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
        for (std::size_t f = 0; f < faces.size(); ++f) {
            const std::size_t bytes = faces[f].send.count() * sizeof(T);
            if (theirs[f].bytes != bytes) {
                throw std::logic_error(
                    fmt::format("ipc transport: face {} sends {} bytes, the peer's buffer holds {}",
                                faces[f].face, bytes, theirs[f].bytes));
            }
            peer_faces_[f].buffer = std::make_unique<PeerMemory>(theirs[f].buffer);
            peer_faces_[f].peer_signals = std::make_unique<PeerMemory>(theirs[f].signals);
        }
        for (const HaloFace<T>& h : faces) {
            most_bytes_ = std::max(most_bytes_, h.send.count() * sizeof(T));
        }
    }

    [[nodiscard]] const char* name() const override { return "ipc"; }

    void exchange(std::vector<HaloFace<T>>& faces, std::size_t first, std::size_t last) override {
        auto* stream = static_cast<cudaStream_t>(backend_.native_stream(Lane::boundary));
        PutFaces puts{};
        WaitFaces waits{};
        waits.count = 0;
        for (std::size_t f = first; f < last; ++f) {
            const PeerFace& d = peer_faces_[f];
            PutFace& p = puts.face[waits.count];
            p.src = reinterpret_cast<const uint4*>(faces[f].send_buf.data());
            p.dst = static_cast<uint4*>(d.buffer->get());
            p.words = faces[f].send.count() * sizeof(T) / 4;
            p.mine = d.signals->as<FaceSignals>();
            p.peer = static_cast<FaceSignals*>(d.peer_signals->get());
            waits.mine[waits.count++] = p.mine;
        }
        // HaloExchange::transfer calls with at least one face.
        const dim3 grid(put_blocks(), static_cast<unsigned>(waits.count));
        peer_put<<<grid, kPutThreads, 0, stream>>>(puts);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
        peer_wait<<<1, 32, 0, stream>>>(waits);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }
    [[nodiscard]] bool host_steps() const override { return false; }
    [[nodiscard]] bool reduces_on_device() const override { return true; }
    void allreduce_sum_on_lane(double* values, int count) override {
        if (mailboxes_) {
            mailboxes_->allreduce(
                values, count, static_cast<cudaStream_t>(backend_.native_stream(Lane::boundary)));
        } else {
            nccl_->allreduce_sum_on_lane(values, count);
        }
    }

private:
    // Enough blocks that a large face streams at NVLink speed (4 pieces of 16 bytes per thread),
    // few enough that a small one is one launch wave.
    [[nodiscard]] unsigned put_blocks() const {
        const std::size_t per_block = std::size_t{kPutThreads} * 4 * sizeof(uint4);
        return static_cast<unsigned>(
            std::clamp<std::size_t>((most_bytes_ + per_block - 1) / per_block, 1, 256));
    }

    Backend<T>& backend_;
    std::unique_ptr<Transport<T>> nccl_;    // the sums, where not every rank reaches every other
    std::unique_ptr<Mailboxes> mailboxes_;  // the sums, where every rank reaches every other
    std::vector<PeerFace> peer_faces_;      // by face index
    std::size_t most_bytes_ = 0;
};

}  // namespace

template <class T>
std::unique_ptr<Transport<T>> make_ipc_transport(MPI_Comm comm, Backend<T>& backend,
                                                 const std::vector<HaloFace<T>>& faces,
                                                 bool everywhere) {
    return std::make_unique<IpcTransport<T>>(comm, backend, faces, everywhere);
}

template std::unique_ptr<Transport<float>> make_ipc_transport<float>(
    MPI_Comm, Backend<float>&, const std::vector<HaloFace<float>>&, bool);
template std::unique_ptr<Transport<double>> make_ipc_transport<double>(
    MPI_Comm, Backend<double>&, const std::vector<HaloFace<double>>&, bool);

}  // namespace gridsim
