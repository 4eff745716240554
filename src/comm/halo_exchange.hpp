// Halo exchange of face layers (no edges or corners: the stencils are stars). Each step the
// solver packs the faces of the new field, transfers them, and unpacks into the halos, all on
// the boundary lane, one launch per phase. Transports sit behind one interface
// (docs/architecture.md, "One step").
#pragma once

#include <memory>
#include <stdexcept>
#include <vector>

#include "comm/cart_topology.hpp"
#include "comm/mpi_check.hpp"
#include "kernels/backend.hpp"

namespace gridsim {

template <class T>
MPI_Datatype mpi_type();
template <>
inline MPI_Datatype mpi_type<float>() {
    return MPI_FLOAT;
}
template <>
inline MPI_Datatype mpi_type<double>() {
    return MPI_DOUBLE;
}

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
    // Moves every face's packed send buffer to its peer (another rank) and the peer's into the
    // recv buffer.
    // Called after packing was issued on the boundary lane; unpacking issued after it on the
    // same lane sees the received data.
    virtual void exchange(std::vector<HaloFace<T>>& faces) = 0;
    // Whether exchange() waits for the device and calls MPI on the host (then a step cannot be
    // recorded and replayed as a CUDA graph).
    [[nodiscard]] virtual bool host_steps() const { return true; }
    // Whether allreduce_sum_on_lane() works (NCCL); otherwise the caller sums on the host.
    [[nodiscard]] virtual bool reduces_on_device() const { return false; }
    // Sums `count` doubles over all ranks in place, in backend memory, ordered on the boundary
    // lane.
    virtual void allreduce_sum_on_lane(double* /*values*/, int /*count*/) {}
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

    void exchange(std::vector<HaloFace<T>>& faces) override {
        if (stage_) {
            for (std::size_t f = 0; f < faces.size(); ++f) {
                backend_.copy(host_send_[f].data(), faces[f].send_buf.data(), faces[f].count(),
                              Lane::boundary);
            }
        }
        backend_.wait(Lane::boundary);  // MPI reads the packed (and staged) data from here on
        std::vector<MPI_Request> requests(2 * faces.size(), MPI_REQUEST_NULL);
        for (std::size_t f = 0; f < faces.size(); ++f) {
            T* recv = stage_ ? host_recv_[f].data() : faces[f].recv_buf.data();
            GRIDSIM_MPI_CHECK(MPI_Irecv(recv, faces[f].count(), mpi_type<T>(), faces[f].peer,
                                        opposite_face(faces[f].face), comm_, &requests[2 * f]));
        }
        for (std::size_t f = 0; f < faces.size(); ++f) {
            T* send = stage_ ? host_send_[f].data() : faces[f].send_buf.data();
            GRIDSIM_MPI_CHECK(MPI_Isend(send, faces[f].count(), mpi_type<T>(), faces[f].peer,
                                        faces[f].face, comm_, &requests[2 * f + 1]));
        }
        GRIDSIM_MPI_CHECK(
            MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
        if (!stage_) return;
        for (std::size_t f = 0; f < faces.size(); ++f) {
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

// The faces of a rank's block that have a neighbour, moved in one launch per phase: pack (every
// face sent to another rank into its buffer), transfer (the transport), unpack (every received
// buffer into its halo, and every halo whose neighbour is this rank itself, a periodic axis held
// by one rank, straight from the opposite face of the same field: no buffer, no message).
template <class T>
class HaloExchange {
public:
    // `transport`: staged, cuda_aware (device buffers straight to a CUDA-aware MPI) or nccl.
    HaloExchange(const CartTopology& topo, int halo, Backend<T>& backend,
                 TransportKind transport = TransportKind::staged)
        : backend_(backend) {
        const Subdomain& sub = topo.subdomain();
        for (int face = 0; face < 2 * sub.dims; ++face) {
            if (!sub.has_neighbour[face]) continue;
            const Box recv = recv_box(sub, face, halo);
            if (topo.neighbour(face) == topo.rank()) {
                // The halo beyond this face is the owned layer at the opposite face.
                const Box source = send_box(sub, opposite_face(face), halo);
                wrap_.add(recv, nullptr,
                          {source.lo[0] - recv.lo[0], source.lo[1] - recv.lo[1],
                           source.lo[2] - recv.lo[2]});
                continue;
            }
            HaloFace<T> h;
            h.face = face;
            h.peer = topo.neighbour(face);
            h.send = send_box(sub, face, halo);
            h.recv = recv;
            h.send_buf = backend.allocate(h.send.count());
            h.recv_buf = backend.allocate(h.recv.count());
            packs_.add(h.send, h.send_buf.data());
            unpacks_.add(h.recv, h.recv_buf.data());
            remote_.push_back(std::move(h));
        }
        if (transport == TransportKind::nccl) {
            transport_ = make_nccl_transport<T>(topo.comm(), backend, remote_);
        } else {
            transport_ = std::make_unique<MpiTransport<T>>(
                topo.comm(), backend, transport == TransportKind::cuda_aware, remote_);
        }
    }

    [[nodiscard]] const char* transport_name() const { return transport_->name(); }
    [[nodiscard]] bool reduces_on_device() const { return transport_->reduces_on_device(); }
    // Whether a step's exchange runs without the host: no face goes to another rank, or the
    // transport issues its messages on the boundary lane (NCCL).
    [[nodiscard]] bool host_free() const { return remote_.empty() || !transport_->host_steps(); }
    void allreduce_sum_on_lane(double* values, int count) {
        transport_->allreduce_sum_on_lane(values, count);
    }

    void pack(FieldView<const T> u) {
        if (!packs_.empty()) backend_.pack(u, packs_, Lane::boundary);
    }
    void transfer() {
        if (!remote_.empty()) transport_->exchange(remote_);
    }
    void unpack(FieldView<T> u) {
        if (!unpacks_.empty()) backend_.unpack(u, unpacks_, Lane::boundary);
        if (!wrap_.empty()) backend_.wrap(u, wrap_, Lane::boundary);
    }
    // All three back to back, complete on return (initialisation, tests).
    void exchange(FieldView<T> u) {
        pack(u);
        transfer();
        unpack(u);
        backend_.wait(Lane::boundary);
    }

private:
    Backend<T>& backend_;
    std::unique_ptr<Transport<T>> transport_;
    std::vector<HaloFace<T>> remote_;  // faces exchanged through the transport
    FaceMoves<T> packs_;               // their owned layers -> send buffers
    FaceMoves<T> unpacks_;             // receive buffers -> their halos
    FaceMoves<T> wrap_;                // halos of faces whose neighbour is this rank
};

}  // namespace gridsim
