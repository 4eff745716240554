#include "io/snapshot.hpp"
#include "parallel/collectives.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>

#include "config/mpi_hints.hpp"
#include "io/h5.hpp"
#include "io/provenance.hpp"
#include "io/room.hpp"
#include "io/stopwatch.hpp"
#include "kernels/trace_range.hpp"
#include "parallel/mpi_session.hpp"
#include "parallel/together.hpp"
#include "platform/batch_job.hpp"

namespace gridsim {

namespace {

constexpr int kFormatVersion = 1;

hid_t memory_type(const HostField& f) { return f.single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE; }

hid_t disk_type(DiskPrecision d, const HostField& f) {
    if (d == DiskPrecision::float32) return H5T_IEEE_F32LE;
    if (d == DiskPrecision::float64) return H5T_IEEE_F64LE;
    return f.single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
}

// A box of the host field (owned coordinates, x y z) to or from a box of the file (full-array
// indices). The box is packed row by row into a contiguous buffer first (copy_block), because
// the field's halos and padded rows would otherwise make HDF5 walk a strided memory selection.
// Ranks with `take_part` false select nothing but still join the collective call.
struct Block {
    std::array<int, 3> local_lo{0, 0, 0};
    std::array<int, 3> file_lo{0, 0, 0};
    std::array<int, 3> count{1, 1, 1};
    bool take_part = true;
};

// Copies the block between the field (halos, padded rows) and a contiguous buffer, row by row.
void copy_block(const HostField& f, const Block& b, char* packed, bool to_packed) {
    const std::size_t size = f.single ? sizeof(float) : sizeof(double);
    const std::size_t row = static_cast<std::size_t>(b.count[0]) * size;
    auto* base = static_cast<char*>(const_cast<void*>(f.data));
    for (int k = 0; k < b.count[2]; ++k) {
        for (int j = 0; j < b.count[1]; ++j) {
            char* field_row =
                base + f.ext.index(b.local_lo[0], b.local_lo[1] + j, b.local_lo[2] + k) * size;
            char* buf_row = packed + (static_cast<std::size_t>(k) * b.count[1] + j) * row;
            to_packed ? std::memcpy(buf_row, field_row, row) : std::memcpy(field_row, buf_row, row);
        }
    }
}

// The buffer blocks are packed into, at least `bytes` long: one for the process, kept between
// files and never zero-filled: a fresh buffer per file costs a memset and a page fault per page
// on every snapshot. HDF5 runs on one thread at a time here (the background writer's while it
// exists), and so does this.
char* pack_buffer(std::size_t bytes) {
    static std::unique_ptr<char[]> buffer;
    static std::size_t size = 0;
    if (bytes > size) {
        buffer.reset();
        buffer.reset(new char[bytes]);  // default-initialised: no fill
        size = bytes;
    }
    return buffer.get();
}

// Whether the block's points lie in one run of memory in the field: rows without halos or
// padding between them (a field staged packed, or a single row), and likewise planes.
bool contiguous(const HostField& f, const Block& b) {
    std::int64_t run = b.count[0];
    if (b.count[1] > 1) {
        if (f.ext.sy != run) return false;
        run *= b.count[1];
    }
    return b.count[2] == 1 || f.ext.sz == run;
}

// The file side is a hyperslab per rank, transferred collectively; the memory side is the
// block packed contiguously (one host copy; HDF5 then sees the simplest memory selection), or
// the field itself where the block already is (a staged field: no host copy at all).
void transfer_block(hid_t dset, const Domain& dom, const HostField& f, const Block& b, bool write) {
    const int dims = dom.dims;
    const auto file_start = h5::axes_slowest_first(b.file_lo, dims);
    const auto count = h5::axes_slowest_first(b.count, dims);
    const hsize_t elements =
        b.take_part ? static_cast<hsize_t>(b.count[0]) * b.count[1] * b.count[2] : 0;
    const std::size_t value = f.single ? sizeof(float) : sizeof(double);
    const h5::SlabSpaces spaces = h5::slab_spaces(dset, file_start, count, b.take_part);
    const h5::Id dxpl = h5::collective_transfer();
    const hid_t type = memory_type(f);
    if (write && b.take_part && contiguous(f, b)) {
        const char* start = static_cast<const char*>(f.data) +
                            f.ext.index(b.local_lo[0], b.local_lo[1], b.local_lo[2]) * value;
        h5::check_status(H5Dwrite(dset, type, spaces.memory, spaces.file, dxpl, start),
                         "write /fields/u");
        return;
    }
    char* packed = pack_buffer(elements * value);
    if (write) {
        if (b.take_part) copy_block(f, b, packed, true);
        h5::check_status(H5Dwrite(dset, type, spaces.memory, spaces.file, dxpl, packed),
                         "write /fields/u");
    } else {
        h5::check_status(H5Dread(dset, type, spaces.memory, spaces.file, dxpl, packed),
                         "read /fields/u");
        if (b.take_part) copy_block(f, b, packed, false);
    }
}

// This rank's blocks of the full array: its owned block, plus, for the jacobi benchmark, the
// mirror rows 0 and ny-1 (copies of rows ny-2 and 1) that the solved grid does not store.
std::vector<Block> blocks_of(const Domain& dom, const Subdomain& sub) {
    std::vector<Block> out;
    Block own;
    for (int d = 0; d < 3; ++d) {
        own.file_lo[d] = dom.solved_origin[d] + sub.offset[d];
        own.count[d] = sub.size[d];
    }
    out.push_back(own);
    if (dom.solved_origin[1] == 1) {
        const int last = dom.solved[1] - 1;  // solved row of full row ny-2
        Block top = own;                     // full row 0 <- solved row `last`
        top.count[1] = 1;
        top.local_lo[1] = last - sub.offset[1];
        top.file_lo[1] = 0;
        top.take_part = last >= sub.offset[1] && last < sub.offset[1] + sub.size[1];
        Block bottom = own;  // full row ny-1 <- solved row 0
        bottom.count[1] = 1;
        bottom.local_lo[1] = 0;
        bottom.file_lo[1] = dom.cells[1] - 1;
        bottom.take_part = sub.offset[1] == 0;
        out.push_back(top);
        out.push_back(bottom);
    }
    return out;
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

void write_grid_group(hid_t file, const Domain& dom, const SnapshotMeta& meta) {
    h5::Id grid(
        h5::check(H5Gcreate2(file, "/grid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "/grid"),
        H5Gclose);
    std::vector<long long> cells, pgrid;
    std::vector<double> length, spacing, origin;
    for (int d = 0; d < dom.dims; ++d) {  // x, y, z order, as in the deck
        cells.push_back(dom.cells[d]);
        spacing.push_back(dom.spacing[d]);
        length.push_back(dom.spacing[d] * (dom.cells[d] - 1));
        origin.push_back(0.0);
        pgrid.push_back(d < static_cast<int>(meta.process_grid.size()) ? meta.process_grid[d] : 1);
    }
    h5::write_int_attr(grid, "global_cells", cells);
    h5::write_double_attr(grid, "length", length);
    h5::write_double_attr(grid, "spacing", spacing);
    h5::write_double_attr(grid, "origin", origin);
    h5::write_int_attr(grid, "process_grid", pgrid);
}

void write_provenance(hid_t file, const SnapshotMeta& meta, int ranks) {
    h5::Id prov(h5::check(H5Gcreate2(file, "/provenance", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                          "/provenance"),
                H5Gclose);
    for (const auto& [name, value] : build_versions())
        h5::write_string_attr(prov, name.c_str(), value);
    h5::write_int_attr(prov, "ranks", {ranks});
    h5::write_string_attr(prov, "devices", meta.devices);
    h5::write_string_attr(prov, "date", utc_now());
    h5::write_string_attr(prov, "deck", meta.deck_toml);
    h5::write_string_attr(prov, "mpi_hints", mpi_hints_text(meta.mpi_hints));
    const BatchJob job = batch_job();
    h5::write_string_attr(prov, "job_scheduler", job.scheduler);
    h5::write_string_attr(prov, "job_id", job.id);
    h5::write_string_attr(prov, "job_step", job.step);
}

// The residual history as a [n][2] dataset (step, residual), written by rank 0.
void write_history(hid_t file, const SnapshotMeta& meta, int rank) {
    std::vector<double> flat;
    for (const auto& [step, r] : meta.residual_history) {
        flat.push_back(static_cast<double>(step));
        flat.push_back(r);
    }
    const hsize_t dims[2] = {meta.residual_history.size(), 2};
    h5::Id space(h5::check(H5Screate_simple(2, dims, nullptr), "history space"), H5Sclose);
    h5::Id dset(h5::check(H5Dcreate2(file, "/restart_residual_history", H5T_IEEE_F64LE, space,
                                     H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                          "history dataset"),
                H5Dclose);
    if (flat.empty()) return;  // the same on every rank: an empty dataset, nothing to write
    h5::Id mem(h5::check(H5Screate_simple(2, dims, nullptr), "history memory"), H5Sclose);
    h5::Id file_space(h5::check(H5Dget_space(dset), "history file space"), H5Sclose);
    if (rank != 0) {
        H5Sselect_none(mem);
        H5Sselect_none(file_space);
    }
    const h5::Id dxpl = h5::collective_transfer();
    h5::check_status(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, file_space, dxpl, flat.data()),
                     "write history");
}

// This rank's sync of `tmp`: "" or why it failed. GRIDSIM_TEST_FAIL_SYNC_RANK (tests only) makes
// that rank's sync fail, as a node whose file system went away would.
std::string sync_file(const std::string& tmp, MPI_Comm comm) {
    const int rank = comm_rank(comm);
    if (const char* r = std::getenv("GRIDSIM_TEST_FAIL_SYNC_RANK");
        r != nullptr && std::atoi(r) == rank)
        return fmt::format("cannot sync {} on rank {}: injected failure", tmp, rank);
    const int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
    std::string error;
    if (fd < 0 || ::fsync(fd) != 0)
        error = fmt::format("cannot sync {} on rank {}: {}", tmp, rank, std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return error;
}

// Every rank syncs the finished file (the blocks of it that its node still caches reach the file
// system: on a parallel file system each node writes its own), the ranks agree, and only then
// rank 0 rotates the previous file, renames this one into place and syncs the directory. Returns
// "" or the error, the same on every rank; after a failure `tmp` is removed and `path` is left as
// it was.
std::string commit(const std::string& tmp, const std::string& path, bool keep_previous,
                   MPI_Comm comm) {
    std::string error = sync_file(tmp, comm);
    error = agree_on_error(comm, error, true);
    if (!error.empty()) {
        if (comm_rank(comm) == 0) ::unlink(tmp.c_str());
        return error + "; " + path + " left as it was";
    }
    if (comm_rank(comm) == 0) {
        namespace fs = std::filesystem;
        std::error_code ec;
        if (keep_previous && fs::exists(path)) fs::rename(path, path + ".prev", ec);
        if (!ec) fs::rename(tmp, path, ec);
        if (ec) error = fmt::format("cannot rename {} to {}: {}", tmp, path, ec.message());
        const std::string dir = fs::absolute(path).parent_path().string();
        const int dfd = ::open(dir.c_str(), O_RDONLY);
        if (dfd >= 0) {
            ::fsync(dfd);
            ::close(dfd);
        }
    }
    broadcast_string(comm, error);
    return error;
}

SnapshotTimes g_times;  // written by one thread at a time (the writer's, or the main one)

// A file being written: its objects, closed in reverse order of creation.
struct OpenFile {
    h5::Id file, fields, space, dset;
};

// One collective step of a write: `calls` under an h5::Attempt (a failed call does not stop this
// rank; every rank makes every call of the step), then the ranks agree whether any call failed
// anywhere before any rank makes the next step's calls. Returns "" or the agreed failure.
std::string agreed_step(MPI_Comm comm, const std::function<void()>& calls) {
    const h5::Attempt attempt;
    calls();
    return attempt.agree(comm);
}

std::uint64_t text_bytes(const SnapshotMeta& meta) {
    return meta.deck_toml.size() + meta.devices.size() + 16 * meta.residual_history.size() +
           mpi_hints_text(meta.mpi_hints).size();
}

// Creates `tmp` and writes everything into it, collectively, as agreed steps: room on its file
// system, the file, its attributes and groups, the field. Returns "" or the agreed failure; `f`
// holds what was opened.
std::string create_and_write(OpenFile& f, const std::string& path, const std::string& tmp,
                             MPI_Comm comm, const Domain& dom, const Subdomain& sub,
                             const HostField& field, const SnapshotMeta& meta, DiskPrecision disk) {
    const hid_t type = disk_type(meta.checkpoint ? DiskPrecision::native : disk, field);
    std::string error = check_room(
        comm, path, snapshot_file_bytes(grid_points(dom) * H5Tget_size(type), text_bytes(meta)));
    if (!error.empty()) return error;
    error = agreed_step(comm, [&] {
        const h5::Id fapl = h5::file_access(comm, meta.mpi_hints);
        f.file = h5::Id(
            h5::check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "create " + tmp),
            H5Fclose);
    });
    if (!error.empty()) return error;
    error = agreed_step(comm, [&] {
        h5::write_string_attr(f.file, "format", "gridsim");
        h5::write_int_attr(f.file, "format_version", {kFormatVersion});
        h5::write_string_attr(f.file, "problem", meta.problem);
        h5::write_string_attr(f.file, "kind", meta.checkpoint ? "checkpoint" : "snapshot");
        h5::write_int_attr(f.file, "step", {meta.step});
        h5::write_double_attr(f.file, "time", {meta.time});
        h5::write_double_attr(f.file, "dt", {meta.dt});
        write_grid_group(f.file, dom, meta);
        write_provenance(f.file, meta, comm_size(comm));
        if (meta.checkpoint) write_history(f.file, meta, comm_rank(comm));
    });
    if (!error.empty()) return error;
    return agreed_step(comm, [&] {
        f.fields =
            h5::Id(h5::check(H5Gcreate2(f.file, "/fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                             "/fields"),
                   H5Gclose);
        const auto dims = h5::axes_slowest_first(dom.cells, dom.dims);
        f.space = h5::Id(h5::check(H5Screate_simple(dom.dims, dims.data(), nullptr), "field space"),
                         H5Sclose);
        f.dset = h5::Id(h5::check(H5Dcreate2(f.fields, "u", type, f.space, H5P_DEFAULT, H5P_DEFAULT,
                                             H5P_DEFAULT),
                                  "/fields/u"),
                        H5Dclose);
        for (const Block& b : blocks_of(dom, sub)) transfer_block(f.dset, dom, field, b, true);
    });
}

// Flushed (every rank's part of the file reaches MPI-IO, which syncs it), then closed in order,
// each checked: the file's close writes its metadata.
void close_file(OpenFile& f, const std::string& tmp) {
    h5::check_status(H5Fflush(f.file, H5F_SCOPE_GLOBAL), "flush " + tmp);
    h5::check_status(f.dset.close(), "close /fields/u of " + tmp);
    h5::check_status(f.space.close(), "close the field space of " + tmp);
    h5::check_status(f.fields.close(), "close /fields of " + tmp);
    h5::check_status(f.file.close(), "close " + tmp);
}

// The ranks agreed that writing `tmp` failed while some of them hold it open. HDF5 cannot close
// a file after a failed write the same way on every rank (a rank whose metadata write fails
// leaves the collective close while the others wait in it), and MPI_Finalize would close it, so
// no rank closes it: rank 0 removes it and says why once, and every rank ends with exit code 1
// together, without MPI_Abort.
[[noreturn]] void abandon(MPI_Comm comm, const std::string& tmp, const std::string& text) {
    if (comm_rank(comm) == 0) {
        ::unlink(tmp.c_str());
        std::cerr << "gridsim: error: " << text << std::endl;
    }
    std::cout << std::flush;
    barrier(comm);  // the line is out and the file gone before any exit
    ::_exit(1);
}

}  // namespace

PendingCommit write_snapshot_begin(const std::string& path, MPI_Comm comm, const Domain& dom,
                                   const Subdomain& sub, const HostField& field,
                                   const SnapshotMeta& meta, DiskPrecision disk,
                                   bool keep_previous) {
    const TraceRange range(meta.checkpoint ? "checkpoint" : "snapshot");
    h5::quiet_errors();
    const std::string tmp = path + ".tmp";
    Stopwatch watch;
    OpenFile f;
    const std::string error = create_and_write(f, path, tmp, comm, dom, sub, field, meta, disk);
    g_times.write_s += watch.lap();
    if (!error.empty()) {
        const int open = allreduce(comm, f.file.get() >= 0 ? 1 : 0, Reduce::max);
        if (open != 0) abandon(comm, tmp, error + "; " + tmp + " removed, earlier files untouched");
        // No rank holds it open, but MPI-IO may have made it before the create failed elsewhere.
        if (comm_rank(comm) == 0) ::unlink(tmp.c_str());
        fail_together(comm, error + "; earlier files untouched");  // all exit 1 in order
    }
    {
        const h5::FatalWrites guard(tmp);  // a failed close ends every rank, never hangs them
        close_file(f, tmp);
    }
    g_times.close_s += watch.lap();
#ifdef __linux__
    if (comm_rank(comm) == 0) {  // start writing it back now, without waiting for it
        const int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
            ::close(fd);
        }
    }
#endif
    return {tmp, path, keep_previous};
}

void finish_commit(const PendingCommit& p, MPI_Comm comm, bool say) {
    const TraceRange range("commit");
    Stopwatch watch;
    const std::string err = commit(p.tmp, p.path, p.keep_previous, comm);
    g_times.sync_s += watch.lap();
    if (err.empty()) return;
    if (say) fail_together(comm, err);
    throw RunFailure(err);
}

void write_snapshot(const std::string& path, MPI_Comm comm, const Domain& dom, const Subdomain& sub,
                    const HostField& field, const SnapshotMeta& meta, DiskPrecision disk,
                    bool keep_previous) {
    finish_commit(write_snapshot_begin(path, comm, dom, sub, field, meta, disk, keep_previous),
                  comm, true);
}

SnapshotTimes snapshot_times() { return g_times; }

void read_field(const std::string& path, MPI_Comm comm, const Domain& dom, const Subdomain& sub,
                const HostField& field) {
    h5::quiet_errors();
    const h5::Id fapl = h5::file_access(comm);
    h5::Id file(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), "open " + path), H5Fclose);
    h5::Id dset(h5::check(H5Dopen2(file, "/fields/u", H5P_DEFAULT), "/fields/u"), H5Dclose);
    const std::vector<Block> blocks = blocks_of(dom, sub);
    transfer_block(dset, dom, field, blocks.front(), false);  // the mirror rows are not state
}

}  // namespace gridsim
