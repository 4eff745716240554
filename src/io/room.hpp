// Whether a file system has room for a file about to be written: asked before a collective
// write begins, so that a full disk is refused by every rank together instead of failing
// inside HDF5's collective calls on some ranks only.
#pragma once

#include <cstdint>
#include <string>

#include <mpi.h>

namespace gridsim {

// Bytes a snapshot file of `field_bytes` of data and `text_bytes` of attribute text (the deck,
// the residual history) needs on disk: the data, the text and HDF5's own structures.
std::uint64_t snapshot_file_bytes(std::uint64_t field_bytes, std::uint64_t text_bytes);

// Rank 0 compares `bytes` with the space the file system of `path`'s directory has free for
// this user; collective. Returns "" (room, or the free space cannot be read: the write itself
// then reports what fails) or the error, the same on every rank, naming the file and ENOSPC.
std::string check_room(MPI_Comm comm, const std::string& path, std::uint64_t bytes);

}  // namespace gridsim
