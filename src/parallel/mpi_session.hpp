// RAII for the MPI library and for communicators.
#pragma once

#include <mpi.h>

#include <chrono>
#include <limits>
#include <string>

namespace gridsim {

// Initialises MPI (MPI_THREAD_MULTIPLE requested) and finalises it on destruction; installs the
// handler that makes a device backend's fatal error (a failed CUDA call) name its rank and end
// every rank (MPI_Abort). MPI errors are returned to the caller (MPI_ERRORS_RETURN) so
// GRIDSIM_MPI_CHECK can say where they happened.
class MpiSession {
public:
    MpiSession(int* argc, char*** argv);
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;
    ~MpiSession();

    [[nodiscard]] int rank() const { return rank_; }
    [[nodiscard]] int size() const { return size_; }

private:
    int rank_ = 0;
    int size_ = 1;
};

// An owned communicator, freed on destruction (never MPI_COMM_WORLD/SELF).
class Communicator {
public:
    Communicator() = default;
    explicit Communicator(MPI_Comm comm) : comm_(comm) {}
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;
    Communicator(Communicator&& o) noexcept : comm_(o.comm_) { o.comm_ = MPI_COMM_NULL; }
    Communicator& operator=(Communicator&& o) noexcept;
    ~Communicator();

    [[nodiscard]] MPI_Comm get() const { return comm_; }
    [[nodiscard]] int rank() const;
    [[nodiscard]] int size() const;

private:
    MPI_Comm comm_ = MPI_COMM_NULL;
};

// A communicator of its own over the same ranks, collective.
Communicator duplicate_comm(MPI_Comm comm);

// `root`'s `text` (rank 0's by default) on every rank of `comm` (collective).
void broadcast_string(MPI_Comm comm, std::string& text, int root = 0);

// Completes `request`, testing it every `poll` and sleeping in between (leaving the CPU to
// others); false where it is still pending at MPI_Wtime() `until`.
bool wait_sleeping(MPI_Request& request, std::chrono::milliseconds poll,
                   double until = std::numeric_limits<double>::infinity());

// Collective over `comm`: "" when no rank has an error (`mine` empty everywhere), else one
// rank's error, the same on every rank: the lowest rank's among those that marked theirs
// `telling` (it names the cause, e.g. the system's reason), else the lowest failing rank's.
// The ranks agree on a failure they can all still report, instead of each saying its own.
std::string agree_on_error(MPI_Comm comm, const std::string& mine, bool telling = false);

// Whether MPI_Init_thread provided MPI_THREAD_MULTIPLE (false before MpiSession, and in tests
// that initialise MPI themselves).
bool mpi_thread_multiple();

int comm_rank(MPI_Comm comm);
int comm_size(MPI_Comm comm);
std::string mpi_library_version();
// This rank's host name (MPI_Get_processor_name).
std::string processor_name();
// MPIX_Query_cuda_support() where the MPI library has it (Open MPI), else false.
bool mpi_is_cuda_aware();

}  // namespace gridsim
