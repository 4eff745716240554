// The `ipc` halo transport: ranks whose GPUs can reach each other (one node, peer access) open
// each other's memory (cudaIpcGetMemHandle / cudaIpcOpenMemHandle) and the boundary lane stores
// its faces straight into the neighbour's over NVLink, raises a flag in the neighbour's memory
// and waits for the neighbour's flag, all in one launch: no message, no host and no NCCL kernel
// on the way. The solver's two fields are opened too, and their faces of long rows (across y and
// z) go from our field's owned layers into the neighbour's field's halo, with no pack and no
// unpack; faces across x (a few points per row) and any other field (the CG's vectors) go
// packed, into the neighbour's receive buffer, and are unpacked there. Beside a split pass's
// interior or a pipelined pass a large face's stores are a copy engine's instead, between a
// kernel that meets the neighbour and kernels that tell it, face by face, then wait for its
// telling (IpcTransport::launch), and so are every face's where ranks share GPUs (through MPS).
// Where every rank reaches every other, the sums over the ranks (the residual, the CG's dot
// products) go through mailboxes in the same way and no NCCL communicator is made; otherwise (some
// pair of ranks, not neighbours, cannot reach each other) the sums go through an NCCL transport
// kept beside it. Every face goes by IPC: Simulation refuses ipc where a neighbour cannot be
// reached.
//
// The handshake, per face pair (A's face f, B's opposite face), with counters that only grow:
// A's put of exchange n first tells B that A has reached exchange n (all of A's work before it
// on the boundary lane is done: the unpack of exchange n - 1 from A's receive buffer, and every
// pass that reads or writes A's halos), waits until B said the same, stores, sets B's `ready` to
// n, and spins until its own `ready` reaches n. Both ranks store only into halos and buffers
// their owner no longer reads or writes until its put ends (work on the interior lane touches no
// halo, but for a pipelined pass, whose blocks read a halo only once its `ready` has reached the
// exchange they need, and which the peer's next put into that field follows: that put meets
// this rank only after the pass). The counters live in device memory and are advanced by the
// kernels themselves, so a recorded exchange replays correctly. With the data goes a tag of what
// was stored (the packed buffer, or which field), which the receiver checks: every rank exchanges
// the same field at a time, so a mismatch is a bug, and the kernel stops the run.
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

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/fast_divide.hpp"
#include "parallel/cuda/ipc_kernels.cuh"
#include "parallel/cuda/ipc_memory.cuh"
#include "parallel/mpi_session.hpp"
#include "parallel/transport.hpp"

