// The MPI halo transports: MPI_Irecv/MPI_Isend between ranks, device buffers staged through
// page-locked host buffers (`staged`) or given to a CUDA-aware MPI as they are (`cuda-aware`).
#include <memory>
#include <string>
#include <vector>

#include "parallel/collectives.hpp"
#include "parallel/mpi_check.hpp"
#include "parallel/transport.hpp"

namespace gridsim {

namespace {

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
    [[nodiscard]] bool host_steps() const override { return true; }

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

}  // namespace

template <class T>
std::unique_ptr<Transport<T>> make_mpi_transport(const TransportArgs<T>& args) {
    return std::make_unique<MpiTransport<T>>(args.comm, *args.backend,
                                             args.kind == TransportKind::cuda_aware, *args.faces);
}
template std::unique_ptr<Transport<float>> make_mpi_transport(const TransportArgs<float>&);
template std::unique_ptr<Transport<double>> make_mpi_transport(const TransportArgs<double>&);

std::string staged_refusal(const RankGpuFacts& /*facts*/) { return {}; }

std::string cuda_aware_refusal(const RankGpuFacts& facts) {
    return facts.cuda_aware ? std::string()
                            : "needs a CUDA-aware MPI, and this one says it is not "
                              "(MPIX_Query_cuda_support); use \"staged\" or \"nccl\"";
}

}  // namespace gridsim
