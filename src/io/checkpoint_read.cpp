// Reading a checkpoint's metadata for --restart, and the deck a file records (snapshot.hpp).
#include "io/snapshot.hpp"
#include "parallel/collectives.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "io/h5.hpp"
#include "parallel/together.hpp"

namespace gridsim {

namespace {

// The checkpoint's /fields/u: the deck's full array, in the deck's precision ("" if so).
std::string field_problem(const h5::Id& file, const std::string& path, const Config& cfg) {
    if (H5Lexists(file, "/fields/u", H5P_DEFAULT) <= 0)
        return fmt::format("--restart {}: no dataset /fields/u", path);
    h5::Id dset(h5::check(H5Dopen2(file, "/fields/u", H5P_DEFAULT), "/fields/u"), H5Dclose);
    // The dataset itself must be the deck's full array, whatever /grid claims.
    h5::Id space(h5::check(H5Dget_space(dset), "/fields/u space"), H5Sclose);
    const auto expect = h5::axes_slowest_first(cfg.cells, cfg.dims);
    std::vector<hsize_t> shape(3, 0);
    const int ndims = H5Sget_simple_extent_ndims(space);
    if (ndims >= 0 && ndims <= 3) H5Sget_simple_extent_dims(space, shape.data(), nullptr);
    shape.resize(static_cast<std::size_t>(std::clamp(ndims, 0, 3)));
    if (ndims != cfg.dims || shape != expect) {
        return fmt::format(
            "--restart {}: /fields/u holds a {}-dimensional array [{}], the deck "
            "needs [{}]",
            path, ndims, fmt::join(shape, ", "), fmt::join(expect, ", "));
    }
    h5::Id type(h5::check(H5Dget_type(dset), "type"), H5Tclose);
    const std::size_t want_size = cfg.precision == Precision::float32 ? 4 : 8;
    if (H5Tget_class(type) != H5T_FLOAT) {
        return fmt::format("--restart {}: /fields/u does not hold floating-point values", path);
    }
    if (H5Tget_size(type) != want_size) {
        return fmt::format(
            "--restart {}: checkpoint precision differs from problem.precision = \"{}\"", path,
            to_string(cfg.precision));
    }
    return {};
}

// The checkpoint's residual history into `info` ("" when it is one gridsim wrote).
std::string read_history(const h5::Id& file, const std::string& path, CheckpointInfo& info) {
    h5::Id hist(h5::check(H5Dopen2(file, "/restart_residual_history", H5P_DEFAULT), "history"),
                H5Dclose);
    h5::Id hspace(h5::check(H5Dget_space(hist), "history space"), H5Sclose);
    hsize_t hd[2] = {0, 2};
    // At most one residual per sweep: anything else is not a history gridsim wrote.
    if (H5Sget_simple_extent_ndims(hspace) != 2 ||
        H5Sget_simple_extent_dims(hspace, hd, nullptr) != 2 || hd[1] != 2 ||
        (info.step >= 0 && hd[0] > static_cast<hsize_t>(info.step) + 1)) {
        return fmt::format("--restart {}: /restart_residual_history is not [sweeps][2]", path);
    }
    std::vector<double> flat(hd[0] * 2);
    if (!flat.empty())
        h5::check_status(
            H5Dread(hist, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data()),
            "history");
    for (std::size_t n = 0; n < hd[0]; ++n) {
        info.residual_history.emplace_back(static_cast<std::int64_t>(flat[2 * n]), flat[2 * n + 1]);
    }
    return {};
}

// Rank 0 checks that `path` is a checkpoint `cfg` can continue and reads its metadata.
std::string inspect_checkpoint(const std::string& path, const Config& cfg, CheckpointInfo& info) {
    if (!std::filesystem::exists(path)) return fmt::format("--restart {}: no such file", path);
    if (!h5::is_hdf5(path)) {
        return fmt::format("--restart {}: not an HDF5 file (damaged or truncated?)", path);
    }
    try {
        h5::Id file(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open " + path),
                    H5Fclose);
        if (!h5::has_attr(file, "format") || h5::read_string_attr(file, "format") != "gridsim") {
            return fmt::format("--restart {}: not a gridsim file", path);
        }
        if (h5::read_string_attr(file, "kind") != "checkpoint") {
            return fmt::format(
                "--restart {}: a snapshot, not a checkpoint (write one with "
                "output.checkpoint_every)",
                path);
        }
        const std::string problem = h5::read_string_attr(file, "problem");
        if (problem != cfg.problem) {
            return fmt::format("--restart {}: checkpoint of a {} problem, the deck is {}", path,
                               problem, cfg.problem);
        }
        h5::Id grid(h5::check(H5Gopen2(file, "/grid", H5P_DEFAULT), "/grid"), H5Gclose);
        const auto cells = h5::read_int_attr(grid, "global_cells");
        const std::vector<long long> want(cfg.cells.begin(), cfg.cells.begin() + cfg.dims);
        if (cells != want) {
            return fmt::format("--restart {}: checkpoint grid {} differs from the deck's {}", path,
                               fmt::join(cells, "x"), fmt::join(want, "x"));
        }
        if (std::string why = field_problem(file, path, cfg); !why.empty()) return why;
        info.step = h5::read_int_attr(file, "step").at(0);
        info.time = h5::read_double_attr(file, "time").at(0);
        if (std::string why = read_history(file, path, info); !why.empty()) return why;
        if (info.step < 0 || info.step > cfg.steps) {
            return fmt::format("--restart {}: checkpoint at step {} is past time.steps = {}", path,
                               info.step, cfg.steps);
        }
    } catch (const std::exception& e) {
        return fmt::format("--restart {}: damaged checkpoint ({})", path, e.what());
    }
    return {};
}

}  // namespace

CheckpointInfo read_checkpoint_info(const std::string& path, MPI_Comm comm, const Config& cfg) {
    h5::quiet_errors();
    CheckpointInfo info;
    std::string error;
    if (comm_rank(comm) == 0) error = inspect_checkpoint(path, cfg, info);
    broadcast_string(comm, error);
    if (!error.empty()) throw ConfigError(error);
    long long step = info.step;
    broadcast(comm, &step);
    broadcast(comm, &info.time);
    info.step = step;
    // The history as (step, residual) pairs of doubles in one broadcast (steps are exact in a
    // double up to 2^53, as they are in the file).
    long n = static_cast<long>(info.residual_history.size());
    broadcast(comm, &n);
    std::vector<double> flat(2 * static_cast<std::size_t>(n));
    for (std::size_t k = 0; k < info.residual_history.size(); ++k) {
        flat[2 * k] = static_cast<double>(info.residual_history[k].first);
        flat[2 * k + 1] = info.residual_history[k].second;
    }
    broadcast(comm, flat.data(), static_cast<int>(flat.size()));
    info.residual_history.resize(static_cast<std::size_t>(n));
    for (std::size_t k = 0; k < info.residual_history.size(); ++k) {
        info.residual_history[k] = {static_cast<std::int64_t>(flat[2 * k]), flat[2 * k + 1]};
    }
    return info;
}

std::string written_deck(const std::string& path) {
    h5::quiet_errors();
    if (!h5::is_hdf5(path)) return {};
    try {
        h5::Id file(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path), H5Fclose);
        if (H5Lexists(file, "/provenance", H5P_DEFAULT) <= 0) return {};
        h5::Id prov(h5::check(H5Gopen2(file, "/provenance", H5P_DEFAULT), "/provenance"), H5Gclose);
        return h5::has_attr(prov, "deck") ? h5::read_string_attr(prov, "deck") : std::string();
    } catch (const std::exception&) {
        return {};
    }
}

}  // namespace gridsim
