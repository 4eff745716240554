// The halo transports, one row each: the only list of them. The config layer reads the names
// (the deck's words, the keys document) and the memory each hands over; `gridsim info` the
// meanings; the backend selection the refusals; HaloExchange the factories
// (parallel/transport.hpp). Plain rows and no code, so that config, the layer above parallel,
// reads them too: a row's factory and refusal are names, declared and called only where
// parallel/transport.hpp expands the rows.
//
// X(id, name, memory, sums, factory, refusal, meaning), one row per transport:
//   id       its TransportKind value
//   name     its word in parallel.transport
//   memory   what it hands over: `host` (MPI on host buffers: the CPU backend's, or page-locked
//            copies of device buffers) or `device` (device buffers; the CPU backend has none)
//   sums     whether it can sum over the ranks on the device, ordered on the boundary lane
//            (Transport::device_sums)
//   factory  template <class T> std::unique_ptr<Transport<T>> factory(const TransportArgs<T>&)
//   refusal  std::string refusal(const RankGpuFacts&): "" where a GPU run may take it, else why
//            not (the text after `"name": `) and what to use instead
//   meaning  a few words on what it is, as `gridsim info` lists it
// Rows go from the plainest to the most direct; lists of transports name the most direct first.
// parallel.transport = "auto" takes a transport by the rule of parallel/peer_routes.hpp.
#pragma once

#define GRIDSIM_TRANSPORTS(X)                                                                \
    X(staged, "staged", host, false, make_mpi_transport, staged_refusal,                     \
      "pinned host memory and MPI")                                                          \
    X(cuda_aware, "cuda-aware", device, false, make_mpi_transport, cuda_aware_refusal,       \
      "device buffers to CUDA-aware MPI")                                                    \
    X(nccl, "nccl", device, true, make_nccl_transport, nccl_refusal, "NCCL, a GPU per rank") \
    X(ipc, "ipc", device, true, make_ipc_transport, ipc_refusal, "stores into the neighbour's GPU")

namespace gridsim {

#define GRIDSIM_TRANSPORT_ID(id, ...) id,
// parallel.transport: `automatic` ("auto") is resolved to one of the rows before a run.
enum class TransportKind { automatic, GRIDSIM_TRANSPORTS(GRIDSIM_TRANSPORT_ID) };
#undef GRIDSIM_TRANSPORT_ID

enum class TransportMemory { host, device };

// A row's data (the factory and refusal are parallel/transport.hpp's).
struct TransportRow {
    TransportKind kind;
    const char* name;
    TransportMemory memory;
    bool sums;
    const char* meaning;
};

#define GRIDSIM_TRANSPORT_ROW(id, name, memory, sums, factory, refusal, meaning) \
    TransportRow{TransportKind::id, name, TransportMemory::memory, sums, meaning},
inline constexpr TransportRow kTransportRows[] = {GRIDSIM_TRANSPORTS(GRIDSIM_TRANSPORT_ROW)};
#undef GRIDSIM_TRANSPORT_ROW
inline constexpr int kTransportCount = sizeof(kTransportRows) / sizeof(kTransportRows[0]);

// The index of `kind`'s row (not `automatic`, which has none), and the row.
constexpr int transport_index(TransportKind kind) { return static_cast<int>(kind) - 1; }
constexpr const TransportRow& transport_row(TransportKind kind) {
    return kTransportRows[transport_index(kind)];
}

}  // namespace gridsim
