// What moves halo faces between ranks: the interface every transport implements (staged and
// CUDA-aware MPI, NCCL, ipc), the faces it moves, and which transport each face takes where the
// faces of a rank take different ones (a route per neighbour: parallel/peer_routes.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include <mpi.h>

#include "kernels/backend.hpp"
#include "mesh/domain.hpp"
#include "parallel/peer_routes.hpp"

namespace gridsim {

// A buffer another object owns (HaloExchange keeps a face's buffers): its data, as Buffer's.
template <class T>
struct BufferRef {
    T* ptr = nullptr;
    [[nodiscard]] T* data() const { return ptr; }
};

// One face that has a neighbour: what it sends and receives, and its contiguous buffers (in
// backend memory, owned by the HaloExchange). Copies name the same buffers.
template <class T>
struct HaloFace {
    int face = 0;
    int peer = MPI_PROC_NULL;  // rank across the face (another rank)
    Box send;
    Box recv;
    BufferRef<T> send_buf;
    BufferRef<T> recv_buf;
    [[nodiscard]] int count() const { return static_cast<int>(send.count()); }
};

template <class T>
class Transport {
public:
    Transport() = default;
    Transport(const Transport&) = delete;
    Transport& operator=(const Transport&) = delete;
    virtual ~Transport() = default;
    [[nodiscard]] virtual const char* name() const = 0;
    // Moves the packed send buffer of faces[first, last) to its peer (another rank) and the
    // peer's into the recv buffer. Called after packing was issued on the boundary lane;
    // unpacking issued after it on the same lane sees the received data. `beside_work`: other
    // work (a split sweep's or pass's interior) holds the device meanwhile.
    virtual void exchange(std::vector<HaloFace<T>>& faces, std::size_t first, std::size_t last,
                          bool beside_work) = 0;
    // Whether exchange() waits for the device and calls MPI on the host (then a step cannot be
    // recorded and replayed as a CUDA graph).
    [[nodiscard]] virtual bool host_steps() const { return true; }
    // Whether allreduce_sum_on_lane() works (NCCL); otherwise the caller sums on the host.
    [[nodiscard]] virtual bool reduces_on_device() const { return false; }
    // Which of the fields registered with the transport (by their data) `data` is, or -1: a
    // registered field's faces go by exchange_field().
    [[nodiscard]] virtual int field_index(const T* /*data*/) const { return -1; }
    // Whether exchange_field() stores face f (an index into the faces given) of a registered
    // field straight from the field into the peer's, with no pack and no unpack; else it is
    // packed and unpacked and moves as exchange() moves it.
    [[nodiscard]] virtual bool stores_face(std::size_t /*f*/) const { return false; }
    // Moves faces[first, last) of registered field `field`: those stores_face() names from our
    // field's send box straight into the receive box of the peer's same field (and the peer's
    // into ours), the others as exchange() does; ordered on the boundary lane as exchange() is.
    virtual void exchange_field(int /*field*/, std::vector<HaloFace<T>>& /*faces*/,
                                std::size_t /*first*/, std::size_t /*last*/, bool /*beside_work*/) {
        throw std::logic_error("this transport stores into no field");
    }
    // Sums `count` doubles over all ranks in place, in backend memory, ordered on the boundary
    // lane.
    virtual void allreduce_sum_on_lane(double* /*values*/, int /*count*/) {}
    // Whether a pipelined pass may wait for the registered fields' faces that stores_face()
    // names: face f's counters (arrival_words) tell when the peer's stores into our halo land.
    [[nodiscard]] virtual bool tells_arrivals() const { return false; }
    // Face f's counters in device memory: `ready`, the exchanges whose data the peer has stored
    // into our memory (raised by the peer), and `base` (HaloArrivals).
    struct ArrivalWords {
        const unsigned long long* ready = nullptr;
        const unsigned long long* base = nullptr;
    };
    [[nodiscard]] virtual ArrivalWords arrival_words(std::size_t /*f*/) const { return {}; }
    // Sets every face's base to its ready less `pass`, on `lane`, after a join of the lanes (every
    // exchange so far has landed): pass `pass` of the pipeline that starts there needs nothing
    // more.
    virtual void restart_arrivals(unsigned long long /*pass*/, Lane /*lane*/) {
        throw std::logic_error("this transport tells no arrivals");
    }
};

// How a rank's faces travel where they take different transports: each face's, by face number
// (only the faces with a neighbour on another rank are read), and the transports some rank of the
// run uses, the same list on every rank (each is made on every rank, in this order: making NCCL's
// and ipc's is collective); `sums`, where the sums over the ranks go (the transport the run
// would take for every face).
struct FaceRoutes {
    std::array<TransportKind, 6> face{};
    std::vector<TransportKind> kinds;
    TransportKind sums = TransportKind::staged;
    [[nodiscard]] bool mixed() const { return kinds.size() > 1; }
};

template <class T>
std::unique_ptr<Transport<T>> make_nccl_transport(MPI_Comm comm, Backend<T>& backend,
                                                  const std::vector<HaloFace<T>>& faces);
// Collective over `comm`. Every face goes by direct stores into the peer's GPU; the sums over
// the ranks too where every rank reaches every other (`reach`, the same on every rank), else
// through NCCL. `fields` (the same number on every rank, each its own allocation, every
// rank exchanging the same one at a time): their faces go straight from field to field.
template <class T>
std::unique_ptr<Transport<T>> make_ipc_transport(MPI_Comm comm, Backend<T>& backend,
                                                 const std::vector<HaloFace<T>>& faces,
                                                 IpcReach reach,
                                                 const std::vector<FieldView<T>>& fields);

// Any transport by kind, over `faces` (collective for nccl and ipc): the factories above, or
// MPI (staged, or device buffers straight to a CUDA-aware MPI).
template <class T>
std::unique_ptr<Transport<T>> make_transport(TransportKind kind, MPI_Comm comm, Backend<T>& backend,
                                             const std::vector<HaloFace<T>>& faces, IpcReach ipc,
                                             const std::vector<FieldView<T>>& fields);

}  // namespace gridsim
