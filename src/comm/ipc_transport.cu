// The `ipc` halo transport: ranks whose GPUs can reach each other (one node, peer access) open
// each other's memory (cudaIpcGetMemHandle / cudaIpcOpenMemHandle) and the boundary lane stores
// its faces straight into the neighbour's over NVLink, raises a flag in the neighbour's memory
// and waits for the neighbour's flag, all in one launch: no message, no host and no NCCL kernel
// on the way. The solver's two fields are opened too, and their faces of long rows (across y and
// z) go from our field's owned layers into the neighbour's field's halo, with no pack and no
// unpack; faces across x (a few points per row) and any other field (the CG's vectors) go
// packed, into the neighbour's receive buffer, and are unpacked there. Beside a split pass's
// interior a large face's stores are a copy engine's instead, between a kernel that meets the
// neighbour and one that tells it (IpcTransport::launch). Where every rank reaches every other,
// the sums over the ranks (the residual, the CG's dot products) go through mailboxes in the same
// way and no NCCL communicator is made; otherwise (some pair of ranks, not neighbours, cannot
// reach each other) the sums go through an NCCL transport kept beside it. Every face goes by
// IPC: Simulation refuses ipc where a neighbour cannot be reached.
//
// The handshake, per face pair (A's face f, B's opposite face), with counters that only grow:
// A's put of exchange n first tells B that A has reached exchange n (all of A's work before it
// on the boundary lane is done: the unpack of exchange n - 1 from A's receive buffer, and every
// pass that reads or writes A's halos), waits until B said the same, stores, sets B's `ready` to
// n, and spins until its own `ready` reaches n. Both ranks store only into halos and buffers
// their owner no longer reads or writes until its put ends (work on the interior lane touches no
// halo). The counters live in device memory and are advanced by the kernels themselves, so a
// recorded exchange replays correctly. With the data goes a tag of what was stored (the packed
// buffer, or which field), which the receiver checks: every rank exchanges the same field at a
// time, so a mismatch is a bug, and the kernel stops the run.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <cuda/atomic>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "comm/mpi_session.hpp"
#include "comm/nccl_transport.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/fast_divide.hpp"

