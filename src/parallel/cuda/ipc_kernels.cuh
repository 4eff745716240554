// The ipc transport's device side: a face's handshake signals, the put kernels that store faces
// into a peer's memory, and the mailbox kernel that sums values over the ranks in rank order
// (ipc_transport.cu describes the protocol).
#pragma once

#include <cuda_runtime.h>
#include <cuda/atomic>

#include <cstdint>

#include "kernels/backend.hpp"
#include "kernels/fast_divide.hpp"
#include "mesh/box.hpp"

namespace gridsim::ipc {

// One face's handshake state. The owner's `ready`, `reached` and `stored` are written by the
// peer.
struct FaceSignals {
    unsigned long long ready;    // exchanges whose data the peer has stored into our memory
    unsigned long long reached;  // exchanges the peer has reached (its put has started)
    unsigned long long epoch;    // exchanges of this face we have waited for (ours only)
    unsigned long long stored;   // what the peer's last put stored (its tag)
    unsigned int arrived;        // blocks of the running put that have stored their share (ours)
    unsigned long long base;     // a pipeline's ready at its pass 0 (HaloArrivals; ours only)
};

using SystemCounter = cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>;

constexpr int kMaxFaces = 6;
// 128 threads at 32 registers: a put fits beside a 3D levels block, as halo moves do
// (cuda::kFaceThreads; docs/tuning.md, "Halo move blocks"). ptxas spills a few bytes of peer_put
// at that cap; the cap stays where a spill-free one ran no faster.
constexpr int kPutThreads = 128;

// A put's tag: the packed buffer, or field f of those registered.
constexpr unsigned long long kPackedTag = 0;
constexpr unsigned long long field_tag(int f) { return static_cast<unsigned long long>(f) + 1; }

// A put's first step, every block: tell the peer this rank has reached the exchange after the
// `epoch` it has waited for, and wait until the peer has reached it too (the first exchange
// included: the peer may still be writing its field, an upload halos and all). Returns that
// epoch.
__device__ unsigned long long meet_peer(FaceSignals* mine, FaceSignals* peer) {
    const unsigned long long done = mine->epoch;
    if (threadIdx.x == 0) {
        if (blockIdx.x == 0)
            SystemCounter(peer->reached).store(done + 1, cuda::memory_order_release);
        while (SystemCounter(mine->reached).load(cuda::memory_order_acquire) < done + 1) {
        }
    }
    __syncthreads();
    return done;
}

// Tells the peer that exchange done + 1 is in its memory, and what was stored (`tag`); the
// caller's stores (or the copies before it on its stream) are out.
__device__ void tell_peer(FaceSignals* peer, unsigned long long done, unsigned long long tag) {
    __threadfence_system();
    SystemCounter(peer->stored).store(tag, cuda::memory_order_relaxed);
    SystemCounter(peer->ready).store(done + 1, cuda::memory_order_release);
}

// Waits until the peer has told us exchange done + 1 is in our memory, checks the peer stored
// what we did, and moves the epoch on.
__device__ void await_peer(FaceSignals* mine, unsigned long long done, unsigned long long tag) {
    while (SystemCounter(mine->ready).load(cuda::memory_order_acquire) < done + 1) {
    }
    if (SystemCounter(mine->stored).load(cuda::memory_order_relaxed) != tag) __trap();
    mine->epoch = done + 1;
}

// A put's last step, every block after its stores: the last block of the face to get here tells
// the peer (tell_peer), then waits for the peer's telling (await_peer). Being the last, it moves
// the epoch on after every block of the face has read it.
__device__ void tell_and_wait(FaceSignals* mine, FaceSignals* peer, unsigned long long done,
                              unsigned long long tag) {
    __threadfence_system();  // this block's stores reach the peer before it is told
    __syncthreads();
    if (threadIdx.x != 0 || atomicAdd(&mine->arrived, 1u) != gridDim.x - 1) return;
    mine->arrived = 0;  // every store of the face is out; the next put counts anew
    tell_peer(peer, done, tag);
    await_peer(mine, done, tag);
}

// A put moves every face of its launch (blockIdx.y) from rows here to rows of the same length in
// the peer's memory: a registered field's face from our field's send box into the peer's field's
// receive box (the same shape), or a packed face as one row, our send buffer into the peer's
// receive buffer. A warp's item is a run of one row: 32 x kStoreUnroll pieces, each lane loading
// its pieces before it stores any. A piece is 16 bytes where the two rows start at the same
// offset from a 16-byte boundary (the buffers; faces across y and z, whose fields' x layouts
// match), the points before the first boundary and after the last going one by one; else a
// point.
constexpr int kStoreUnroll = 2;
constexpr int kStoreRun = 32 * kStoreUnroll;

template <class T>
struct PutFace {
    const T* src = nullptr;               // our first point
    T* dst = nullptr;                     // the peer's first point, opened here
    std::int64_t src_sy = 0, src_sz = 0;  // row and plane strides, ours and the peer's
    std::int64_t dst_sy = 0, dst_sz = 0;
    int nx = 0;       // points per row
    int head = 0;     // points of a row before its first 16-byte boundary
    int vectors = 0;  // 16-byte pieces of a row after them; 0: the row goes point by point
    FastDivide runs;  // runs per row
    FastDivide ny;    // rows per plane
    int planes = 0;
    unsigned items = 0;
    FaceSignals* mine = nullptr;
    FaceSignals* peer = nullptr;  // the peer's signals of the opposite face, opened here
};
template <class T>
struct PutFaces {
    PutFace<T> face[kMaxFaces];
    unsigned long long tag;
};

// Run `run` of a row: `n` pieces of type P from s to d, this warp's lane `lane`.
template <class P>
__device__ void put_run(const P* s, P* d, int n, unsigned run, unsigned lane) {
    const int first = static_cast<int>(run * kStoreRun + lane);
    P v[kStoreUnroll];
#pragma unroll
    for (int u = 0; u < kStoreUnroll; ++u) {
        if (first + 32 * u < n) v[u] = s[first + 32 * u];
    }
#pragma unroll
    for (int u = 0; u < kStoreUnroll; ++u) {
        if (first + 32 * u < n) d[first + 32 * u] = v[u];
    }
}

// Grid (blocks per face, faces).
template <class T>
__global__ void __launch_bounds__(kPutThreads, 16) peer_put(PutFaces<T> faces) {
    const PutFace<T>& p = faces.face[blockIdx.y];
    const unsigned long long done = meet_peer(p.mine, p.peer);
    constexpr unsigned kWarps = kPutThreads / 32;
    constexpr int kPerVector = 16 / static_cast<int>(sizeof(T));
    const unsigned lane = threadIdx.x % 32;
    for (unsigned item = blockIdx.x * kWarps + threadIdx.x / 32; item < p.items;
         item += gridDim.x * kWarps) {
        const unsigned row = p.runs.quotient(item);
        const unsigned run = item - row * p.runs.divisor();
        const unsigned k = p.ny.quotient(row);
        const unsigned j = row - k * p.ny.divisor();
        const T* src = p.src + j * p.src_sy + k * p.src_sz;
        T* dst = p.dst + j * p.dst_sy + k * p.dst_sz;
        if (p.vectors == 0) {
            put_run(src, dst, p.nx, run, lane);
            continue;
        }
        const int tail = p.head + p.vectors * kPerVector;  // the points after the last piece
        if (run == 0 && static_cast<int>(lane) < p.head) dst[lane] = src[lane];
        if (run == 0 && tail + static_cast<int>(lane) < p.nx) dst[tail + lane] = src[tail + lane];
        put_run(reinterpret_cast<const uint4*>(src + p.head),
                reinterpret_cast<uint4*>(dst + p.head), p.vectors, run, lane);
    }
    tell_and_wait(p.mine, p.peer, done, faces.tag);
}

// A put whose stores a copy engine makes (IpcTransport::launch): the meeting before the copies
// (one block per face), the telling of each face after its copies (one thread, face `f`), and
// the waiting for every face once all are told (one block per face), which the stream runs in
// order.
template <class T>
__global__ void peer_meet(PutFaces<T> faces) {
    const PutFace<T>& p = faces.face[blockIdx.y];
    (void)meet_peer(p.mine, p.peer);
}
template <class T>
__global__ void peer_tell(PutFaces<T> faces, int f) {
    const PutFace<T>& p = faces.face[f];
    tell_peer(p.peer, p.mine->epoch, faces.tag);
}
template <class T>
__global__ void peer_await(PutFaces<T> faces) {
    const PutFace<T>& p = faces.face[blockIdx.y];
    await_peer(p.mine, p.mine->epoch, faces.tag);
}

// A pipeline starts at pass `pass` (HaloArrivals): its base, from ready now (every exchange so
// far has landed), so that pass `pass` needs nothing more.
__global__ void restart_arrivals(FaceSignals* mine, unsigned long long pass) {
    mine->base = SystemCounter(mine->ready).load(cuda::memory_order_relaxed) - pass;
}

// The sums over the ranks where every rank reaches every other: each rank's mailbox holds a
// row of values per rank, twice (exchanges alternate between the two, so a rank one all-reduce
// ahead never overwrites a row still being read: to get there it needed every rank's arrival
// at the all-reduce in between, which each sends only after finishing the one before), and an
// arrival counter per rank. One block: store this rank's values into its row of every mailbox,
// raise its arrival counter there, wait for every rank's arrival here, and add the rows in rank
// order, so every rank gets the same bits (with two ranks the same as NCCL's a + b).
constexpr int kMaxSums = 8;

struct MailboxView {
    unsigned long long* arrived;  // [ranks]
    double* rows;                 // [2][ranks][kMaxSums]
};

__global__ void mailbox_allreduce(double* values, int count, const MailboxView* boxes, int ranks,
                                  int me, unsigned long long* epoch) {
    const unsigned long long step = *epoch + 1;
    const int parity = static_cast<int>(step & 1);
    const MailboxView& mine = boxes[me];
    for (int r = static_cast<int>(threadIdx.x); r < ranks; r += blockDim.x) {
        double* row = boxes[r].rows + (static_cast<std::size_t>(parity) * ranks + me) * kMaxSums;
        for (int c = 0; c < count; ++c) row[c] = values[c];
    }
    __threadfence_system();
    __syncthreads();
    for (int r = static_cast<int>(threadIdx.x); r < ranks; r += blockDim.x) {
        SystemCounter(boxes[r].arrived[me]).store(step, cuda::memory_order_release);
    }
    for (int r = static_cast<int>(threadIdx.x); r < ranks; r += blockDim.x) {
        while (SystemCounter(mine.arrived[r]).load(cuda::memory_order_acquire) < step) {
        }
    }
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < count) {
        const double* rows = mine.rows + static_cast<std::size_t>(parity) * ranks * kMaxSums;
        double sum = rows[threadIdx.x];
        for (int r = 1; r < ranks; ++r) sum += rows[r * kMaxSums + threadIdx.x];
        values[threadIdx.x] = sum;
    }
    if (threadIdx.x == 0) *epoch = step;
}

}  // namespace gridsim::ipc
