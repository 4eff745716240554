// The collectives the layers above use, typed: every MPI collective outside src/parallel/ goes
// through these, so the order in which ranks meet (the same on every rank) is read in one
// vocabulary. Each is one MPI call with the datatype of T, so sums over the ranks keep MPI's
// order for that count and operation.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "parallel/mpi_check.hpp"

namespace gridsim {

enum class Reduce { sum, min, max };

// The MPI datatype of T.
template <class T>
MPI_Datatype mpi_type();
template <>
inline MPI_Datatype mpi_type<int>() {
    return MPI_INT;
}
template <>
inline MPI_Datatype mpi_type<long>() {
    return MPI_LONG;
}
template <>
inline MPI_Datatype mpi_type<long long>() {
    return MPI_LONG_LONG;
}
template <>
inline MPI_Datatype mpi_type<unsigned long long>() {
    return MPI_UNSIGNED_LONG_LONG;
}
template <>
inline MPI_Datatype mpi_type<unsigned long>() {
    return MPI_UNSIGNED_LONG;
}
template <>
inline MPI_Datatype mpi_type<float>() {
    return MPI_FLOAT;
}
template <>
inline MPI_Datatype mpi_type<double>() {
    return MPI_DOUBLE;
}

namespace detail {
inline MPI_Op mpi_op(Reduce op) {
    switch (op) {
        case Reduce::min:
            return MPI_MIN;
        case Reduce::max:
            return MPI_MAX;
        case Reduce::sum:
            break;
    }
    return MPI_SUM;
}
}  // namespace detail

// `n` values of `in` combined over every rank of `comm` into `out` on every rank (in == out: in
// place).
template <class T>
void allreduce(MPI_Comm comm, const T* in, T* out, int n, Reduce op) {
    GRIDSIM_MPI_CHECK(MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, n, mpi_type<T>(),
                                    detail::mpi_op(op), comm));
}
template <class T>
T allreduce(MPI_Comm comm, T value, Reduce op) {
    T out{};
    allreduce(comm, &value, &out, 1, op);
    return out;
}

// Each of `n` values' minimum, mean and maximum over the ranks of `comm`, on every rank.
struct OverRanks {
    std::vector<double> min, mean, max;
};
inline OverRanks over_ranks(MPI_Comm comm, const double* mine, int n) {
    const auto size = static_cast<std::size_t>(n);
    OverRanks o{std::vector<double>(size), std::vector<double>(size), std::vector<double>(size)};
    allreduce(comm, mine, o.min.data(), n, Reduce::min);
    allreduce(comm, mine, o.mean.data(), n, Reduce::sum);
    allreduce(comm, mine, o.max.data(), n, Reduce::max);
    int ranks = 1;
    GRIDSIM_MPI_CHECK(MPI_Comm_size(comm, &ranks));
    for (double& m : o.mean) m /= ranks;
    return o;
}

// The same, the result on `root` only (elsewhere `out` is left as it is).
template <class T>
void reduce_to_root(MPI_Comm comm, const T* in, T* out, int n, Reduce op, int root = 0) {
    GRIDSIM_MPI_CHECK(MPI_Reduce(in, out, n, mpi_type<T>(), detail::mpi_op(op), root, comm));
}
template <class T>
T reduce_to_root(MPI_Comm comm, T value, Reduce op, int root = 0) {
    T out{};
    reduce_to_root(comm, &value, &out, 1, op, root);
    return out;
}

// `root`'s `n` values of `data` on every rank.
template <class T>
void broadcast(MPI_Comm comm, T* data, int n = 1, int root = 0) {
    GRIDSIM_MPI_CHECK(MPI_Bcast(data, n, mpi_type<T>(), root, comm));
}

