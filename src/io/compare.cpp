#include "io/compare.hpp"
#include "parallel/collectives.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>
#include <vector>

#include "config/config.hpp"
#include "io/h5.hpp"
#include "kernels/backend.hpp"
#include "mesh/domain.hpp"
#include "parallel/mpi_session.hpp"

namespace gridsim {

namespace {

struct FieldPlan {
    std::string name;
    std::vector<hsize_t> dims;
};

h5::Id open_serial(const std::string& path) {
    if (!std::filesystem::exists(path)) throw ConfigError(fmt::format("{}: no such file", path));
    if (!h5::is_hdf5(path)) {
        throw ConfigError(fmt::format("{}: not an HDF5 file (damaged or truncated?)", path));
    }
    return h5::Id(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open " + path),
                  H5Fclose);
}

std::vector<std::string> field_names(hid_t file, const std::string& path) {
    if (H5Lexists(file, "/fields", H5P_DEFAULT) <= 0)
        throw ConfigError(fmt::format("{}: no /fields group", path));
    h5::Id group(h5::check(H5Gopen2(file, "/fields", H5P_DEFAULT), "/fields"), H5Gclose);
    H5G_info_t info;
    h5::check_status(H5Gget_info(group, &info), "H5Gget_info");
    std::vector<std::string> names;
    for (hsize_t i = 0; i < info.nlinks; ++i) {
        char name[256] = {};
        H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name,
                           H5P_DEFAULT);
        names.emplace_back(name);
    }
    return names;
}

// Where the external link `full` of `file` points, as "FILE:OBJECT" ("" when it is not one).
std::string external_target(hid_t file, const std::string& full) {
    H5L_info_t link{};
    if (H5Lget_info(file, full.c_str(), &link, H5P_DEFAULT) < 0 || link.type != H5L_TYPE_EXTERNAL)
        return {};
    std::vector<char> value(link.u.val_size);
    const char* target_file = nullptr;
    const char* target_object = nullptr;
    unsigned flags = 0;
    if (H5Lget_val(file, full.c_str(), value.data(), value.size(), H5P_DEFAULT) < 0 ||
        H5Lunpack_elink_val(value.data(), value.size(), &flags, &target_file, &target_object) < 0)
        return "an unreadable target";
    return fmt::format("{}:{}", target_file, target_object);
}

// ConfigError naming `path` and what `full` is instead, unless it is a dataset gridsim can open.
void require_dataset(hid_t file, const std::string& path, const std::string& full) {
    const std::string target = external_target(file, full);
    H5O_info_t info{};
    if (H5Oget_info_by_name(file, full.c_str(), &info, H5P_DEFAULT) < 0) {
        if (!target.empty())
            throw ConfigError(fmt::format(
                "{}: {} is an external link to {}, which cannot be opened (a missing file?)", path,
                full, target));
        throw ConfigError(fmt::format("{}: {} cannot be opened (a dangling link?)", path, full));
    }
    if (info.type == H5O_TYPE_GROUP)
        throw ConfigError(fmt::format("{}: {} is a group, not a dataset", path, full));
    if (info.type != H5O_TYPE_DATASET)
        throw ConfigError(fmt::format("{}: {} is not a dataset", path, full));
}

// Shape and type size of /fields/<name>, or ConfigError naming what is missing.
std::pair<std::vector<hsize_t>, std::size_t> describe(hid_t file, const std::string& path,
                                                      const std::string& name) {
    const std::string full = "/fields/" + name;
    if (H5Lexists(file, full.c_str(), H5P_DEFAULT) <= 0)
        throw ConfigError(fmt::format("{}: no dataset {}", path, full));
    require_dataset(file, path, full);
    h5::Id dset(h5::check(H5Dopen2(file, full.c_str(), H5P_DEFAULT), path + ": " + full), H5Dclose);
    h5::Id space(h5::check(H5Dget_space(dset), "space"), H5Sclose);
    h5::Id type(h5::check(H5Dget_type(dset), "type"), H5Tclose);
    if (H5Tget_class(type) != H5T_FLOAT)
        throw ConfigError(fmt::format("{}: {} is not floating point", path, full));
    const int rank = H5Sget_simple_extent_ndims(space);
    if (rank < 1 || rank > 3)
        throw ConfigError(
            fmt::format("{}: {} is {}-dimensional, not a 1D, 2D or 3D array", path, full, rank));
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    long double points = 1;
    for (hsize_t d : dims) points *= static_cast<long double>(d);
    if (points < 1)
        throw ConfigError(fmt::format("{}: {} is empty ([{}])", path, full, fmt::join(dims, ", ")));
    if (points > static_cast<long double>(std::int64_t{1} << 40))
        throw ConfigError(
            fmt::format("{}: {} has {:.3g} points, more than gridsim compare reads "
                        "(2^40)",
                        path, full, static_cast<double>(points)));
    return {dims, H5Tget_size(type)};
}

// Each rank reads its rows of A and of B as double: refuse what would not fit in memory.
void check_fits(const std::string& name, const std::vector<hsize_t>& dims, int nranks) {
    long double points = 1;
    for (hsize_t d : dims) points *= static_cast<long double>(d);
    const long double per_rank = 2 * sizeof(double) * points / nranks;
    const auto available = static_cast<long double>(available_host_memory());
    if (available > 0 && per_rank > available) {
        throw ConfigError(fmt::format(
            "field {} [{}]: comparing it on {} rank(s) needs {:.3g} GiB per rank, {:.3g} GiB "
            "available (use more ranks)",
            name, fmt::join(dims, "x"), nranks, static_cast<double>(per_rank / 1073741824.0),
            static_cast<double>(available / 1073741824.0)));
    }
}

// Rank 0 checks both files and decides the fields; the plan (or the error) is broadcast.
std::vector<FieldPlan> plan(const CompareOptions& opt, MPI_Comm comm) {
    std::string error;
    std::vector<FieldPlan> fields;
    if (comm_rank(comm) == 0) {
        try {
            const h5::Id a = open_serial(opt.a);
            const h5::Id b = open_serial(opt.b);
            const std::vector<std::string> names =
                opt.field.empty() ? field_names(a, opt.a) : std::vector{opt.field};
            for (const std::string& n : names) {
                const auto [da, sa] = describe(a, opt.a, n);
                const auto [db, sb] = describe(b, opt.b, n);
                if (da != db) {
                    throw ConfigError(fmt::format("/fields/{}: shape {} in {} but {} in {}", n,
                                                  fmt::join(da, "x"), opt.a, fmt::join(db, "x"),
                                                  opt.b));
                }
                if (sa != sb) {
                    throw ConfigError(fmt::format(
                        "/fields/{}: precision mismatch ({}-byte values in {}, {}-byte in {})", n,
                        sa, opt.a, sb, opt.b));
                }
                fields.push_back({n, da});
                check_fits(n, da, comm_size(comm));
            }
        } catch (const std::exception& e) {
            error = e.what();
        }
    }
    std::string wire = error;
    if (error.empty()) {
        for (const auto& f : fields) wire += fmt::format("{} {}\n", f.name, fmt::join(f.dims, " "));
    }
    int failed = error.empty() ? 0 : 1;
    broadcast(comm, &failed);
    broadcast_string(comm, wire);
    if (failed != 0) throw ConfigError(wire);
    fields.clear();
    std::size_t at = 0;
    while (at < wire.size()) {
        const std::size_t nl = wire.find('\n', at);
        std::istringstream line(wire.substr(at, nl - at));
        FieldPlan f;
        line >> f.name;
        for (hsize_t d; line >> d;) f.dims.push_back(d);
        fields.push_back(f);
        at = nl + 1;
    }
    return fields;
}

// This rank's rows (first dimension) of a field, as double.
std::vector<double> read_rows(const std::string& path, MPI_Comm comm, const FieldPlan& f,
                              hsize_t first, hsize_t rows) {
    const h5::Id fapl = h5::file_access(comm);
    h5::Id file(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), "open " + path), H5Fclose);
    h5::Id dset(h5::check(H5Dopen2(file, ("/fields/" + f.name).c_str(), H5P_DEFAULT),
                          path + ": /fields/" + f.name),
                H5Dclose);
    std::vector<hsize_t> start(f.dims.size(), 0), count = f.dims;
    start[0] = first;
    count[0] = rows;
    hsize_t n = 1;
    for (hsize_t c : count) n *= c;
    std::vector<double> out(n);
    const h5::SlabSpaces spaces = h5::slab_spaces(dset, start, count, rows > 0);
    const h5::Id dxpl = h5::collective_transfer();
    h5::check_status(H5Dread(dset, H5T_NATIVE_DOUBLE, spaces.memory, spaces.file, dxpl, out.data()),
                     "read " + path);
    return out;
}

}  // namespace

