#include "parallel/mpi_session.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "kernels/device_runtime.hpp"
#include "parallel/mpi_check.hpp"

namespace gridsim {

namespace detail {

void mpi_fail(int code, const char* expr, const char* file, int line) {
    char msg[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(code, msg, &len);
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "gridsim: rank %d: MPI error in %s at %s:%d: %s\n", rank, expr, file, line,
                 msg);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();  // MPI_Abort does not return; keeps [[noreturn]] honest if it did
}

// The device backends' fatal errors (kernels/device_runtime.hpp): say which rank, end all.
[[noreturn]] void abort_all_ranks(const char* message) {
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "gridsim: rank %d: %s\n", rank, message);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
}

}  // namespace detail

namespace {
bool g_thread_multiple = false;
}  // namespace

bool mpi_thread_multiple() { return g_thread_multiple; }

MpiSession::MpiSession(int* argc, char*** argv) {
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
    // Open MPI 4's default MPI-IO component (OMPIO) lost data in collective HDF5 writes of a 2x2
    // decomposition (reproduced with 4.1.4 by tests/mpi/test_io.cpp and gridsim compare); ROMIO
    // writes them correctly. A user's own OMPI_MCA_io setting is kept.
    setenv("OMPI_MCA_io", "romio321", 0);
#endif
    // Multiple: asynchronous snapshots (output.async) write collectively from a thread of their
    // own while the main thread exchanges halos.
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    g_thread_multiple = provided >= MPI_THREAD_MULTIPLE;
    GRIDSIM_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    GRIDSIM_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
    GRIDSIM_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));
    set_fatal_error_handler(&detail::abort_all_ranks);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

Communicator& Communicator::operator=(Communicator&& o) noexcept {
    if (this != &o) {
        Communicator tmp(std::move(*this));
        comm_ = o.comm_;
        o.comm_ = MPI_COMM_NULL;
    }
    return *this;
}

Communicator::~Communicator() {
    if (comm_ != MPI_COMM_NULL && comm_ != MPI_COMM_WORLD && comm_ != MPI_COMM_SELF) {
        MPI_Comm_free(&comm_);
    }
}

Communicator duplicate_comm(MPI_Comm comm) {
    MPI_Comm dup = MPI_COMM_NULL;
    GRIDSIM_MPI_CHECK(MPI_Comm_dup(comm, &dup));
    return Communicator(dup);
}

int Communicator::rank() const { return comm_rank(comm_); }
int Communicator::size() const { return comm_size(comm_); }

void broadcast_string(MPI_Comm comm, std::string& text, int root) {
    long len = static_cast<long>(text.size());
    GRIDSIM_MPI_CHECK(MPI_Bcast(&len, 1, MPI_LONG, root, comm));
    text.resize(static_cast<std::size_t>(len));
    GRIDSIM_MPI_CHECK(MPI_Bcast(text.data(), static_cast<int>(len), MPI_CHAR, root, comm));
}

bool wait_sleeping(MPI_Request& request, std::chrono::milliseconds poll, double until) {
    int done = 0;
    while (true) {
        GRIDSIM_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
        if (done != 0) return true;
        if (MPI_Wtime() > until) return false;
        std::this_thread::sleep_for(poll);
    }
}

namespace {

// A rank that failed waits this long for the others to reach the agreement (docs/tuning.md,
// "Agreeing on a failure").
constexpr double kAgreeDeadlineSeconds = 20.0;

// Completes `request`. A rank holding an error (`mine`) waits at most kAgreeDeadlineSeconds:
// a rank that never arrives is stuck in a collective call this one left after its failure, and
// would never arrive, so this rank says its error and ends the job. The others wait as long as
// it takes (they may just be slower at the step before).
void wait_or_end_job(MPI_Request& request, const std::string& mine) {
    if (mine.empty()) {
        GRIDSIM_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
        return;
    }
    if (wait_sleeping(request, std::chrono::milliseconds(1), MPI_Wtime() + kAgreeDeadlineSeconds))
        return;
    int world_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    std::fprintf(stderr,
                 "gridsim: rank %d: error: %s (other ranks did not reach the agreement on it "
                 "within %.0f s: ending the job)\n",
                 world_rank, mine.c_str(), kAgreeDeadlineSeconds);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace

std::string agree_on_error(MPI_Comm comm, const std::string& mine, bool telling) {
    const int rank = comm_rank(comm);
    const int size = comm_size(comm);
    // Ranks that tell sort first, then the other failing ranks, then the rest (no error).
    int key = mine.empty() ? 2 * size : telling ? rank : size + rank;
    MPI_Request request = MPI_REQUEST_NULL;
    GRIDSIM_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, &key, 1, MPI_INT, MPI_MIN, comm, &request));
    wait_or_end_job(request, mine);
    if (key == 2 * size) return {};
    std::string text = mine;
    broadcast_string(comm, text, key % size);
    return text;
}

int comm_rank(MPI_Comm comm) {
    int r = 0;
    GRIDSIM_MPI_CHECK(MPI_Comm_rank(comm, &r));
    return r;
}

int comm_size(MPI_Comm comm) {
    int s = 0;
    GRIDSIM_MPI_CHECK(MPI_Comm_size(comm, &s));
    return s;
}

std::string processor_name() {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    GRIDSIM_MPI_CHECK(MPI_Get_processor_name(name, &len));
    return {name, static_cast<std::size_t>(len)};
}

std::string mpi_library_version() {
    char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    MPI_Get_library_version(buf, &len);
    std::string s(buf, len);
    if (auto nl = s.find_first_of("\n,"); nl != std::string::npos) s.resize(nl);
    return s;
}

}  // namespace gridsim

namespace gridsim {

bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)  // the extension exists; ask the library at run time
    return MPIX_Query_cuda_support() == 1;
#else
    return false;
#endif
}

}  // namespace gridsim
