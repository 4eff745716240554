#include "io/background_writer.hpp"
#include "parallel/collectives.hpp"

#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "io/stopwatch.hpp"
#include "parallel/together.hpp"

namespace gridsim {

BackgroundWriter::BackgroundWriter(MPI_Comm comm, int slots, double delay_s)
    : comm_(duplicate_comm(comm)), slots_(slots), delay_s_(delay_s), thread_([this] { run(); }) {}

BackgroundWriter::~BackgroundWriter() {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void BackgroundWriter::wait_until(const std::function<bool()>& ready) {
    Stopwatch watch;
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, ready);
    waited_s_ += watch.lap();
}

void BackgroundWriter::wait_for_room() {
    wait_until([this] { return in_flight_ < slots_; });
}

void BackgroundWriter::submit(Job job) {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(std::move(job));
        ++in_flight_;
    }
    changed_.notify_all();
}

void BackgroundWriter::drain() {
    wait_until([this] { return in_flight_ == 0; });
}

std::string BackgroundWriter::failure() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
}

double BackgroundWriter::busy_seconds() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return busy_s_;
}

void BackgroundWriter::run() {
    for (;;) {
        Job job;
        bool skip = false;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping, and nothing left to write
            job = std::move(queue_.front());
            queue_.pop_front();
            skip = !failure_.empty();
        }
        Stopwatch watch;
        std::string failed;
        if (!skip) {
            if (delay_s_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay_s_));
            try {
                job(comm_.get());
            } catch (const RunFailure& e) {
                failed = e.what();  // agreed inside the job: every rank's writer has it
            } catch (const std::exception& e) {
                // Local to this rank: end every rank rather than leave them waiting (as main).
                std::cerr << fmt::format("gridsim: rank {}: error: {}", comm_rank(comm_.get()),
                                         e.what())
                          << std::endl;
                abort_all(1);
            }
        }
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            busy_s_ += watch.lap();
            if (failure_.empty()) failure_ = failed;
            --in_flight_;
        }
        changed_.notify_all();
    }
}

}  // namespace gridsim
