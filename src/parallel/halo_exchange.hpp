// Halo exchange of face layers. Each exchange the solver packs the faces of the new field,
// transfers them, and unpacks into the halos, all on the boundary lane, one launch per phase;
// a transport that stores straight into the neighbour's field (ipc: faces of long rows of the
// fields the solver registers) needs neither the pack nor the unpack for those faces.
// One-deep halos need no edges or corners (the stencils are stars); deeper ones (temporal
// blocking) do, and get them by moving one axis after another, each axis's faces widened over
// the halos the axes before it filled. Transports sit behind one interface
// (docs/architecture.md, "One step").
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "kernels/backend.hpp"
#include "parallel/cart_topology.hpp"
#include "parallel/collectives.hpp"
#include "parallel/mpi_check.hpp"
#include "parallel/peer_routes.hpp"

namespace gridsim {

// One face that has a neighbour: what it sends and receives, and its contiguous buffers (in
// backend memory).
template <class T>
struct HaloFace {
    int face = 0;
    int peer = MPI_PROC_NULL;  // rank across the face (another rank)
    Box send;
    Box recv;
    Buffer<T> send_buf;
    Buffer<T> recv_buf;
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

// MPI_Irecv/MPI_Isend between ranks. `staged`: device buffers go through page-locked host
// copies (asynchronous copies on the boundary lane); host buffers (CPU backend) and device
// buffers given to a CUDA-aware MPI (`direct`) go to MPI as they are. A message's tag is the
// face it leaves through, so the receiver expects the opposite of its own face.
template <class T>
class MpiTransport final : public Transport<T> {
public:
    MpiTransport(MPI_Comm comm, Backend<T>& backend, bool direct,
                 const std::vector<HaloFace<T>>& faces)
        : comm_(comm), backend_(backend), stage_(backend.on_device() && !direct), direct_(direct) {
        if (!stage_) return;
        for (const auto& h : faces) {
            host_send_.push_back(backend.allocate_host(h.send.count()));
            host_recv_.push_back(backend.allocate_host(h.recv.count()));
        }
    }
    [[nodiscard]] const char* name() const override { return direct_ ? "cuda-aware" : "staged"; }

