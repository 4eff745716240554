// The CUDA backend's sums: the block partials a residual (or any summing) launch writes, their
// folds in a fixed order, the reads of sums back to the host, and the recording (a CUDA graph)
// of a sweep with the memory its sums use.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cuda/cuda_raii.hpp"
#include "kernels/cuda/lanes.hpp"

namespace gridsim::cuda {

struct ReadSlot;

// Fused residual: one partial per block of every residual launch of a check, in two sets that
// alternate between checks (one is written while the other is folded); the folded sum (device,
// one per set); a ring of page-locked doubles it is read back into. While recording, the
// recording's own partials, folded sum and read slot instead.
class ResidualSums {
public:
    explicit ResidualSums(Lanes& lanes);
    ResidualSums(const ResidualSums&) = delete;
    ResidualSums& operator=(const ResidualSums&) = delete;
    // A read still in flight writes into a read slot: waits for it (errors ignored, as in every
    // destructor) before the slots are freed.
    ~ResidualSums();
    // Waits for the folds and reads in flight and the boundary lane's work, errors ignored (for
    // destructors: the device may have failed).
    void settle() const noexcept;

    // Room for `more` block partials after those already written this check.
    double* partial_slots(long long more);
    // FoldedSums and LevelSums: fold_residual, fold_and_read_levels, finish_read_level, join_fold,
    // fold_and_read, finish_read, begin_capture and end_capture.
    double* fold_residual();
    int fold_and_read_levels(int levels);
    double finish_read_level(int id, int level);
    void join_fold(cudaStream_t s);
    int fold_and_read();
    double finish_read(int id);
    void begin_capture(bool sum_read_by_host);
    std::unique_ptr<Recording> end_capture();

    [[nodiscard]] bool recording() const { return capture_ != nullptr; }
    // Waits for both lanes' work and the folds and reads issued so far.
    void sync_all() const;

private:
    struct Capture;
    double* fold_in_capture(double* host = nullptr);
    // Copies the sum at `src` to a read slot on the fold's stream, after the last fold.
    int read_after_fold(const double* src);
    ReadSlot& finished(int id);
    double* fold_set(int parts, double* host);

    Lanes& lanes_;
    Stream reduce_{Stream::Priority::high};
    std::array<Buffer<double>, 2> partials_;
    std::array<Event, 2> fold_done_;
    std::array<bool, 2> folded_{false, false};
    int partial_set_ = 0;
    long long partials_used_ = 0;
    Buffer<double> result_;
    long long most_partials_ = 0;  // the most partials one fold has taken
    // Read-back slots: the first Backend::kReads for reads in turn, then one per recording that
    // reads.
    std::vector<std::unique_ptr<ReadSlot>> reads_;
    std::uint64_t reads_issued_ = 0;
    std::unique_ptr<Capture> capture_;  // while recording
};

}  // namespace gridsim::cuda
