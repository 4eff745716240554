// RAII for HDF5 identifiers and the error check every HDF5 call goes through. HDF5's own error
// stack printing is off; a failure becomes an exception naming the call and the file.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <array>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gridsim::h5 {

// Owns one hid_t and closes it with the matching H5?close.
class Id {
public:
    using Closer = herr_t (*)(hid_t);
    Id() = default;
    Id(hid_t id, Closer closer) : id_(id), close_(closer) {}
    Id(const Id&) = delete;
    Id& operator=(const Id&) = delete;
    Id(Id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
    Id& operator=(Id&& o) noexcept {
        std::swap(id_, o.id_);
        std::swap(close_, o.close_);
        return *this;
    }
    ~Id() {
        if (id_ >= 0 && close_ != nullptr) close_(id_);
    }
    [[nodiscard]] hid_t get() const { return id_; }
    // Closes now and returns the status (a file's close writes its metadata: check it).
    herr_t close() {
        const herr_t status = id_ >= 0 && close_ != nullptr ? close_(id_) : 0;
        id_ = H5I_INVALID_HID;
        return status;
    }
    operator hid_t() const {
        return id_;
    }  // NOLINT(google-explicit-constructor): pass to the C API

private:
    hid_t id_ = H5I_INVALID_HID;
    Closer close_ = nullptr;
};

// Throws std::runtime_error("what: HDF5 call failed (HDF5's innermost reason)") when id < 0,
// unless an Attempt or a FatalWrites guard is alive.
hid_t check(hid_t id, const std::string& what);
void check_status(herr_t status, const std::string& what);

// While alive, a failed HDF5 call does not throw: unwinding on the ranks that saw it would leave
// the others waiting inside HDF5's collective calls (a file's close writes its metadata
// collectively), forever. This rank's first failure is kept (the call, HDF5's and the system's
// reason) and the caller goes on making every call the other ranks make (a call on an object that
// failed fails at once, on this rank alone), so the ranks stay in step and agree() can tell them
// all the same thing. For collective writes.
class Attempt {
public:
    Attempt();
    ~Attempt();
    Attempt(const Attempt&) = delete;
    Attempt& operator=(const Attempt&) = delete;
    // Collective over `comm`: "" when every rank's calls succeeded, else one rank's failure, the
    // same on every rank. A rank holding the system's reason (disk full, quota, permissions) is
    // preferred: in a collective write only the ranks whose own write failed know why.
    [[nodiscard]] std::string agree(MPI_Comm comm) const;
    // What check() calls on a failure: keeps the first (`telling`: it holds the system's reason).
    void keep(const std::string& text, bool telling);

private:
    std::string failure_;
    bool telling_ = false;
};
// While alive, a failed HDF5 call ends every rank: for calls after which the ranks can no longer
// agree (a file's close: a rank whose metadata write failed leaves the collective close while the
// others wait in it). The rank that saw the failure prints one line (the call, the file, HDF5's
// and the system's reason), removes the temporary file and ends the job (MPI_Abort, exit code
// 1), leaving every earlier file as it was.
class FatalWrites {
public:
    explicit FatalWrites(std::string tmp_path);
    ~FatalWrites();
    FatalWrites(const FatalWrites&) = delete;
    FatalWrites& operator=(const FatalWrites&) = delete;
};

// Turns off HDF5's automatic error printing (we report errors ourselves). Idempotent.
void quiet_errors();

// The MPI-IO driver over `comm`, with `hints` (name, value) in the info it opens files with
// (output.mpi_hints).
Id file_access(MPI_Comm comm, const std::vector<std::pair<std::string, std::string>>& hints = {});
Id collective_transfer();

void write_string_attr(hid_t obj, const char* name, const std::string& value);
void write_double_attr(hid_t obj, const char* name, const std::vector<double>& values);
void write_int_attr(hid_t obj, const char* name, const std::vector<long long>& values);
std::string read_string_attr(hid_t obj, const char* name);
std::vector<double> read_double_attr(hid_t obj, const char* name);
std::vector<long long> read_int_attr(hid_t obj, const char* name);
bool has_attr(hid_t obj, const char* name);
// For one rank's part of a collective transfer of `dset`: a contiguous memory space for the
// block (start, count) and the dataset's file space with that block selected, or nothing
// selected in either when the rank takes no part.
struct SlabSpaces {
    Id memory;
    Id file;
};
SlabSpaces slab_spaces(hid_t dset, const std::vector<hsize_t>& start,
                       const std::vector<hsize_t>& count, bool take_part);

// Whether `path` is an HDF5 file we can open (false for a missing, foreign or truncated file).
bool is_hdf5(const std::string& path);

// An x y z extent in HDF5's axis order, slowest first: [nz][ny][nx] (2D: [ny][nx]).
inline std::vector<hsize_t> axes_slowest_first(const std::array<int, 3>& xyz, int dims) {
    std::vector<hsize_t> out;
    for (int d = dims - 1; d >= 0; --d) out.push_back(static_cast<hsize_t>(xyz[d]));
    return out;
}

}  // namespace gridsim::h5