int compare_files(const CompareOptions& opt, MPI_Comm comm, std::string& text) {
    h5::quiet_errors();
    const std::vector<FieldPlan> fields = plan(opt, comm);
    const int rank = comm_rank(comm);
    const int nranks = comm_size(comm);
    int status = 0;
    for (const FieldPlan& f : fields) {
        const BlockRange rows = block_range(static_cast<int>(f.dims[0]), nranks, rank);
        const auto a = read_rows(opt.a, comm, f, rows.start, rows.size);
        const auto b = read_rows(opt.b, comm, f, rows.start, rows.size);
        // max|a-b|, max rel, sum (a-b)^2, sum b^2, outside tolerance, non-finite
        double mx[2] = {0.0, 0.0};
        double sums[4] = {0.0, 0.0, 0.0, 0.0};
        for (std::size_t p = 0; p < a.size(); ++p) {
            if (!std::isfinite(a[p]) || !std::isfinite(b[p])) {
                sums[3] += 1;
                continue;
            }
            const double d = std::abs(a[p] - b[p]);
            mx[0] = std::max(mx[0], d);
            if (b[p] != 0.0) mx[1] = std::max(mx[1], d / std::abs(b[p]));
            sums[0] += d * d;
            sums[1] += b[p] * b[p];
            if (d > opt.atol + opt.rtol * std::abs(b[p])) sums[2] += 1;
        }
        double gmx[2], gsums[4];
        allreduce(comm, mx, gmx, 2, Reduce::max);
        allreduce(comm, sums, gsums, 4, Reduce::sum);
        const bool pass = gsums[2] == 0 && gsums[3] == 0;
        status = pass ? status : 1;
        hsize_t points = 1;
        for (hsize_t d : f.dims) points *= d;
        if (rank == 0) {
            text += fmt::format(
                "field {} [{}]: max |a-b| {:.6e}, max rel {:.6e}, L2(a-b) {:.6e}, Linf(a-b) "
                "{:.6e}, relative L2 {:.6e}; "
                "{} of {} points outside atol {} + rtol {} * |b|, {} non-finite -> {}\n",
                f.name, fmt::join(f.dims, "x"), gmx[0], gmx[1], std::sqrt(gsums[0]), gmx[0],
                gsums[1] > 0 ? std::sqrt(gsums[0] / gsums[1]) : std::sqrt(gsums[0]),
                static_cast<long long>(gsums[2]), points, opt.atol, opt.rtol,
                static_cast<long long>(gsums[3]), pass ? "PASS" : "FAIL");
        }
    }
    if (rank == 0) text += status == 0 ? "PASS\n" : "FAIL\n";
    return status;
}

}  // namespace gridsim