// Every rank's `n` values of `local`, rank after rank, on every rank.
template <class T>
std::vector<T> allgather(MPI_Comm comm, const T* local, int n) {
    int size = 1;
    GRIDSIM_MPI_CHECK(MPI_Comm_size(comm, &size));
    std::vector<T> all(static_cast<std::size_t>(size) * static_cast<std::size_t>(n));
    GRIDSIM_MPI_CHECK(MPI_Allgather(local, n, mpi_type<T>(), all.data(), n, mpi_type<T>(), comm));
    return all;
}
// Every rank's `value`, in rank order, on every rank.
template <class T>
std::vector<T> allgather(MPI_Comm comm, T value) {
    return allgather(comm, &value, 1);
}

// Each of the `n` values of `sums`, summed over every rank of `comm` in place, added in rank
// order from the first rank's (((v0 + v1) + v2) ...), all in one collective: the same bits on
// every rank, at every rank count, however often and however many values one call takes.
inline void sum_in_rank_order(MPI_Comm comm, double* sums, int n) {
    const std::vector<double> all = allgather(comm, sums, n);
    const std::size_t width = static_cast<std::size_t>(n);
    for (std::size_t i = 0; i < width; ++i) {
        double sum = all[i];
        for (std::size_t at = width + i; at < all.size(); at += width) sum += all[at];
        sums[i] = sum;
    }
}
inline double sum_in_rank_order(MPI_Comm comm, double local) {
    sum_in_rank_order(comm, &local, 1);
    return local;
}

// The largest `value` over the ranks and the lowest rank that holds it, on every rank.
struct RankedValue {
    double value;
    int rank;
};
inline RankedValue allreduce_maxloc(MPI_Comm comm, double value, int rank) {
    RankedValue mine{value, rank};
    RankedValue worst{};
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
    return worst;
}

inline void barrier(MPI_Comm comm) { GRIDSIM_MPI_CHECK(MPI_Barrier(comm)); }

// Seconds on MPI's wall clock.
inline double wall_seconds() { return MPI_Wtime(); }

// One non-blocking max over the ranks of N ints at a time: start() sends this rank's values,
// wait() completes the exchange and returns the maxima. The exchange in flight is completed on
// destruction (every rank destroys it at the same point).
template <std::size_t N>
class PendingMax {
public:
    explicit PendingMax(MPI_Comm comm) : comm_(comm) {}
    PendingMax(const PendingMax&) = delete;
    PendingMax& operator=(const PendingMax&) = delete;
    ~PendingMax() {
        if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
    }
    void start(const std::array<int, N>& mine) {
        send_ = mine;
        GRIDSIM_MPI_CHECK(MPI_Iallreduce(send_.data(), recv_.data(), static_cast<int>(N), MPI_INT,
                                         MPI_MAX, comm_, &request_));
    }
    const std::array<int, N>& wait() {
        GRIDSIM_MPI_CHECK(MPI_Wait(&request_, MPI_STATUS_IGNORE));
        return recv_;
    }

private:
    MPI_Comm comm_;
    std::array<int, N> send_{};
    std::array<int, N> recv_{};
    MPI_Request request_ = MPI_REQUEST_NULL;
};

// `bytes` bytes to and from rank `peer` of `comm` (tag 0), blocking.
inline void send_bytes(MPI_Comm comm, const void* data, std::size_t bytes, int peer) {
    GRIDSIM_MPI_CHECK(MPI_Send(data, static_cast<int>(bytes), MPI_BYTE, peer, 0, comm));
}
inline void receive_bytes(MPI_Comm comm, void* data, std::size_t bytes, int peer) {
    GRIDSIM_MPI_CHECK(
        MPI_Recv(data, static_cast<int>(bytes), MPI_BYTE, peer, 0, comm, MPI_STATUS_IGNORE));
}

// Ends every rank of the job with exit code `code`: for a failure that may be this rank's alone,
// where the others could be waiting in a collective it will never reach.
[[noreturn]] inline void abort_all(int code) {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::abort();
}

}  // namespace gridsim
