#include "parallel/nccl_transport.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "parallel/background_check.hpp"
#include "parallel/mpi_check.hpp"
#include "parallel/mpi_session.hpp"

namespace gridsim {

namespace {

#define GRIDSIM_NCCL_CHECK(expr)                                    \
    do {                                                            \
        const ncclResult_t gridsim_nccl_rc_ = (expr);               \
        if (gridsim_nccl_rc_ != ncclSuccess)                        \
            nccl_fail(gridsim_nccl_rc_, #expr, __FILE__, __LINE__); \
    } while (0)

[[noreturn]] void nccl_fail(ncclResult_t rc, const char* expr, const char* file, int line) {
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "gridsim: rank %d: NCCL error in %s at %s:%d: %s\n", rank, expr, file,
                 line, ncclGetErrorString(rc));
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
}

// How often the communicator's asynchronous error state is read (a flag read, no call into
// the GPU): a broken connection ends the rank within a fraction of a second.
constexpr double kAsyncErrorPollSeconds = 0.2;

// RAII for an NCCL communicator over the ranks of an MPI communicator. A thread polls
// ncclCommGetAsyncError: NCCL reports a failed peer connection (network, socket, a proxy that
// died) only there, while this rank's kernels keep spinning on data that will never come; on
// an error the thread names it, aborts the communicator (which makes those kernels return) and
// ends the rank (BackgroundCheck). An orderly end destroys the communicator; an end by an
// exception aborts it, since ncclCommDestroy waits for operations a failed peer never
// completes.
class NcclComm {
public:
    explicit NcclComm(MPI_Comm comm) {
        ncclUniqueId id{};
        if (comm_rank(comm) == 0) GRIDSIM_NCCL_CHECK(ncclGetUniqueId(&id));
        GRIDSIM_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm));
        GRIDSIM_NCCL_CHECK(ncclCommInitRank(&comm_, comm_size(comm), id, comm_rank(comm)));
        watch_ = std::make_unique<BackgroundCheck>(
            kAsyncErrorPollSeconds, comm_rank(MPI_COMM_WORLD),
            [c = comm_] { return async_error(c); }, [c = comm_] { ncclCommAbort(c); });
    }
    NcclComm(const NcclComm&) = delete;
    NcclComm& operator=(const NcclComm&) = delete;
    ~NcclComm() {
        watch_.reset();
        if (std::uncaught_exceptions() > 0) {
            ncclCommAbort(comm_);
        } else {
            ncclCommDestroy(comm_);
        }
    }
    [[nodiscard]] ncclComm_t get() const { return comm_; }

private:
    // "" while the communicator is healthy, else what went wrong.
    static std::string async_error(ncclComm_t comm) {
        ncclResult_t state = ncclSuccess;
        const ncclResult_t rc = ncclCommGetAsyncError(comm, &state);
        if (rc != ncclSuccess) state = rc;
        if (state == ncclSuccess || state == ncclInProgress) return {};
        return fmt::format("NCCL reported an asynchronous error on the halo communicator: {} ({})",
                           ncclGetErrorString(state), ncclGetLastError(comm));
    }

    ncclComm_t comm_ = nullptr;
    std::unique_ptr<BackgroundCheck> watch_;
};

template <class T>
constexpr ncclDataType_t nccl_type() {
    return sizeof(T) == 4 ? ncclFloat32 : ncclFloat64;
}

template <class T>
class NcclTransport final : public Transport<T>, public DeviceSums {
public:
    // NCCL pairs the k-th send from A to B with the k-th receive on B from A: send in the order
    // of the face a message leaves through, receive in the order of the face it left through on
    // the peer (the opposite of our own). Both orders are fixed once here; an exchange of
    // faces[first, last) (one axis of a deep-halo exchange) takes them in the same order.
    NcclTransport(MPI_Comm comm, Backend<T>& backend, const std::vector<HaloFace<T>>& faces)
        : backend_(backend), comm_(comm) {
        for (std::size_t f = 0; f < faces.size(); ++f) {
            sends_.push_back(f);
            recvs_.push_back(f);
        }
        std::sort(sends_.begin(), sends_.end(),
                  [&](auto a, auto b) { return faces[a].face < faces[b].face; });
        std::sort(recvs_.begin(), recvs_.end(), [&](auto a, auto b) {
            return opposite_face(faces[a].face) < opposite_face(faces[b].face);
        });
    }
    [[nodiscard]] const char* name() const override { return "nccl"; }

    void exchange(std::vector<HaloFace<T>>& faces, std::size_t first, std::size_t last,
                  bool /*beside_work*/) override {
        auto* stream = static_cast<cudaStream_t>(backend_.native_stream(Lane::boundary));
        auto taken = [&](std::size_t f) { return f >= first && f < last; };
        GRIDSIM_NCCL_CHECK(ncclGroupStart());
        for (std::size_t f : recvs_) {
            if (!taken(f)) continue;
            GRIDSIM_NCCL_CHECK(ncclRecv(faces[f].recv_buf.data(), faces[f].count(), nccl_type<T>(),
                                        faces[f].peer, comm_.get(), stream));
        }
        for (std::size_t f : sends_) {
            if (!taken(f)) continue;
            GRIDSIM_NCCL_CHECK(ncclSend(faces[f].send_buf.data(), faces[f].count(), nccl_type<T>(),
                                        faces[f].peer, comm_.get(), stream));
        }
        GRIDSIM_NCCL_CHECK(ncclGroupEnd());
    }
    [[nodiscard]] bool host_steps() const override { return false; }
    [[nodiscard]] DeviceSums* device_sums() override { return this; }
    [[nodiscard]] const char* route() const override { return "nccl"; }
    void allreduce_sum_on_lane(double* values, int count) override {
        auto* stream = static_cast<cudaStream_t>(backend_.native_stream(Lane::boundary));
        GRIDSIM_NCCL_CHECK(
            ncclAllReduce(values, values, count, ncclFloat64, ncclSum, comm_.get(), stream));
    }

private:
    Backend<T>& backend_;
    NcclComm comm_;
    std::vector<std::size_t> sends_;  // indices into the faces, in send order
    std::vector<std::size_t> recvs_;  // the same, in receive order
};

}  // namespace

template <class T>
std::unique_ptr<Transport<T>> make_nccl_transport(const TransportArgs<T>& args) {
    return std::make_unique<NcclTransport<T>>(args.comm, *args.backend, *args.faces);
}
template std::unique_ptr<Transport<float>> make_nccl_transport(const TransportArgs<float>&);
template std::unique_ptr<Transport<double>> make_nccl_transport(const TransportArgs<double>&);

std::string nccl_refusal(const RankGpuFacts& facts) {
    return facts.own_gpus ? std::string()
                          : "needs one GPU per rank (ranks share GPUs here); use \"staged\"";
}

bool nccl_built() { return true; }

std::string nccl_version() {
    int v = 0;
    ncclGetVersion(&v);
    return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

}  // namespace gridsim
