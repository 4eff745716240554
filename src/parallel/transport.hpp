// What moves halo faces between ranks: the interface every transport implements (a small core and
// capabilities), the faces it moves, which transport each face takes where the faces of a rank
// take different ones (a route per neighbour: parallel/peer_routes.hpp), and the transports'
// factories and refusals, by the rows of parallel/transport_table.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <mpi.h>

#include "kernels/backend.hpp"
#include "mesh/domain.hpp"
#include "parallel/peer_routes.hpp"
#include "parallel/transport_table.hpp"

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

// A capability (Transport::device_sums(), nullptr where absent: the caller sums on the host):
// sums over the ranks in backend memory.
class DeviceSums {
public:
    DeviceSums() = default;
    DeviceSums(const DeviceSums&) = delete;
    DeviceSums& operator=(const DeviceSums&) = delete;
    virtual ~DeviceSums() = default;
    // Sums `count` doubles over all ranks in place, in backend memory, ordered on the boundary
    // lane.
    virtual void allreduce_sum_on_lane(double* values, int count) = 0;
    // How the sums go, as the report names it: "nccl" or "ipc".
    [[nodiscard]] virtual const char* route() const = 0;
};

// A capability (Transport::field_stores(), nullptr where absent: every face is packed and
// unpacked): faces of the fields registered with the transport (by their data) go straight from
// field to field.
template <class T>
class FieldStores {
public:
    FieldStores() = default;
    FieldStores(const FieldStores&) = delete;
    FieldStores& operator=(const FieldStores&) = delete;
    virtual ~FieldStores() = default;
    // Which registered field `data` is, or -1: a registered field's faces go by exchange_field().
    [[nodiscard]] virtual int field_index(const T* data) const = 0;
    // Whether exchange_field() stores face f (an index into the faces given) of a registered
    // field straight from the field into the peer's, with no pack and no unpack; else it is
    // packed and unpacked and moves as Transport::exchange() moves it.
    [[nodiscard]] virtual bool stores_face(std::size_t f) const = 0;
    // Moves faces[first, last) of registered field `field`: those stores_face() names from our
    // field's send box straight into the receive box of the peer's same field (and the peer's
    // into ours), the others as exchange() does; ordered on the boundary lane as exchange() is.
    virtual void exchange_field(int field, std::vector<HaloFace<T>>& faces, std::size_t first,
                                std::size_t last, bool beside_work) = 0;
};

// A capability (Transport::arrivals(), nullptr where absent): a pipelined pass may wait for the
// registered fields' faces that FieldStores::stores_face() names, as face f's counters tell
// when the peer's stores into our halo land.
class ArrivalSignals {
public:
    ArrivalSignals() = default;
    ArrivalSignals(const ArrivalSignals&) = delete;
    ArrivalSignals& operator=(const ArrivalSignals&) = delete;
    virtual ~ArrivalSignals() = default;
    // Face f's counters in device memory: `ready`, the exchanges whose data the peer has stored
    // into our memory (raised by the peer), and `base` (HaloArrivals).
    struct Words {
        const unsigned long long* ready = nullptr;
        const unsigned long long* base = nullptr;
    };
    [[nodiscard]] virtual Words words(std::size_t f) const = 0;
    // Sets every face's base to its ready less `pass`, on `lane`, after a join of the lanes (every
    // exchange so far has landed): pass `pass` of the pipeline that starts there needs nothing
    // more.
    virtual void restart(unsigned long long pass, Lane lane) = 0;
};

// What moves halo faces between ranks: a small core (move packed faces, say whether the host
// takes part) and capabilities as nullable pointers, asked once by HaloExchange.
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
    [[nodiscard]] virtual bool host_steps() const = 0;
    [[nodiscard]] virtual DeviceSums* device_sums() { return nullptr; }
    [[nodiscard]] virtual FieldStores<T>* field_stores() { return nullptr; }
    [[nodiscard]] virtual ArrivalSignals* arrivals() { return nullptr; }
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

// What a transport's factory gets (collective over `comm` for nccl and ipc). `ipc`, `fields`: as
// the ipc transport uses them (make_ipc_transport); other transports ignore them.
template <class T>
struct TransportArgs {
    TransportKind kind = TransportKind::staged;
    MPI_Comm comm = MPI_COMM_NULL;
    Backend<T>* backend = nullptr;
    const std::vector<HaloFace<T>>* faces = nullptr;
    IpcReach ipc{};
    const std::vector<FieldView<T>>* fields = nullptr;
};

// Every row's factory and refusal (parallel/transport_table.hpp), each defined in its
// transport's file.
#define GRIDSIM_TRANSPORT_DECLARE(id, name, memory, sums, factory, refusal, meaning) \
    template <class T>                                                               \
    std::unique_ptr<Transport<T>> factory(const TransportArgs<T>& args);             \
    std::string refusal(const RankGpuFacts& facts);
GRIDSIM_TRANSPORTS(GRIDSIM_TRANSPORT_DECLARE)
#undef GRIDSIM_TRANSPORT_DECLARE

// The transport of args.kind, made by its row's factory.
template <class T>
std::unique_ptr<Transport<T>> make_transport(const TransportArgs<T>& args) {
    switch (args.kind) {
#define GRIDSIM_TRANSPORT_MAKE(id, name, memory, sums, factory, refusal, meaning) \
    case TransportKind::id:                                                       \
        return factory<T>(args);
        GRIDSIM_TRANSPORTS(GRIDSIM_TRANSPORT_MAKE)
#undef GRIDSIM_TRANSPORT_MAKE
        case TransportKind::automatic:
            break;
    }
    throw std::logic_error("make_transport: \"auto\" is resolved before a transport is made");
}

// An NCCL transport that moves no faces, for the sums over the ranks alone (DeviceSums).
template <class T>
std::unique_ptr<Transport<T>> make_nccl_sums(MPI_Comm comm, Backend<T>& backend) {
    const std::vector<HaloFace<T>> no_faces;
    const std::vector<FieldView<T>> no_fields;
    return make_transport<T>({TransportKind::nccl, comm, &backend, &no_faces, {}, &no_fields});
}

// "" where a GPU run with `facts` may take `kind` (parallel.transport), else why not: its row's
// refusal.
inline std::string transport_refusal(TransportKind kind, const RankGpuFacts& facts) {
    switch (kind) {
#define GRIDSIM_TRANSPORT_REFUSE(id, name, memory, sums, factory, refusal, meaning) \
    case TransportKind::id:                                                         \
        return refusal(facts);
        GRIDSIM_TRANSPORTS(GRIDSIM_TRANSPORT_REFUSE)
#undef GRIDSIM_TRANSPORT_REFUSE
        case TransportKind::automatic:
            break;
    }
    return {};
}

}  // namespace gridsim
