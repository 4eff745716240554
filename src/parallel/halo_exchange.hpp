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
#include "parallel/face_mirrors.hpp"
#include "parallel/routed_transport.hpp"
#include "parallel/transport.hpp"

namespace gridsim {

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
    // straight into the neighbour's copy of them: see make_ipc_transport). `routes`, where the
    // faces take different transports (a route per neighbour), replaces `transport`.
    HaloExchange(const CartTopology& topo, int halo, Backend<T>& backend,
                 TransportKind transport = TransportKind::staged, IpcReach ipc = {},
                 const std::vector<FieldView<T>>& fields = {}, const FaceRoutes* routes = nullptr)
        : backend_(backend), halo_(halo), groups_(halo > 1 ? topo.subdomain().dims : 1) {
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
            buffers_.push_back(backend.allocate(h.send.count()));
            h.send_buf.ptr = buffers_.back().data();
            buffers_.push_back(backend.allocate(h.recv.count()));
            h.recv_buf.ptr = buffers_.back().data();
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
        if (routes != nullptr && routes->mixed()) {
            auto routed = std::make_unique<RoutedTransport<T>>(topo.comm(), backend, remote_,
                                                               *routes, ipc, fields);
            counts_ = routed->counts();
            transport_ = std::move(routed);
        } else {
            if (routes != nullptr && !routes->kinds.empty()) transport = routes->kinds.front();
            transport_ =
                make_transport<T>({transport, topo.comm(), &backend, &remote_, ipc, &fields});
            counts_ = {{transport, static_cast<int>(remote_.size())}};
        }
        stores_ = transport_->field_stores();
        sums_ = transport_->device_sums();
        arrivals_ = stores_ != nullptr ? transport_->arrivals() : nullptr;
        for (Group& g : groups_) {
            for (std::size_t f = g.first; f < g.last; ++f) {
                if (stored(f)) continue;
                g.field_packs.add(remote_[f].send, remote_[f].send_buf.data());
                g.field_unpacks.add(remote_[f].recv, remote_[f].recv_buf.data());
            }
        }
    }

    // After every exchange, the `layers` halo layers beyond each fixed face of `sub` (a Dirichlet
    // face of the domain) from the points mirrored through the face (Backend::reflect): the
    // points that stars wider than one point read there (README, "Deck keys", problem.order),
    // as far into the neighbours' halos as they go (the sweeps of a time block update points
    // there). The last group's unpack reflects them, after every halo beside them is in; a
    // sweep that no exchange follows reflects its field itself (reflect()).
    void reflect_fixed_faces(const Subdomain& sub, int layers) {
        if (layers < 1) return;
        mirrors_ = fixed_face_mirrors<T>(sub, layers, halo_);
        for (int face = 0; face < 2 * sub.dims; ++face) {
            if (sub.fixed_face[face]) read_boxes_.push_back(send_box(sub, face, layers + 1));
        }
    }

    // The layers reflect_fixed_faces() set up, of `u` on the boundary lane, from its points as
    // they are: what a sweep of a time block, which no exchange follows, does for the next.
    void reflect(FieldView<T> u) {
        if (!mirrors_.empty()) backend_.reflect(u, mirrors_, Lane::boundary);
    }
    // Those layers, for the levels of a pass (TimeBlocking::apply_levels); empty for a star of
    // radius 1.
    [[nodiscard]] const FaceMoves<T>& reflections() const { return mirrors_; }