namespace gridsim {

namespace {

// One face's handshake state. The owner's `ready`, `reached` and `stored` are written by the
// peer.
struct FaceSignals {
    unsigned long long ready;    // exchanges whose data the peer has stored into our memory
    unsigned long long reached;  // exchanges the peer has reached (its put has started)
    unsigned long long epoch;    // exchanges of this face we have waited for (ours only)
    unsigned long long stored;   // what the peer's last put stored (its tag)
    unsigned int arrived;        // blocks of the running put that have stored their share (ours)
};

using SystemCounter = cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>;

constexpr int kMaxFaces = 6;
// 128 threads at 32 registers: a put fits beside a 3D levels block, as halo moves do
// (cuda::kFaceThreads). ptxas spills 40-44 bytes of peer_put at that cap; capped at 64 (no
// spill) it ran no faster (two H200s, heat 512^3: the git history of docs/performance.md, "Faces
// straight into the neighbour's halo").
constexpr int kPutThreads = 128;

// A put's tag: the packed buffer, or field f of those registered.
constexpr unsigned long long kPackedTag = 0;
constexpr unsigned long long field_tag(int f) { return static_cast<unsigned long long>(f) + 1; }

// A put's first step, every block: tell the peer this rank has reached the exchange after the
// `epoch` it has waited for, and wait until the peer has reached it too (the first exchange
// included: the peer may still be writing its field, an upload halos and all). Returns that
// epoch.
__device__ unsigned long long meet_peer(FaceSignals* mine, FaceSignals* peer) {
    const unsigned long long done = mine->epoch;
    if (threadIdx.x == 0) {
        if (blockIdx.x == 0)
            SystemCounter(peer->reached).store(done + 1, cuda::memory_order_release);
        while (SystemCounter(mine->reached).load(cuda::memory_order_acquire) < done + 1) {
        }
    }
    __syncthreads();
    return done;
}

// A put's last step, every block after its stores: the last block of the face to get here tells
// the peer that exchange done + 1 is in its memory, and what was stored (`tag`), then waits until
// the peer has said the same to us and checks the peer stored what we did. Being the last, it
// moves the epoch on after every block of the face has read it.
__device__ void tell_and_wait(FaceSignals* mine, FaceSignals* peer, unsigned long long done,
                              unsigned long long tag) {
    __threadfence_system();  // this block's stores reach the peer before it is told
    __syncthreads();
    if (threadIdx.x != 0 || atomicAdd(&mine->arrived, 1u) != gridDim.x - 1) return;
    mine->arrived = 0;  // every store of the face is out; the next put counts anew
    __threadfence_system();
    SystemCounter(peer->stored).store(tag, cuda::memory_order_relaxed);
    SystemCounter(peer->ready).store(done + 1, cuda::memory_order_release);
    while (SystemCounter(mine->ready).load(cuda::memory_order_acquire) < done + 1) {
    }
    if (SystemCounter(mine->stored).load(cuda::memory_order_relaxed) != tag) __trap();
    mine->epoch = done + 1;
}

// A put moves every face of its launch (blockIdx.y) from rows here to rows of the same length in
// the peer's memory: a registered field's face from our field's send box into the peer's field's
// receive box (the same shape), or a packed face as one row, our send buffer into the peer's
// receive buffer. A warp's item is a run of one row: 32 x kStoreUnroll pieces, each lane loading
// its pieces before it stores any. A piece is 16 bytes where the two rows start at the same
// offset from a 16-byte boundary (the buffers; faces across y and z, whose fields' x layouts
// match), the points before the first boundary and after the last going one by one; else a
// point.
constexpr int kStoreUnroll = 2;
constexpr int kStoreRun = 32 * kStoreUnroll;

template <class T>
struct PutFace {
    const T* src = nullptr;               // our first point
    T* dst = nullptr;                     // the peer's first point, opened here
    std::int64_t src_sy = 0, src_sz = 0;  // row and plane strides, ours and the peer's
    std::int64_t dst_sy = 0, dst_sz = 0;
    int nx = 0;       // points per row
    int head = 0;     // points of a row before its first 16-byte boundary
    int vectors = 0;  // 16-byte pieces of a row after them; 0: the row goes point by point
    FastDivide runs;  // runs per row
    FastDivide ny;    // rows per plane
    int planes = 0;
    unsigned items = 0;
    FaceSignals* mine = nullptr;
    FaceSignals* peer = nullptr;  // the peer's signals of the opposite face, opened here
};
template <class T>
struct PutFaces {
    PutFace<T> face[kMaxFaces];
    unsigned long long tag;
};

// Run `run` of a row: `n` pieces of type P from s to d, this warp's lane `lane`.
template <class P>
__device__ void put_run(const P* s, P* d, int n, unsigned run, unsigned lane) {
    const int first = static_cast<int>(run * kStoreRun + lane);
    P v[kStoreUnroll];
#pragma unroll
    for (int u = 0; u < kStoreUnroll; ++u) {
        if (first + 32 * u < n) v[u] = s[first + 32 * u];
    }
#pragma unroll
    for (int u = 0; u < kStoreUnroll; ++u) {
        if (first + 32 * u < n) d[first + 32 * u] = v[u];
    }
}

// Grid (blocks per face, faces).
template <class T>
__global__ void __launch_bounds__(kPutThreads, 16) peer_put(PutFaces<T> faces) {
    const PutFace<T>& p = faces.face[blockIdx.y];
    const unsigned long long done = meet_peer(p.mine, p.peer);
    constexpr unsigned kWarps = kPutThreads / 32;
    constexpr int kPerVector = 16 / static_cast<int>(sizeof(T));
    const unsigned lane = threadIdx.x % 32;
    for (unsigned item = blockIdx.x * kWarps + threadIdx.x / 32; item < p.items;
         item += gridDim.x * kWarps) {
        const unsigned row = p.runs.quotient(item);
        const unsigned run = item - row * p.runs.divisor();
        const unsigned k = p.ny.quotient(row);
        const unsigned j = row - k * p.ny.divisor();
        const T* src = p.src + j * p.src_sy + k * p.src_sz;
        T* dst = p.dst + j * p.dst_sy + k * p.dst_sz;
        if (p.vectors == 0) {
            put_run(src, dst, p.nx, run, lane);
            continue;
        }
        const int tail = p.head + p.vectors * kPerVector;  // the points after the last piece
        if (run == 0 && static_cast<int>(lane) < p.head) dst[lane] = src[lane];
        if (run == 0 && tail + static_cast<int>(lane) < p.nx) dst[tail + lane] = src[tail + lane];
        put_run(reinterpret_cast<const uint4*>(src + p.head),
                reinterpret_cast<uint4*>(dst + p.head), p.vectors, run, lane);
    }
    tell_and_wait(p.mine, p.peer, done, faces.tag);
}

// A put whose stores a copy engine makes (IpcTransport::launch): the meeting before the copies
// and the telling and waiting after them, which the stream runs in order; one block per face.
template <class T>
__global__ void peer_meet(PutFaces<T> faces) {
    const PutFace<T>& p = faces.face[blockIdx.y];
    (void)meet_peer(p.mine, p.peer);
}
template <class T>
__global__ void peer_tell(PutFaces<T> faces) {
    const PutFace<T>& p = faces.face[blockIdx.y];
    tell_and_wait(p.mine, p.peer, p.mine->epoch, faces.tag);
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

// A peer's allocation opened several times (a registered field: by each face leading to its
// rank, two on a periodic axis, and by each transport, as the exchange trial builds one per halo
// depth over the same fields), mapped once in this process and closed with its last holder. A
// second cudaIpcOpenMemHandle of the same handle may return a mapping that the first holder's
// close unmaps for both, and the surviving transport's stores then fault.
std::shared_ptr<PeerMemory> open_shared(const cudaIpcMemHandle_t& handle) {
    using Key = std::array<char, sizeof(cudaIpcMemHandle_t)>;
    static std::map<Key, std::weak_ptr<PeerMemory>> opened;
    for (auto it = opened.begin(); it != opened.end();) {
        it = it->second.expired() ? opened.erase(it) : std::next(it);
    }
    Key key;
    std::memcpy(key.data(), &handle, sizeof handle);
    std::weak_ptr<PeerMemory>& slot = opened[key];
    if (std::shared_ptr<PeerMemory> held = slot.lock()) return held;
    auto memory = std::make_shared<PeerMemory>(handle);
    slot = memory;
    return memory;
}

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

// The most fields whose faces go straight from field to field (the solver's two).
constexpr int kMaxFields = 2;

// What a rank sends the peer across one face: where to store and whom to tell.
struct FaceHandles {
    cudaIpcMemHandle_t buffer;
    cudaIpcMemHandle_t signals;
    unsigned long long bytes;  // of the receive buffer: the peer's send must be the same size
    cudaIpcMemHandle_t fields[kMaxFields];  // the registered fields
    FieldExtents field_ext;                 // theirs (all alike)
    Box recv;                               // this face's receive box in them
};

// One face: our signals, the peer's buffer and signals opened here, and where in the peer's
// registered fields this face's data lands (each field opened once however many faces lead to
// its rank, two on a periodic axis, and however many transports: open_shared).
struct PeerFace {
    std::unique_ptr<DeviceBlock> signals;
    std::unique_ptr<PeerMemory> buffer;
    std::unique_ptr<PeerMemory> peer_signals;
    std::array<std::shared_ptr<PeerMemory>, kMaxFields> fields;
    FieldExtents field_ext;
    Box recv;
};

template <class T>
class IpcTransport final : public Transport<T> {
public:
    // Collective over the face pairs: every face swaps handles with its peer (the message tagged
    // with the face it leaves through, as MpiTransport's are).
    IpcTransport(MPI_Comm comm, Backend<T>& backend, const std::vector<HaloFace<T>>& faces,
                 bool everywhere, const std::vector<FieldView<T>>& fields)
        : backend_(backend), fields_(fields) {
        if (fields.size() > kMaxFields) {
            throw std::logic_error(fmt::format("ipc transport: {} fields registered (at most {})",
                                               fields.size(), kMaxFields));
        }
        if (everywhere) {
            mailboxes_ = std::make_unique<Mailboxes>(comm);
        } else {
            nccl_ = make_nccl_transport<T>(comm, backend, {});  // the sums alone, no faces
        }
        peer_faces_.resize(faces.size());
        std::vector<FaceHandles> mine(faces.size()), theirs(faces.size());
        std::array<cudaIpcMemHandle_t, kMaxFields> field_handles{};
        for (std::size_t i = 0; i < fields.size(); ++i)
            GRIDSIM_CUDA_CHECK(cudaIpcGetMemHandle(&field_handles[i], fields[i].data));
        std::vector<MPI_Request> requests;
        for (std::size_t f = 0; f < faces.size(); ++f) {
            peer_faces_[f].signals = std::make_unique<DeviceBlock>(sizeof(FaceSignals));
            GRIDSIM_CUDA_CHECK(cudaIpcGetMemHandle(&mine[f].buffer, faces[f].recv_buf.data()));
            GRIDSIM_CUDA_CHECK(
                cudaIpcGetMemHandle(&mine[f].signals, peer_faces_[f].signals->as<FaceSignals>()));
            mine[f].bytes = faces[f].recv.count() * sizeof(T);
            std::copy(field_handles.begin(), field_handles.end(), mine[f].fields);
            if (!fields.empty()) mine[f].field_ext = fields.front().ext;
            mine[f].recv = faces[f].recv;
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
            open_fields(faces[f], theirs[f], peer_faces_[f]);
        }
        // Every face's puts, built once (they never change): its packed buffer, and each
        // registered field's face where it goes straight.
        puts_.resize(faces.size());
        for (std::size_t f = 0; f < faces.size(); ++f) {
            const HaloFace<T>& h = faces[f];
            const std::size_t row =
                static_cast<std::size_t>(h.send.hi[0] - h.send.lo[0]) * sizeof(T);
            stored_.push_back(!fields_.empty() && row >= kMinStoredRowBytes);
            puts_[f][0] = buffer_put(h, f);
            for (std::size_t i = 0; stored_[f] && i < fields_.size(); ++i)
                puts_[f][1 + i] = field_put(static_cast<int>(i), h.send, f);
        }
    }

    [[nodiscard]] const char* name() const override { return "ipc"; }

    void exchange(std::vector<HaloFace<T>>& /*faces*/, std::size_t first, std::size_t last,
                  bool beside_work) override {
        PutFaces<T> puts{};
        puts.tag = kPackedTag;
        int count = 0;
        for (std::size_t f = first; f < last; ++f) puts.face[count++] = puts_[f][0];
        launch(puts, count, beside_work);
    }

    [[nodiscard]] int field_index(const T* data) const override {
        for (std::size_t i = 0; i < fields_.size(); ++i) {
            if (fields_[i].data == data) return static_cast<int>(i);
        }
        return -1;
    }
    [[nodiscard]] bool stores_face(std::size_t f) const override { return stored_[f]; }

    void exchange_field(int field, std::vector<HaloFace<T>>& /*faces*/, std::size_t first,
                        std::size_t last, bool beside_work) override {
        PutFaces<T> puts{};
        puts.tag = field_tag(field);
        int count = 0;
        for (std::size_t f = first; f < last; ++f)
            puts.face[count++] = puts_[f][stored_[f] ? 1 + field : 0];
        launch(puts, count, beside_work);
    }

    [[nodiscard]] bool host_steps() const override { return false; }
    [[nodiscard]] bool reduces_on_device() const override { return true; }
    void allreduce_sum_on_lane(double* values, int count) override {
        if (mailboxes_) {
            mailboxes_->allreduce(values, count, boundary_stream());
        } else {
            nccl_->allreduce_sum_on_lane(values, count);
        }
    }

private:
    // A face of a registered field goes straight into the peer's field where its rows hold at
    // least this many bytes; a thinner one (a face across x: a few points per row) goes packed,
    // as one row: its rows stored one by one into the peer crept (two H200s, jacobi 16384^2
    // float split along x, 7 points per row: 124-150 us a put against 4 us packed;
    // the git history of docs/performance.md, "Faces straight into the neighbour's halo").
    static constexpr std::size_t kMinStoredRowBytes = 512;
    // Up to this many blocks of kPutThreads (every one resident beside nothing else), about one
    // item per warp.
    static constexpr unsigned kMostPutBlocks = 256;
    // Beside other work (a split pass's interior, whose long blocks hold the multiprocessors), a
    // put with a face of this many bytes has a copy engine make its stores (cudaMemcpy3DAsync
    // into the peer's memory, between a meeting and a telling kernel): it needs no
    // multiprocessor. Alone the kernel's stores are faster. Two H200s, heat 512^3 at k = 3
    // (6.4 MB faces): split 168.6-169.4 us per step against 170.8-171.1, fused 174.5-175.4
    // against 173.5-173.6 (the git history of docs/performance.md, "Faces straight into the
    // neighbour's halo").
    static constexpr std::size_t kCopyEngineBytes = std::size_t{1} << 20;

    void launch(const PutFaces<T>& puts, int count, bool beside_work) {
        // HaloExchange::transfer calls with at least one face.
        std::size_t most_bytes = 0;
        for (int f = 0; f < count; ++f) {
            const PutFace<T>& p = puts.face[f];
            most_bytes = std::max(most_bytes, sizeof(T) * p.nx * p.ny.divisor() * p.planes);
        }
        if (beside_work && most_bytes >= kCopyEngineBytes) {
            const dim3 faces(1, static_cast<unsigned>(count));
            peer_meet<T><<<faces, 32, 0, boundary_stream()>>>(puts);
            GRIDSIM_CUDA_CHECK(cudaGetLastError());
            for (int f = 0; f < count; ++f) copy_face(puts.face[f]);
            peer_tell<T><<<faces, 32, 0, boundary_stream()>>>(puts);
            GRIDSIM_CUDA_CHECK(cudaGetLastError());
            return;
        }
        unsigned most_items = 1;
        for (int f = 0; f < count; ++f) most_items = std::max(most_items, puts.face[f].items);
        constexpr unsigned per_block = kPutThreads / 32;
        const unsigned blocks = std::min((most_items + per_block - 1) / per_block, kMostPutBlocks);
        const dim3 grid(blocks, static_cast<unsigned>(count));
        peer_put<T><<<grid, kPutThreads, 0, boundary_stream()>>>(puts);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }
    // A face's rows by a copy engine, on the boundary stream.
    void copy_face(const PutFace<T>& p) const {
        const std::size_t width = sizeof(T) * p.nx;
        if (p.ny.divisor() == 1 && p.planes == 1) {
            GRIDSIM_CUDA_CHECK(
                cudaMemcpyAsync(p.dst, p.src, width, cudaMemcpyDefault, boundary_stream()));
            return;
        }
        cudaMemcpy3DParms m{};
        m.srcPtr = make_cudaPitchedPtr(const_cast<T*>(p.src), sizeof(T) * p.src_sy, width,
                                       static_cast<std::size_t>(p.src_sz / p.src_sy));
        m.dstPtr = make_cudaPitchedPtr(p.dst, sizeof(T) * p.dst_sy, width,
                                       static_cast<std::size_t>(p.dst_sz / p.dst_sy));
        m.extent = make_cudaExtent(width, p.ny.divisor(), static_cast<std::size_t>(p.planes));
        m.kind = cudaMemcpyDefault;
        GRIDSIM_CUDA_CHECK(cudaMemcpy3DAsync(&m, boundary_stream()));
    }
    // Face f's packed send buffer into the peer's receive buffer, as one row.
    PutFace<T> buffer_put(const HaloFace<T>& h, std::size_t f) const {
        return put_rows(h.send_buf.data(), 0, 0, static_cast<T*>(peer_faces_[f].buffer->get()), 0,
                        0, {h.count(), 1, 1}, f);
    }
    // Face f of registered field `field`: our send box into the peer's receive box.
    PutFace<T> field_put(int field, const Box& send, std::size_t f) const {
        const PeerFace& d = peer_faces_[f];
        const FieldView<T>& u = fields_[field];
        const FieldExtents& e = d.field_ext;
        return put_rows(
            u.data + u.ext.index(send.lo[0], send.lo[1], send.lo[2]), u.ext.sy, u.ext.sz,
            static_cast<T*>(d.fields[field]->get()) +
                e.index(d.recv.lo[0], d.recv.lo[1], d.recv.lo[2]),
            e.sy, e.sz, {send.hi[0] - send.lo[0], send.hi[1] - send.lo[1], send.hi[2] - send.lo[2]},
            f);
    }
    // Rows of n[0] points, n[1] per plane, n[2] planes, in 16-byte pieces where every row of both
    // sides starts at the same offset from a 16-byte boundary and holds at least one piece.
    PutFace<T> put_rows(const T* src, std::int64_t src_sy, std::int64_t src_sz, T* dst,
                        std::int64_t dst_sy, std::int64_t dst_sz, const std::array<int, 3>& n,
                        std::size_t f) const {
        constexpr std::size_t kV = 16;
        const auto at = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % kV; };
        const auto whole = [&](std::int64_t stride) { return (stride * sizeof(T)) % kV == 0; };
        PutFace<T> p;
        p.src = src;
        p.dst = dst;
        p.src_sy = src_sy;
        p.src_sz = src_sz;
        p.dst_sy = dst_sy;
        p.dst_sz = dst_sz;
        p.nx = n[0];
        if (whole(src_sy) && whole(src_sz) && whole(dst_sy) && whole(dst_sz) &&
            at(src) == at(dst)) {
            p.head = static_cast<int>(((kV - at(src)) % kV) / sizeof(T));
            p.vectors = std::max(0, n[0] - p.head) / static_cast<int>(kV / sizeof(T));
        }
        if (p.vectors == 0) p.head = 0;
        const int pieces = p.vectors > 0 ? p.vectors : n[0];
        const unsigned runs = static_cast<unsigned>((pieces + kStoreRun - 1) / kStoreRun);
        p.runs = FastDivide(std::max(runs, 1u));
        p.ny = FastDivide(static_cast<unsigned>(n[1]));
        p.planes = n[2];
        p.items = runs * static_cast<unsigned>(n[1]) * static_cast<unsigned>(n[2]);
        p.mine = peer_faces_[f].signals->as<FaceSignals>();
        p.peer = static_cast<FaceSignals*>(peer_faces_[f].peer_signals->get());
        return p;
    }
    [[nodiscard]] cudaStream_t boundary_stream() const {
        return static_cast<cudaStream_t>(backend_.native_stream(Lane::boundary));
    }
    // Where face `h`'s data lands in the peer's registered fields (`theirs`: what the peer sent
    // for the opposite face).
    void open_fields(const HaloFace<T>& h, const FaceHandles& theirs, PeerFace& d) {
        if (fields_.empty()) return;
        const Box& s = h.send;
        const Box& r = theirs.recv;
        for (int a = 0; a < 3; ++a) {
            if (s.hi[a] - s.lo[a] != r.hi[a] - r.lo[a]) {
                throw std::logic_error(fmt::format(
                    "ipc transport: face {} sends a box of another shape than the peer receives",
                    h.face));
            }
        }
        if (s.count() > std::numeric_limits<int>::max())
            throw std::logic_error("ipc transport: a face of 2^31 points or more");
        for (std::size_t i = 0; i < fields_.size(); ++i)
            d.fields[i] = open_shared(theirs.fields[i]);
        d.field_ext = theirs.field_ext;
        d.recv = r;
    }

    Backend<T>& backend_;
    std::unique_ptr<Transport<T>> nccl_;    // the sums, where not every rank reaches every other
    std::unique_ptr<Mailboxes> mailboxes_;  // the sums, where every rank reaches every other
    std::vector<PeerFace> peer_faces_;      // by face index
    std::vector<FieldView<T>> fields_;      // ours, registered
    std::vector<bool> stored_;  // by face index: a registered field's face goes straight
    // By face index: [0] the packed buffer's put, [1 + i] registered field i's (stored_ faces).
    std::vector<std::array<PutFace<T>, kMaxFields + 1>> puts_;
};

}  // namespace

template <class T>
std::unique_ptr<Transport<T>> make_ipc_transport(MPI_Comm comm, Backend<T>& backend,
                                                 const std::vector<HaloFace<T>>& faces,
                                                 bool everywhere,
                                                 const std::vector<FieldView<T>>& fields) {
    return std::make_unique<IpcTransport<T>>(comm, backend, faces, everywhere, fields);
}

template std::unique_ptr<Transport<float>> make_ipc_transport<float>(
    MPI_Comm, Backend<float>&, const std::vector<HaloFace<float>>&, bool,
    const std::vector<FieldView<float>>&);
template std::unique_ptr<Transport<double>> make_ipc_transport<double>(
    MPI_Comm, Backend<double>&, const std::vector<HaloFace<double>>&, bool,
    const std::vector<FieldView<double>>&);

}  // namespace gridsim
