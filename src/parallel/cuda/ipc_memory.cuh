// The ipc transport's memory: a peer's allocation opened in this process (once per process
// however many holders), zeroed blocks of our own that peers open, and every rank's mailbox.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "parallel/cuda/ipc_kernels.cuh"
#include "parallel/mpi_check.hpp"
#include "parallel/mpi_session.hpp"

namespace gridsim::ipc {

// A peer's allocation opened in this process, closed on destruction.
class PeerMemory {
public:
    explicit PeerMemory(const cudaIpcMemHandle_t& handle) {
        GRIDSIM_CUDA_CHECK(cudaIpcOpenMemHandle(&ptr_, handle, cudaIpcMemLazyEnablePeerAccess));
    }
    PeerMemory(const PeerMemory&) = delete;
    PeerMemory& operator=(const PeerMemory&) = delete;
    ~PeerMemory() { (void)cudaIpcCloseMemHandle(ptr_); }
    [[nodiscard]] void* get() const { return ptr_; }

private:
    void* ptr_ = nullptr;
};

// A peer's allocation opened several times (a registered field: by each face leading to its
// rank, two on a periodic axis, and by each transport, as the exchange trial builds one per halo
// depth over the same fields), mapped once in this process and closed with its last holder. A
// second cudaIpcOpenMemHandle of the same handle may return a mapping that the first holder's
// close unmaps for both, and the surviving transport's stores then fault.
inline std::shared_ptr<PeerMemory> open_shared(const cudaIpcMemHandle_t& handle) {
    using Key = std::array<char, sizeof(cudaIpcMemHandle_t)>;
    static std::map<Key, std::weak_ptr<PeerMemory>> opened;
    for (auto it = opened.begin(); it != opened.end();) {
        it = it->second.expired() ? opened.erase(it) : std::next(it);
    }
    Key key;
    std::memcpy(key.data(), &handle, sizeof handle);
    std::weak_ptr<PeerMemory>& slot = opened[key];
    if (std::shared_ptr<PeerMemory> held = slot.lock()) return held;
    auto memory = std::make_shared<PeerMemory>(handle);
    slot = memory;
    return memory;
}

// Zeroed device memory of our own (an allocation of its own, so that its IPC handle opens
// exactly it), freed on destruction.
class DeviceBlock {
public:
    explicit DeviceBlock(std::size_t bytes) {
        GRIDSIM_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
        GRIDSIM_CUDA_CHECK(cudaMemset(ptr_, 0, bytes));
        GRIDSIM_CUDA_CHECK(cudaDeviceSynchronize());
    }
    DeviceBlock(const DeviceBlock&) = delete;
    DeviceBlock& operator=(const DeviceBlock&) = delete;
    ~DeviceBlock() { (void)cudaFree(ptr_); }
    template <class U>
    [[nodiscard]] U* as() const {
        return static_cast<U*>(ptr_);
    }

private:
    void* ptr_ = nullptr;
};

// Every rank's mailbox, opened here (our own as it is), and their views in device memory.
class Mailboxes {
public:
    explicit Mailboxes(MPI_Comm comm)
        : ranks_(comm_size(comm)),
          me_(comm_rank(comm)),
          own_(bytes(ranks_)),
          epoch_(sizeof(unsigned long long)),
          views_(sizeof(MailboxView) * ranks_) {
        cudaIpcMemHandle_t mine{};
        GRIDSIM_CUDA_CHECK(cudaIpcGetMemHandle(&mine, own_.as<void>()));
        std::vector<cudaIpcMemHandle_t> all(ranks_);
        GRIDSIM_MPI_CHECK(
            MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm));
        std::vector<MailboxView> views(ranks_);
        for (int r = 0; r < ranks_; ++r) {
            char* base = own_.as<char>();
            if (r != me_) {
                opened_.push_back(std::make_unique<PeerMemory>(all[r]));
                base = static_cast<char*>(opened_.back()->get());
            }
            views[r].arrived = reinterpret_cast<unsigned long long*>(base);
            views[r].rows = reinterpret_cast<double*>(base + sizeof(unsigned long long) * ranks_);
        }
        GRIDSIM_CUDA_CHECK(cudaMemcpy(views_.as<void>(), views.data(), sizeof(MailboxView) * ranks_,
                                      cudaMemcpyHostToDevice));
    }
    void allreduce(double* values, int count, cudaStream_t stream) {
        if (count > kMaxSums) {
            throw std::logic_error(
                fmt::format("ipc all-reduce of {} values (at most {})", count, kMaxSums));
        }
        mailbox_allreduce<<<1, 32, 0, stream>>>(values, count, views_.as<MailboxView>(), ranks_,
                                                me_, epoch_.as<unsigned long long>());
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
    }

private:
    static std::size_t bytes(int ranks) {
        return sizeof(unsigned long long) * ranks + sizeof(double) * 2 * ranks * kMaxSums;
    }
    int ranks_;
    int me_;
    DeviceBlock own_;
    DeviceBlock epoch_;
    DeviceBlock views_;
    std::vector<std::unique_ptr<PeerMemory>> opened_;
};

}  // namespace gridsim::ipc