    void exchange(std::vector<HaloFace<T>>& faces, std::size_t first, std::size_t last,
                  bool /*beside_work*/) override {
        if (stage_) {
            for (std::size_t f = first; f < last; ++f) {
                backend_.copy(host_send_[f].data(), faces[f].send_buf.data(), faces[f].count(),
                              Lane::boundary);
            }
        }
        backend_.wait(Lane::boundary);  // MPI reads the packed (and staged) data from here on
        std::vector<MPI_Request> requests(2 * (last - first), MPI_REQUEST_NULL);
        for (std::size_t f = first; f < last; ++f) {
            T* recv = stage_ ? host_recv_[f].data() : faces[f].recv_buf.data();
            GRIDSIM_MPI_CHECK(MPI_Irecv(recv, faces[f].count(), mpi_type<T>(), faces[f].peer,
                                        opposite_face(faces[f].face), comm_,
                                        &requests[2 * (f - first)]));
        }
        for (std::size_t f = first; f < last; ++f) {
            T* send = stage_ ? host_send_[f].data() : faces[f].send_buf.data();
            GRIDSIM_MPI_CHECK(MPI_Isend(send, faces[f].count(), mpi_type<T>(), faces[f].peer,
                                        faces[f].face, comm_, &requests[2 * (f - first) + 1]));
        }
        GRIDSIM_MPI_CHECK(
            MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
        if (!stage_) return;
        for (std::size_t f = first; f < last; ++f) {
            backend_.copy(faces[f].recv_buf.data(), host_recv_[f].data(), faces[f].count(),
                          Lane::boundary);
        }
    }

private:
    MPI_Comm comm_;
    Backend<T>& backend_;
    bool stage_;
    bool direct_;
    std::vector<Buffer<T>> host_send_;  // page-locked mirrors of the device buffers (staged)
    std::vector<Buffer<T>> host_recv_;
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

// The faces of a rank's block that have a neighbour, moved in one launch per phase: pack (every
// face sent to another rank into its buffer), transfer (the transport), unpack (every received
// buffer into its halo, and every halo whose neighbour is this rank itself, a periodic axis held
// by one rank, straight from the opposite face of the same field: no buffer, no message). Halos
// deeper than one go axis by axis (a group of the three phases per axis), so that each axis's
// faces carry the edges and corners of the axes before it.
template <class T>
class HaloExchange {
public:
    // `transport`: staged, cuda_aware (device buffers straight to a CUDA-aware MPI), nccl, or
    // ipc (stores into the neighbour's memory; `ipc` and `fields`, the fields whose faces go
    // straight into the neighbour's copy of them: see make_ipc_transport).
    HaloExchange(const CartTopology& topo, int halo, Backend<T>& backend,
                 TransportKind transport = TransportKind::staged, IpcReach ipc = {},
                 const std::vector<FieldView<T>>& fields = {})
        : backend_(backend), groups_(halo > 1 ? topo.subdomain().dims : 1) {
        const Subdomain& sub = topo.subdomain();
        for (int face = 0; face < 2 * sub.dims; ++face) {
            if (!sub.has_neighbour[face]) continue;
            Group& g = groups_[halo > 1 ? face_axis(face) : 0];
            auto box = [&](const Box& b, int f) {
                return halo > 1 ? with_corners(b, sub, f, halo) : b;
            };
            const Box recv = box(recv_box(sub, face, halo), face);
            if (topo.neighbour(face) == topo.rank()) {
                self_axes_ |= 1u << face_axis(face);
                // The halo beyond this face is the owned layer at the opposite face.
                const Box source = box(send_box(sub, opposite_face(face), halo), face);
                g.wrap.add(recv, nullptr,
                           {source.lo[0] - recv.lo[0], source.lo[1] - recv.lo[1],
                            source.lo[2] - recv.lo[2]});
                read_boxes_.push_back(source);
                continue;
            }
            HaloFace<T> h;
            h.face = face;
            h.peer = topo.neighbour(face);
            h.send = box(send_box(sub, face, halo), face);
            h.recv = recv;
            h.send_buf = backend.allocate(h.send.count());
            h.recv_buf = backend.allocate(h.recv.count());
            read_boxes_.push_back(h.send);
            g.packs.add(h.send, h.send_buf.data());
            g.unpacks.add(h.recv, h.recv_buf.data());
            remote_.push_back(std::move(h));
            g.last = remote_.size();
        }
        // Faces were taken in order, so each group's remote faces are one run of remote_.
        std::size_t first = 0;
        for (Group& g : groups_) {
            g.first = first;
            g.last = std::max(g.last, first);
            first = g.last;
        }
        if (transport == TransportKind::nccl) {
            transport_ = make_nccl_transport<T>(topo.comm(), backend, remote_);
        } else if (transport == TransportKind::ipc) {
            transport_ = make_ipc_transport<T>(topo.comm(), backend, remote_, ipc, fields);
        } else {
            transport_ = std::make_unique<MpiTransport<T>>(
                topo.comm(), backend, transport == TransportKind::cuda_aware, remote_);
        }
        for (Group& g : groups_) {
            for (std::size_t f = g.first; f < g.last; ++f) {
                if (transport_->stores_face(f)) continue;
                g.field_packs.add(remote_[f].send, remote_[f].send_buf.data());
                g.field_unpacks.add(remote_[f].recv, remote_[f].recv_buf.data());
            }
        }
    }

    [[nodiscard]] const char* transport_name() const { return transport_->name(); }
    [[nodiscard]] bool reduces_on_device() const { return transport_->reduces_on_device(); }
    // Whether a step's exchange runs without the host: no face goes to another rank, or the
    // transport issues its messages on the boundary lane (NCCL).
    [[nodiscard]] bool host_free() const { return remote_.empty() || !transport_->host_steps(); }
    // Whether no face goes to another rank (every halo is a physical boundary or a self-copy).
    [[nodiscard]] bool local_only() const { return remote_.empty(); }
    // How many of this rank's faces the transport stores straight into the peer's field (for a
    // registered field; Transport::stores_face).
    [[nodiscard]] int faces_stored() const {
        int n = 0;
        for (std::size_t f = 0; f < remote_.size(); ++f) n += transport_->stores_face(f) ? 1 : 0;
        return n;
    }
    // Every box of a field an exchange reads (the faces it sends and those it copies into its
    // own halos), halos included: a pass must have written their owned points before it starts.
    [[nodiscard]] const std::vector<Box>& read_boxes() const { return read_boxes_; }
    // The axes (bit d: axis d) whose halos this rank copies from its own opposite faces.
    [[nodiscard]] unsigned self_axes() const { return self_axes_; }
    void allreduce_sum_on_lane(double* values, int count) {
        transport_->allreduce_sum_on_lane(values, count);
    }
    // Whether a pipelined pass may exchange `u` (a field of `dims` dimensions): every face goes
    // to another rank across the last axis, stored straight into the peer's field by a transport
    // that tells its arrivals, and no halo is packed, unpacked or copied from this rank's own
    // faces.
    [[nodiscard]] bool pipelines(FieldView<const T> u, int dims) const {
        if (remote_.empty() || self_axes_ != 0 || !transport_->tells_arrivals() || !registered(u))
            return false;
        for (std::size_t f = 0; f < remote_.size(); ++f) {
            if (face_axis(remote_[f].face) != dims - 1 || !transport_->stores_face(f)) return false;
        }
        return true;
    }
    // The counters a pipelined pass over a block of `owned` planes along the last axis waits on
    // (where pipelines()).
    [[nodiscard]] HaloArrivals arrivals(int owned) const {
        HaloArrivals a;
        a.lo = 0;
        a.hi = owned;
        for (std::size_t f = 0; f < remote_.size(); ++f) {
            const auto words = transport_->arrival_words(f);
            const int side = remote_[f].face % 2;
            a.ready[side] = words.ready;
            a.base[side] = words.base;
        }
        return a;
    }
    void restart_arrivals(unsigned long long pass, Lane lane) {
        transport_->restart_arrivals(pass, lane);
    }
    // Transfers issued from the host so far (a recorded one counts once, when captured).
    [[nodiscard]] std::uint64_t transfers_issued() const { return transfers_issued_; }

    // The phases of group `g` (0 <= g < groups()), in order; every group after the one before.
    // A field registered with the transport packs and unpacks only the faces it does not store
    // straight into the peer's field.
    [[nodiscard]] int groups() const { return static_cast<int>(groups_.size()); }
    // Whether group `g`'s pack, transfer and unpack of `u` do any work (a phase that does none
    // is not timed: its events would report their own cost as the phase's).
    [[nodiscard]] bool packs(FieldView<const T> u, int g) const { return !packs_of(u, g).empty(); }
    [[nodiscard]] bool transfers(int g) const { return groups_[g].last != groups_[g].first; }
    [[nodiscard]] bool unpacks(FieldView<const T> u, int g) const {
        return !unpacks_of(u, g).empty() || !groups_[g].wrap.empty();
    }
    void pack(FieldView<const T> u, int g = 0) {
        const FaceMoves<T>& m = packs_of(u, g);
        if (!m.empty()) backend_.pack(u, m, Lane::boundary);
    }
    // `beside_work`: Transport::exchange's.
    void transfer(FieldView<const T> u, int g = 0, bool beside_work = false) {
        const Group& grp = groups_[g];
        if (!transfers(g)) return;
        ++transfers_issued_;
        if (const int f = transport_->field_index(u.data); f >= 0) {
            transport_->exchange_field(f, remote_, grp.first, grp.last, beside_work);
        } else {
            transport_->exchange(remote_, grp.first, grp.last, beside_work);
        }
    }
    void unpack(FieldView<T> u, int g = 0) {
        const FaceMoves<T>& m = unpacks_of(u, g);
        if (!m.empty()) backend_.unpack(u, m, Lane::boundary);
        if (!groups_[g].wrap.empty()) backend_.wrap(u, groups_[g].wrap, Lane::boundary);
    }
    // Every group's phases back to back, complete on return (initialisation, tests;
    // `beside_work`: moved as a split pass's halos are, beside its interior).
    void exchange(FieldView<T> u, bool beside_work = false) {
        for (int g = 0; g < groups(); ++g) {
            pack(u, g);
            transfer(u, g, beside_work);
            unpack(u, g);
        }
        backend_.wait(Lane::boundary);
    }

private:
    [[nodiscard]] bool registered(FieldView<const T> u) const {
        return transport_->field_index(u.data) >= 0;
    }
    [[nodiscard]] const FaceMoves<T>& packs_of(FieldView<const T> u, int g) const {
        return registered(u) ? groups_[g].field_packs : groups_[g].packs;
    }
    [[nodiscard]] const FaceMoves<T>& unpacks_of(FieldView<const T> u, int g) const {
        return registered(u) ? groups_[g].field_unpacks : groups_[g].unpacks;
    }
    struct Group {
        FaceMoves<T> packs;        // owned layers of its remote faces -> send buffers
        FaceMoves<T> unpacks;      // receive buffers -> their halos
        FaceMoves<T> field_packs;  // the same, of the faces a registered field packs
        FaceMoves<T> field_unpacks;
        FaceMoves<T> wrap;      // halos of its faces whose neighbour is this rank
        std::size_t first = 0;  // its faces in remote_: [first, last)
        std::size_t last = 0;
    };
    Backend<T>& backend_;
    std::unique_ptr<Transport<T>> transport_;
    std::vector<HaloFace<T>> remote_;  // faces exchanged through the transport, by face
    std::vector<Group> groups_;        // one, or one per axis (halos deeper than one)
    unsigned self_axes_ = 0;
    std::vector<Box> read_boxes_;  // read_boxes()
    std::uint64_t transfers_issued_ = 0;
};

}  // namespace gridsim