    [[nodiscard]] const char* transport_name() const { return transport_->name(); }
    // How many of this rank's faces each transport moves.
    [[nodiscard]] const std::vector<std::pair<TransportKind, int>>& route_counts() const {
        return counts_;
    }
    // Whether the sums over the ranks go on the device (Transport::device_sums), and how ("nccl",
    // "ipc"; "" where not).
    [[nodiscard]] bool reduces_on_device() const { return sums_ != nullptr; }
    [[nodiscard]] const char* sums_route() const { return sums_ != nullptr ? sums_->route() : ""; }
    // Whether a step's exchange runs without the host: no face goes to another rank, or the
    // transport issues its messages on the boundary lane (NCCL).
    [[nodiscard]] bool host_free() const { return remote_.empty() || !transport_->host_steps(); }
    // Whether no face goes to another rank (every halo is a physical boundary or a self-copy).
    [[nodiscard]] bool local_only() const { return remote_.empty(); }
    // How many of this rank's faces the transport stores straight into the peer's field (for a
    // registered field; FieldStores::stores_face).
    [[nodiscard]] int faces_stored() const {
        int n = 0;
        for (std::size_t f = 0; f < remote_.size(); ++f) n += stored(f) ? 1 : 0;
        return n;
    }
    // Every box of a field an exchange reads (the faces it sends and those it copies into its
    // own halos), halos included: a pass must have written their owned points before it starts.
    [[nodiscard]] const std::vector<Box>& read_boxes() const { return read_boxes_; }
    // The axes (bit d: axis d) whose halos this rank copies from its own opposite faces.
    [[nodiscard]] unsigned self_axes() const { return self_axes_; }
    // Only where reduces_on_device().
    void allreduce_sum_on_lane(double* values, int count) {
        sums_->allreduce_sum_on_lane(values, count);
    }
    // Whether a pipelined pass may exchange `u` (a field of `dims` dimensions): every face goes
    // to another rank across the last axis, stored straight into the peer's field by a transport
    // that tells its arrivals, and no halo is packed, unpacked or copied from this rank's own
    // faces.
    [[nodiscard]] bool pipelines(FieldView<const T> u, int dims) const {
        if (remote_.empty() || self_axes_ != 0 || !mirrors_.empty() || arrivals_ == nullptr ||
            !registered(u))
            return false;
        for (std::size_t f = 0; f < remote_.size(); ++f) {
            if (face_axis(remote_[f].face) != dims - 1 || !stored(f)) return false;
        }
        return true;
    }
    // The counters a pipelined pass over a block of `owned` planes along the last axis waits on
    // (only where pipelines()).
    [[nodiscard]] HaloArrivals arrivals(int owned) const {
        HaloArrivals a;
        a.lo = 0;
        a.hi = owned;
        for (std::size_t f = 0; f < remote_.size(); ++f) {
            const auto words = arrivals_->words(f);
            const int side = remote_[f].face % 2;
            a.ready[side] = words.ready;
            a.base[side] = words.base;
        }
        return a;
    }
    // Only where pipelines().
    void restart_arrivals(unsigned long long pass, Lane lane) { arrivals_->restart(pass, lane); }
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
        return !unpacks_of(u, g).empty() || !groups_[g].wrap.empty() || reflects(g);
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
        if (const int f = field_of(u); f >= 0) {
            stores_->exchange_field(f, remote_, grp.first, grp.last, beside_work);
        } else {
            transport_->exchange(remote_, grp.first, grp.last, beside_work);
        }
    }
    void unpack(FieldView<T> u, int g = 0) {
        const FaceMoves<T>& m = unpacks_of(u, g);
        if (!m.empty()) backend_.unpack(u, m, Lane::boundary);
        if (!groups_[g].wrap.empty()) backend_.wrap(u, groups_[g].wrap, Lane::boundary);
        if (reflects(g)) backend_.reflect(u, mirrors_, Lane::boundary);
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
    [[nodiscard]] bool reflects(int g) const { return g == groups() - 1 && !mirrors_.empty(); }
    // Which field registered with the transport `u` is, or -1.
    [[nodiscard]] int field_of(FieldView<const T> u) const {
        return stores_ != nullptr ? stores_->field_index(u.data) : -1;
    }
    [[nodiscard]] bool registered(FieldView<const T> u) const { return field_of(u) >= 0; }
    [[nodiscard]] bool stored(std::size_t f) const {
        return stores_ != nullptr && stores_->stores_face(f);
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
    int halo_;  // layers per face
    std::unique_ptr<Transport<T>> transport_;
    // Its capabilities, asked once (nullptr where absent).
    FieldStores<T>* stores_ = nullptr;
    DeviceSums* sums_ = nullptr;
    ArrivalSignals* arrivals_ = nullptr;
    std::vector<Buffer<T>> buffers_;   // the send and receive buffers of remote_'s faces
    std::vector<HaloFace<T>> remote_;  // faces exchanged through the transport, by face
    std::vector<std::pair<TransportKind, int>> counts_;  // route_counts()
    std::vector<Group> groups_;  // one, or one per axis (halos deeper than one)
    unsigned self_axes_ = 0;
    FaceMoves<T> mirrors_;         // reflect_fixed_faces()
    std::vector<Box> read_boxes_;  // read_boxes()
    std::uint64_t transfers_issued_ = 0;
};

}  // namespace gridsim
