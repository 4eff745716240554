// The thread that writes snapshot files while the time loop goes on (output.async). One per rank;
// every rank's writer runs the same jobs in the same order, so the collective HDF5 writes inside
// them meet on a communicator of their own (a duplicate of the run's), never on the loop's. HDF5
// is not thread-safe: while a writer exists, every HDF5 call of the run goes through it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <mpi.h>

#include "parallel/mpi_session.hpp"

namespace gridsim {

class BackgroundWriter {
public:
    using Job = std::function<void(MPI_Comm)>;

    // Collective over `comm` (duplicates it). At most `slots` jobs queued or running at once.
    // `delay_s` slows every job down (a test hook: GRIDSIM_TEST_WRITE_DELAY_MS).
    BackgroundWriter(MPI_Comm comm, int slots, double delay_s);
    // Finishes the queued jobs and joins the thread.
    ~BackgroundWriter();
    BackgroundWriter(const BackgroundWriter&) = delete;
    BackgroundWriter& operator=(const BackgroundWriter&) = delete;

    // Blocks until fewer than `slots` jobs are queued or running (back-pressure): the staging
    // buffer of the job `slots` submissions ago is free again when this returns.
    void wait_for_room();
    // Queues `job` (call wait_for_room first).
    void submit(Job job);
    // Blocks until every job queued so far is done.
    void drain();

    // A job's RunFailure (already said by rank 0; the same on every rank, as the ranks agreed on
    // it inside the job), or "". Once failed, the writer runs no further jobs.
    [[nodiscard]] std::string failure() const;
    // Seconds the thread spent in jobs, and the seconds the caller spent waiting for it.
    [[nodiscard]] double busy_seconds() const;
    [[nodiscard]] double waited_seconds() const { return waited_s_; }

private:
    void run();
    void wait_until(const std::function<bool()>& ready);

    Communicator comm_;
    int slots_;
    double delay_s_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Job> queue_;
    int in_flight_ = 0;  // queued or running
    bool stopping_ = false;
    std::string failure_;
    double busy_s_ = 0.0;
    double waited_s_ = 0.0;  // the caller's (main thread's) only
    std::thread thread_;     // last: starts after everything it uses
};

}  // namespace gridsim