namespace gridsim {

namespace {

using namespace ipc;  // NOLINT(google-build-using-namespace): this file is the transport they serve

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
class IpcTransport final : public Transport<T>,
                           public FieldStores<T>,
                           public ArrivalSignals,
                           public DeviceSums {
public:
    // Collective over the face pairs: every face swaps handles with its peer (the message tagged
    // with the face it leaves through, as MpiTransport's are).
    IpcTransport(MPI_Comm comm, Backend<T>& backend, const std::vector<HaloFace<T>>& faces,
                 IpcReach reach, const std::vector<FieldView<T>>& fields)
        : shared_gpus_(reach.shared_gpus), backend_(backend), fields_(fields) {
        if (fields.size() > kMaxFields) {
            throw std::logic_error(fmt::format("ipc transport: {} fields registered (at most {})",
                                               fields.size(), kMaxFields));
        }
        if (reach.sums && reach.everywhere) {
            mailboxes_ = std::make_unique<Mailboxes>(comm);
        } else if (reach.sums) {
            nccl_ = make_nccl_sums<T>(comm, backend);
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
    [[nodiscard]] bool host_steps() const override { return false; }
    [[nodiscard]] FieldStores<T>* field_stores() override { return this; }
    // Where ranks share GPUs, a pipelined pass's waiting blocks could hold the multiprocessors
    // the peer's pass needs before its exchange: no arrivals are told then.
    [[nodiscard]] ArrivalSignals* arrivals() override { return shared_gpus_ ? nullptr : this; }
    [[nodiscard]] DeviceSums* device_sums() override {
        return mailboxes_ || nccl_ ? this : nullptr;
    }

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

    [[nodiscard]] Words words(std::size_t f) const override {
        const FaceSignals* s = peer_faces_[f].signals->as<FaceSignals>();
        return {&s->ready, &s->base};
    }
    void restart(unsigned long long pass, Lane lane) override {
        const auto stream = static_cast<cudaStream_t>(backend_.native_stream(lane));
        for (const PeerFace& p : peer_faces_) {
            ipc::restart_arrivals<<<1, 1, 0, stream>>>(p.signals->as<FaceSignals>(), pass);
            GRIDSIM_CUDA_CHECK(cudaGetLastError());
        }
    }

    [[nodiscard]] const char* route() const override { return mailboxes_ ? "ipc" : "nccl"; }
    // Only where device_sums() is this.
    void allreduce_sum_on_lane(double* values, int count) override {
        if (mailboxes_) {
            mailboxes_->allreduce(values, count, boundary_stream());
        } else {
            nccl_->device_sums()->allreduce_sum_on_lane(values, count);
        }
    }

private:
    // A face of a registered field goes straight into the peer's field where its rows hold at
    // least this many bytes; a thinner one (a face across x: a few points per row) goes packed,
    // as one row: rows stored one by one into the peer crawl (docs/tuning.md).
    static constexpr std::size_t kMinStoredRowBytes = 512;
    // Up to this many blocks of kPutThreads (every one resident beside nothing else), about one
    // item per warp.
    static constexpr unsigned kMostPutBlocks = 256;
    // Beside other work (a split pass's interior or a pipelined pass, whose long blocks hold the
    // multiprocessors), a put with a face of this many bytes has a copy engine make its stores
    // (cudaMemcpy3DAsync into the peer's memory, between a meeting kernel and the telling and
    // waiting ones): it needs no multiprocessor. Alone the kernel's stores are faster
    // (docs/tuning.md).
    static constexpr std::size_t kCopyEngineBytes = std::size_t{1} << 20;
    // Where ranks share GPUs (through MPS) every put takes that form: every block of the put
    // kernel waits for the peer on a multiprocessor, and the puts of several ranks can fill a GPU
    // while the kernel a peer must finish before its own put waits for room there, so that
    // neither goes on. The meeting, telling and waiting kernels hold one warp each. (Decided by the
    // device map, IpcReach: a pointer opened from a peer's GPU reports this process's device.)
    const bool shared_gpus_;

    void launch(const PutFaces<T>& puts, int count, bool beside_work) {
        // HaloExchange::transfer calls with at least one face.
        std::size_t most_bytes = 0;
        for (int f = 0; f < count; ++f) {
            const PutFace<T>& p = puts.face[f];
            most_bytes = std::max(most_bytes, sizeof(T) * p.nx * p.ny.divisor() * p.planes);
        }
        if ((beside_work && most_bytes >= kCopyEngineBytes) || shared_gpus_) {
            const dim3 faces(1, static_cast<unsigned>(count));
            peer_meet<T><<<faces, 32, 0, boundary_stream()>>>(puts);
            GRIDSIM_CUDA_CHECK(cudaGetLastError());
            // The faces in reverse order, each told as soon as it is copied: of an axis the upper
            // face first, which lands in the peer's lower halo, the one the first blocks of a
            // pipelined pass (chunks from the bottom up) wait for.
            for (int f = count - 1; f >= 0; --f) {
                copy_face(puts.face[f]);
                peer_tell<T><<<1, 1, 0, boundary_stream()>>>(puts, f);
                GRIDSIM_CUDA_CHECK(cudaGetLastError());
            }
            peer_await<T><<<faces, 1, 0, boundary_stream()>>>(puts);
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
std::unique_ptr<Transport<T>> make_ipc_transport(const TransportArgs<T>& args) {
    return std::make_unique<IpcTransport<T>>(args.comm, *args.backend, *args.faces, args.ipc,
                                             *args.fields);
}
template std::unique_ptr<Transport<float>> make_ipc_transport(const TransportArgs<float>&);
template std::unique_ptr<Transport<double>> make_ipc_transport(const TransportArgs<double>&);

// Every rank reaches every other: the sums go by mailboxes. Else some pair cannot (Simulation
// then refuses a neighbour that cannot be reached), and NCCL must take the sums over the ranks.
std::string ipc_refusal(const RankGpuFacts& facts) {
    if (facts.ipc_gap.empty()) return {};
    if (facts.nccl_built && facts.own_gpus) return {};
    return facts.ipc_gap +
           (facts.nccl_built ? ", and NCCL cannot take the sums over the ranks (ranks share GPUs)"
                             : ", and this build has no NCCL to take the sums over the ranks") +
           "; use \"staged\"";
}

}  // namespace gridsim
