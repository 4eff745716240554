#include "io/room.hpp"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "parallel/mpi_session.hpp"

namespace gridsim {

namespace {

// HDF5's superblock, object headers, attribute heaps and B-trees of one gridsim file, rounded
// up generously (docs/tuning.md, "Room for a file").
constexpr std::uint64_t kFileOverheadBytes = 16 * 1024;

}  // namespace

std::uint64_t snapshot_file_bytes(std::uint64_t field_bytes, std::uint64_t text_bytes) {
    return field_bytes + text_bytes + kFileOverheadBytes;
}

std::string check_room(MPI_Comm comm, const std::string& path, std::uint64_t bytes) {
    std::string error;
    if (comm_rank(comm) == 0) {
        const std::string dir = std::filesystem::absolute(path).parent_path().string();
        struct statvfs fs {};
        if (::statvfs(dir.c_str(), &fs) == 0) {
            const std::uint64_t free = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
            if (free < bytes) {
                error = fmt::format(
                    "cannot write {}: it needs {} bytes, its file system has {} "
                    "free: {}",
                    path, bytes, free, std::strerror(ENOSPC));
            }
        }
    }
    broadcast_string(comm, error);
    return error;
}

}  // namespace gridsim
