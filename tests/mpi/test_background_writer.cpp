// The background writer (output.async): jobs run in the order submitted, collectively on a
// communicator of their own; back-pressure holds the caller while every slot is taken; a job's
// agreed failure is kept and stops the jobs after it. Runs at 1, 2 and 4 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <future>
#include <vector>

#include "io/background_writer.hpp"
#include "run/run.hpp"

namespace gridsim {
namespace {

TEST(BackgroundWriter, RunsJobsInOrderOnADuplicateCommunicator) {
    std::vector<int> done;
    int relation = MPI_UNEQUAL;
    {
        BackgroundWriter writer(MPI_COMM_WORLD, 2, 0.0);
        for (int i = 0; i < 6; ++i) {
            writer.wait_for_room();
            writer.submit([&done, &relation, i](MPI_Comm comm) {
                MPI_Comm_compare(comm, MPI_COMM_WORLD, &relation);
                int sum = 0;  // collective: every rank's writer runs job i now
                int one = 1;
                MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
                done.push_back(i * 100 + sum);
            });
        }
        writer.drain();
        EXPECT_TRUE(writer.failure().empty());
        EXPECT_GT(writer.busy_seconds(), 0.0);
    }
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ASSERT_EQ(done.size(), 6u);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(done[i], i * 100 + size);
    EXPECT_EQ(relation, MPI_CONGRUENT);  // the same ranks, not the same communicator
}

TEST(BackgroundWriter, WaitsForRoomWhileEverySlotIsTaken) {
    std::atomic<bool> release{false};
    BackgroundWriter writer(MPI_COMM_WORLD, 1, 0.0);
    writer.wait_for_room();  // empty: returns at once
    writer.submit([&release](MPI_Comm) {
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    auto room = std::async(std::launch::async, [&writer] { writer.wait_for_room(); });
    EXPECT_EQ(room.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
    release = true;
    EXPECT_EQ(room.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    EXPECT_GT(writer.waited_seconds(), 0.1);
}

TEST(BackgroundWriter, KeepsAnAgreedFailureAndRunsNothingAfterIt) {
    int ran_after = 0;
    BackgroundWriter writer(MPI_COMM_WORLD, 2, 0.0);
    writer.submit([](MPI_Comm) { throw RunFailure("disk full (test)"); });
    writer.submit([&ran_after](MPI_Comm) { ++ran_after; });
    writer.drain();
    EXPECT_EQ(writer.failure(), "disk full (test)");
    EXPECT_EQ(ran_after, 0);
}

TEST(BackgroundWriter, TheTestDelaySlowsEveryJob) {
    BackgroundWriter writer(MPI_COMM_WORLD, 1, 0.05);
    for (int i = 0; i < 3; ++i) {
        writer.wait_for_room();
        writer.submit([](MPI_Comm) {});
    }
    writer.drain();
    EXPECT_GE(writer.busy_seconds(), 0.15);
}

}  // namespace
}  // namespace gridsim
