#include "io/h5.hpp"
#include "parallel/collectives.hpp"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "parallel/mpi_session.hpp"

namespace gridsim::h5 {

namespace {

Attempt* g_attempt = nullptr;  // the Attempt alive, if any
bool g_fatal = false;          // a FatalWrites guard is alive
std::string g_fatal_tmp;       // the temporary file it protects

// The innermost entry of HDF5's error stack: the closest to the cause (an MPI-IO or system
// error when there is one).
herr_t innermost(unsigned n, const H5E_error2_t* e, void* out) {
    if (n == 0 && e != nullptr && e->desc != nullptr) *static_cast<std::string*>(out) = e->desc;
    return 0;
}

// errno values that name why a file write failed (a directory gone counts: the run checked it
// before the first step). A collective write fails on every rank, but only the ranks whose own
// write failed hold one of these; the others hold whatever came last.
bool storage_errno(int e) {
    return e == ENOSPC || e == EFBIG || e == EDQUOT || e == EIO || e == EROFS || e == EACCES ||
           e == EPERM || e == EMFILE || e == ENFILE || e == ENOENT || e == ENOTDIR ||
           e == ENAMETOOLONG;
}

std::string failure(const std::string& what, int saved_errno) {
    std::string reason;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, &innermost, &reason);
    std::string text = what + ": HDF5 call failed";
    if (!reason.empty()) text += " (" + reason + ")";
    if (storage_errno(saved_errno)) text += std::string(": ") + std::strerror(saved_errno);
    return text;
}

// Under a FatalWrites guard: the rank that holds the system's reason says it and ends the job
// at once; the others give it ten seconds to do so (they are ended with it), then say what they
// know themselves.
[[noreturn]] void fail_fatally(const std::string& text, int saved) {
    if (!storage_errno(saved)) {
        // The job is ending: a SIGTERM from the launcher now ends this rank instead of asking
        // it for a checkpoint (run/stop_request.hpp).
        for (int sig : {SIGTERM, SIGINT, SIGUSR1}) std::signal(sig, SIG_DFL);
        ::sleep(10);
    }
    const int rank = comm_rank(MPI_COMM_WORLD);
    std::fprintf(stderr, "gridsim: rank %d: error: %s; %s removed, earlier files untouched\n", rank,
                 text.c_str(), g_fatal_tmp.c_str());
    std::fflush(stderr);
    ::unlink(g_fatal_tmp.c_str());
    abort_all(1);
}

// Throws; or under an Attempt keeps the failure (the first) and returns; or under FatalWrites
// ends the job.
void fail(const std::string& what) {
    const int saved = errno;
    const std::string text = failure(what, saved);
    if (g_fatal) fail_fatally(text, saved);
    if (g_attempt == nullptr) throw std::runtime_error(text);
    g_attempt->keep(text, storage_errno(saved));
}

}  // namespace

hid_t check(hid_t id, const std::string& what) {
    if (id < 0) fail(what);
    return id;
}

void check_status(herr_t status, const std::string& what) {
    if (status < 0) fail(what);
}

void Attempt::keep(const std::string& text, bool telling) {
    if (!failure_.empty()) return;
    failure_ = text;
    telling_ = telling;
}

Attempt::Attempt() {
    errno = 0;  // a stale errno must not pass for the reason of a later failure
    g_attempt = this;
}

Attempt::~Attempt() { g_attempt = nullptr; }

std::string Attempt::agree(MPI_Comm comm) const { return agree_on_error(comm, failure_, telling_); }

FatalWrites::FatalWrites(std::string tmp_path) {
    errno = 0;
    g_fatal_tmp = std::move(tmp_path);
    g_fatal = true;
}

FatalWrites::~FatalWrites() { g_fatal = false; }

void quiet_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

namespace {

// An MPI_Info object, freed with its owner.
class Info {
public:
    Info() { MPI_Info_create(&info_); }
    Info(const Info&) = delete;
    Info& operator=(const Info&) = delete;
    ~Info() { MPI_Info_free(&info_); }
    [[nodiscard]] MPI_Info get() const { return info_; }

private:
    MPI_Info info_ = MPI_INFO_NULL;
};

}  // namespace

Id file_access(MPI_Comm comm, const std::vector<std::pair<std::string, std::string>>& hints) {
    Id fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate(file access)"), H5Pclose);
    if (hints.empty()) {
        check_status(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL), "H5Pset_fapl_mpio");
        return fapl;
    }
    const Info info;  // HDF5 keeps its own duplicate
    for (const auto& [name, value] : hints) MPI_Info_set(info.get(), name.c_str(), value.c_str());
    check_status(H5Pset_fapl_mpio(fapl, comm, info.get()), "H5Pset_fapl_mpio");
    return fapl;
}

