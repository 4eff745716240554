// Parallel HDF5 snapshots and checkpoints (docs/architecture.md, "Output"; docs/output.md the
// layout). Every rank writes its block (ghost cells excluded) as one hyperslab of the global array,
// collectively through MPI-IO, so /fields/u does not depend on the decomposition (/grid's
// process_grid and /provenance record it). Files are written under a temporary name and
// renamed when complete, so no reader ever sees a half-written file.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "mesh/domain.hpp"
#include "mesh/field.hpp"
#include "parallel/mpi_session.hpp"

namespace gridsim {

struct SnapshotMeta {
    std::string problem;
    std::int64_t step = 0;
    double time = 0.0;
    double dt = 0.0;
    std::string deck_toml;  // the resolved configuration
    std::vector<int> process_grid;
    std::string devices;
    bool checkpoint = false;  // adds what a restart needs (and always native precision)
    std::vector<std::pair<std::int64_t, double>> residual_history;
    std::vector<std::pair<std::string, std::string>> mpi_hints;  // output.mpi_hints
};

enum class DiskPrecision { native, float32, float64 };

// Writes `path` collectively over `comm`: to path + ".tmp", closed, synced, then renamed. With
// `keep_previous` an existing `path` is first renamed to path + ".prev" (checkpoints).
void write_snapshot(const std::string& path, MPI_Comm comm, const Domain& dom, const Subdomain& sub,
                    const HostField& field, const SnapshotMeta& meta, DiskPrecision disk,
                    bool keep_previous);

// write_snapshot in two parts, so that the disk writes one file back while the next is being
// written (asynchronous snapshots): the first writes and closes path + ".tmp" and asks the
// kernel to start writing it back (rank 0), the second syncs and renames it (collective; a
// failure ends every rank together, said by rank 0 when `say`, else silently: the caller is
// already failing for another reason). Until the second, `path` is not there.
struct PendingCommit {
    std::string tmp;
    std::string path;
    bool keep_previous = false;
};
PendingCommit write_snapshot_begin(const std::string& path, MPI_Comm comm, const Domain& dom,
                                   const Subdomain& sub, const HostField& field,
                                   const SnapshotMeta& meta, DiskPrecision disk,
                                   bool keep_previous);
void finish_commit(const PendingCommit& pending, MPI_Comm comm, bool say);

// Where this rank's snapshot writes spent their time, summed over files: creating the file and
// writing attributes and /fields/u (HDF5 and MPI-IO), closing it (HDF5's metadata), and rank
// 0's fsync and rename (every rank waits for it).
struct SnapshotTimes {
    double write_s = 0.0;
    double close_s = 0.0;
    double sync_s = 0.0;
};
SnapshotTimes snapshot_times();

// What a restart reads back. Throws ConfigError (exit 2) for a file that is missing, not HDF5,
// not a gridsim checkpoint, or of another problem, grid or precision than `cfg`.
struct CheckpointInfo {
    std::int64_t step = 0;
    double time = 0.0;
    std::vector<std::pair<std::int64_t, double>> residual_history;
};
CheckpointInfo read_checkpoint_info(const std::string& path, MPI_Comm comm, const Config& cfg);
// Reads this rank's block of /fields/u into `field` (owned points only), collectively.
void read_field(const std::string& path, MPI_Comm comm, const Domain& dom, const Subdomain& sub,
                const HostField& field);

// The XDMF sidecar of one snapshot (same name, .xmf), and the temporal collection
// `series_path` over every snapshot listed (file name, time).
// `value_bytes`: 4 or 8, the type on disk.
// The resolved deck recorded in a gridsim file's /provenance ("" when it has none). Serial.
std::string written_deck(const std::string& path);
void write_xdmf(const std::string& h5_path, const Domain& dom, int value_bytes, double time);
void write_xdmf_series(const std::string& series_path, const Domain& dom, int value_bytes,
                       const std::vector<std::pair<std::string, double>>& snapshots);

}  // namespace gridsim
