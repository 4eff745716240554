// Halo exchange of face layers (no edges or corners: the stencils are stars). Each step the
// solver packs the faces of the new field, starts the transport, does other work, then waits
// and unpacks into the halos. Transports sit behind one interface (DESIGN.md section 5).
#pragma once

#include <memory>
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
    int peer = MPI_PROC_NULL;  // rank across the face (may be this rank: periodic, one block)
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
    // Begins moving every face's send buffer to its peer and its peer's into recv buffer.
    virtual void start(std::vector<HaloFace<T>>& faces) = 0;
    // Returns when every recv buffer is filled and every send buffer may be reused.
    virtual void wait() = 0;
};

// `staged` for host-resident buffers: MPI_Irecv/MPI_Isend straight from them. A message's tag
// is the face it leaves through, so the receiver expects the opposite of its own face.
template <class T>
class HostMpiTransport final : public Transport<T> {
public:
    explicit HostMpiTransport(MPI_Comm comm) : comm_(comm) {}
    ~HostMpiTransport() override {
        // Never leave requests behind (an exception between start and wait): complete them.
        if (!requests_.empty())
            MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    }
    [[nodiscard]] const char* name() const override { return "staged"; }

    void start(std::vector<HaloFace<T>>& faces) override {
        requests_.assign(2 * faces.size(), MPI_REQUEST_NULL);
        for (std::size_t f = 0; f < faces.size(); ++f) {
            HaloFace<T>& h = faces[f];
            GRIDSIM_MPI_CHECK(MPI_Irecv(h.recv_buf.data(), h.count(), mpi_type<T>(), h.peer,
                                        opposite_face(h.face), comm_, &requests_[2 * f]));
        }
        for (std::size_t f = 0; f < faces.size(); ++f) {
            HaloFace<T>& h = faces[f];
            GRIDSIM_MPI_CHECK(MPI_Isend(h.send_buf.data(), h.count(), mpi_type<T>(), h.peer, h.face,
                                        comm_, &requests_[2 * f + 1]));
        }
    }
    void wait() override {
        GRIDSIM_MPI_CHECK(
            MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
        requests_.clear();
    }

private:
    MPI_Comm comm_;
    std::vector<MPI_Request> requests_;
};

template <class T>
class HaloExchange {
public:
    HaloExchange(const CartTopology& topo, int halo, Backend<T>& backend,
                 std::unique_ptr<Transport<T>> transport)
        : backend_(backend), transport_(std::move(transport)) {
        const Subdomain& sub = topo.subdomain();
        for (int face = 0; face < 2 * sub.dims; ++face) {
            if (!sub.has_neighbour[face]) continue;
            HaloFace<T> h;
            h.face = face;
            h.peer = topo.neighbour(face);
            h.send = send_box(sub, face, halo);
            h.recv = recv_box(sub, face, halo);
            h.send_buf = backend.allocate(h.send.count());
            h.recv_buf = backend.allocate(h.recv.count());
            faces_.push_back(std::move(h));
        }
    }

    [[nodiscard]] const char* transport_name() const { return transport_->name(); }
    // Bytes this rank sends per exchange (all faces).
    [[nodiscard]] std::size_t bytes_sent() const {
        std::size_t b = 0;
        for (const auto& h : faces_) b += h.send.count() * sizeof(T);
        return b;
    }

    void pack(FieldView<const T> u) {
        for (auto& h : faces_) backend_.pack(u, h.send, h.send_buf.data(), Lane::boundary);
    }
    void start() {
        backend_.wait(Lane::boundary);  // the packed faces must be complete before they travel
        transport_->start(faces_);
    }
    void wait() { transport_->wait(); }
    void unpack(FieldView<T> u) {
        for (auto& h : faces_) backend_.unpack(h.recv_buf.data(), u, h.recv, Lane::boundary);
    }
    // All four phases back to back (initialisation, tests).
    void exchange(FieldView<T> u) {
        pack(u);
        start();
        wait();
        unpack(u);
        backend_.wait(Lane::boundary);
    }

private:
    Backend<T>& backend_;
    std::unique_ptr<Transport<T>> transport_;
    std::vector<HaloFace<T>> faces_;
};

}  // namespace gridsim