Id collective_transfer() {
    Id dxpl(check(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate(transfer)"), H5Pclose);
    check_status(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
    return dxpl;
}

namespace {

template <class T>
void write_attr(hid_t obj, const char* name, hid_t type, const std::vector<T>& values) {
    const hsize_t n = values.size();
    Id space(check(H5Screate_simple(1, &n, nullptr), "H5Screate_simple"), H5Sclose);
    Id attr(check(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT),
                  std::string("attribute ") + name),
            H5Aclose);
    check_status(H5Awrite(attr, type, values.data()), std::string("write attribute ") + name);
}

template <class T>
std::vector<T> read_attr(hid_t obj, const char* name, hid_t type) {
    Id attr(check(H5Aopen(obj, name, H5P_DEFAULT), std::string("attribute ") + name), H5Aclose);
    Id space(check(H5Aget_space(attr), "H5Aget_space"), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    std::vector<T> out(static_cast<std::size_t>(n < 0 ? 0 : n));
    check_status(H5Aread(attr, type, out.data()), std::string("read attribute ") + name);
    return out;
}

}  // namespace

void write_string_attr(hid_t obj, const char* name, const std::string& value) {
    Id type(check(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
    check_status(H5Tset_size(type, value.empty() ? 1 : value.size()), "H5Tset_size");
    Id space(check(H5Screate(H5S_SCALAR), "H5Screate"), H5Sclose);
    Id attr(check(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT),
                  std::string("attribute ") + name),
            H5Aclose);
    const std::string text = value.empty() ? std::string(1, '\0') : value;
    check_status(H5Awrite(attr, type, text.data()), std::string("write attribute ") + name);
}

void write_double_attr(hid_t obj, const char* name, const std::vector<double>& values) {
    write_attr(obj, name, H5T_NATIVE_DOUBLE, values);
}

void write_int_attr(hid_t obj, const char* name, const std::vector<long long>& values) {
    write_attr(obj, name, H5T_NATIVE_LLONG, values);
}

std::string read_string_attr(hid_t obj, const char* name) {
    Id attr(check(H5Aopen(obj, name, H5P_DEFAULT), std::string("attribute ") + name), H5Aclose);
    Id type(check(H5Aget_type(attr), "H5Aget_type"), H5Tclose);
    if (H5Tget_class(type) != H5T_STRING)
        throw std::runtime_error(std::string("attribute ") + name + " is not a string");
    const std::size_t size = H5Tget_size(type);
    std::string out(size, '\0');
    Id mem(check(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
    check_status(H5Tset_size(mem, size), "H5Tset_size");
    check_status(H5Aread(attr, mem, out.data()), std::string("read attribute ") + name);
    out.resize(std::min(out.size(), out.find('\0')));
    return out;
}

std::vector<double> read_double_attr(hid_t obj, const char* name) {
    return read_attr<double>(obj, name, H5T_NATIVE_DOUBLE);
}
std::vector<long long> read_int_attr(hid_t obj, const char* name) {
    return read_attr<long long>(obj, name, H5T_NATIVE_LLONG);
}

bool has_attr(hid_t obj, const char* name) { return H5Aexists(obj, name) > 0; }

SlabSpaces slab_spaces(hid_t dset, const std::vector<hsize_t>& start,
                       const std::vector<hsize_t>& count, bool take_part) {
    hsize_t elements = 1;
    for (hsize_t c : count) elements *= c;
    if (!take_part || elements == 0) {
        take_part = false;
        elements = 1;  // a space must have a size; nothing of it is selected
    }
    SlabSpaces s{Id(check(H5Screate_simple(1, &elements, nullptr), "memory space"), H5Sclose),
                 Id(check(H5Dget_space(dset), "file space"), H5Sclose)};
    if (take_part) {
        check_status(H5Sselect_hyperslab(s.file, H5S_SELECT_SET, start.data(), nullptr,
                                         count.data(), nullptr),
                     "file hyperslab");
    } else {
        H5Sselect_none(s.memory);
        H5Sselect_none(s.file);
    }
    return s;
}

bool is_hdf5(const std::string& path) {
    quiet_errors();
#if H5_VERSION_GE(1, 12, 0)
    if (H5Fis_accessible(path.c_str(), H5P_DEFAULT) <= 0) return false;
#else
    if (H5Fis_hdf5(path.c_str()) <= 0) return false;
#endif
    // The signature alone does not prove the file is whole: open it.
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return false;
    H5Fclose(f);
    return true;
}

}  // namespace gridsim::h5
