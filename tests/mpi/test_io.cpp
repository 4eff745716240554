// HDF5 output end to end: files written by 4 ranks read back on 1 and 2 ranks bitwise; a
// restart from a checkpoint continues bitwise like the uninterrupted run, on the same and on
// different rank counts; a checkpoint interrupted before its rename leaves the previous one
// intact and restartable.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "io/h5.hpp"
#include "io/output.hpp"
#include "io/snapshot.hpp"
#include "parallel/gather.hpp"
#include "problems/problem.hpp"
#include "support/mpi_helpers.hpp"

using namespace gridsim;
namespace fs = std::filesystem;

namespace {

// A scratch directory every rank agrees on (rank 0 names it).
std::string shared_tmpdir(const std::string& tag) {
    std::string path = fs::temp_directory_path() / fmt::format("gridsim_io_{}_{}", tag, getpid());
    long len = static_cast<long>(path.size());
    MPI_Bcast(&len, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    path.resize(len);
    MPI_Bcast(path.data(), static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (test::world_rank() == 0) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return path;
}

// Runs `deck` on world ranks 0..n-1 with the output layer attached (and a restart file if
// given); returns the gathered field and history on world rank 0.
RunResult run_with_output(int n, const std::string& deck, const std::vector<std::string>& sets,
                          const std::string& restart = {}) {
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, test::world_rank() < n ? 0 : MPI_UNDEFINED, test::world_rank(),
                   &sub);
    RunResult result;
    if (sub != MPI_COMM_NULL) {
        const Config cfg = load_config(deck, "io.toml", test::pinned_backend(deck, sets));
        RunOptions opt;
        opt.gather_field = true;
        OutputWriter out(cfg, sub);
        out.attach(opt);
        if (!restart.empty()) attach_restart(restart, cfg, sub, opt);
        result = run_problem(cfg, sub, opt);
        MPI_Comm_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return result;
}

// Reads /fields/u of `path` on world ranks 0..n-1 and gathers the solved grid to rank 0.
template <class T>
std::vector<double> read_on_ranks(int n, const std::string& path, const Config& cfg) {
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, test::world_rank() < n ? 0 : MPI_UNDEFINED, test::world_rank(),
                   &sub);
    std::vector<double> global;
    if (sub != MPI_COMM_NULL) {
        const Domain dom = make_domain(cfg);
        const CartTopology topo(sub, cfg, dom, 1);
        const FieldExtents ext = FieldExtents::make(dom.dims, topo.subdomain().size, 1, 8);
        std::vector<T> buf(ext.total, T(-7));
        read_field(path, topo.comm(), dom, topo.subdomain(),
                   HostField{buf.data(), sizeof(T) == 4, ext});
        global = gather_to_root(topo, dom, FieldView<const T>{buf.data(), ext});
        MPI_Comm_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return global;
}

std::size_t differences(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return std::max(a.size(), b.size()) + 1;
    std::size_t n = 0;
    for (std::size_t p = 0; p < a.size(); ++p) n += a[p] != b[p] ? 1 : 0;
    return n;
}

struct IoDeck {
    const char* name;
    std::string text;
};
void PrintTo(const IoDeck& d, std::ostream* os) { *os << d.name; }

const std::vector<IoDeck> kDecks = {
    {"heat3d_double",
     "[grid]\ncells = [13, 11, 9]\n[initial]\nkind = \"hotspot\"\nradius = 0.4\n[time]\nsteps = "
     "12\n"},
    {"heat3d_float",
     "[problem]\nprecision = \"float\"\n[grid]\ncells = [12, 9, 10]\n[boundary]\nkind = "
     "\"periodic\"\n"
     "[initial]\nkind = \"hotspot\"\nradius = 0.4\n[time]\nsteps = 12\n"},
    {"heat2d_double",
     "[grid]\ncells = [17, 13]\n[boundary]\ny = \"periodic\"\n[time]\nsteps = 12\n"},
    {"jacobi2d_benchmark_float",
     "[problem]\nname = \"jacobi\"\n[grid]\ncells = [18, 14]\n[boundary]\nkind = \"benchmark\"\n"
     "[time]\nsteps = 12\nnorm_every = 3\n"},
};

class IoDeckTest : public testing::TestWithParam<IoDeck> {};

}  // namespace

TEST_P(IoDeckTest, WrittenOnFourRanksReadsBackBitwiseOnOneAndTwo) {
    const IoDeck& d = GetParam();
    const std::string dir = shared_tmpdir(std::string("rt_") + d.name);
    const int writers = std::min(4, test::world_size());
    const RunResult r = run_with_output(
        writers, d.text, {"output.write_final=true", fmt::format("output.dir=\"{}\"", dir)});
    const Config cfg = load_config(d.text, "io.toml", {});
    const std::string path = dir + "/snapshot_final.h5";
    for (int readers : {1, 2}) {
        if (readers > test::world_size()) continue;
        const auto back = cfg.precision == Precision::float32
                              ? read_on_ranks<float>(readers, path, cfg)
                              : read_on_ranks<double>(readers, path, cfg);
        if (test::world_rank() == 0) {
            EXPECT_EQ(differences(back, r.global_field), 0u) << "read on " << readers << " rank(s)";
        }
    }
    if (test::world_rank() == 0) fs::remove_all(dir);
}

TEST_P(IoDeckTest, RestartContinuesBitwiseOnAnyRankCount) {
    const IoDeck& d = GetParam();
    const std::string dir = shared_tmpdir(std::string("rs_") + d.name);
    const int n = test::world_size();
    const RunResult straight = run_with_output(n, d.text, {});
    // Checkpoints at steps 4, 8, 12: checkpoint.h5 holds 12, checkpoint.h5.prev holds 8.
    run_with_output(n, d.text,
                    {"output.checkpoint_every=4", fmt::format("output.dir=\"{}\"", dir)});
    for (int m : {1, 2, 4}) {
        if (m > n) continue;
        const RunResult again = run_with_output(m, d.text, {}, dir + "/checkpoint.h5.prev");
        if (test::world_rank() != 0) continue;
        EXPECT_EQ(again.start_step, 8);
        EXPECT_EQ(differences(again.global_field, straight.global_field), 0u)
            << "restart on " << m << " rank(s)";
        // The history up to the checkpoint comes from the file, bitwise; later residuals are
        // sums over ranks (MPI_Allreduce of per-rank partial sums), bitwise on the same rank
        // count and equal to rounding on another.
        ASSERT_EQ(again.residual_history.size(), straight.residual_history.size());
        for (std::size_t k = 0; k < straight.residual_history.size(); ++k) {
            const auto& [step, res] = straight.residual_history[k];
            EXPECT_EQ(again.residual_history[k].first, step);
            if (step <= 8 || m == n) {
                EXPECT_EQ(again.residual_history[k].second, res) << "step " << step;
            } else {
                EXPECT_NEAR(again.residual_history[k].second, res, 1e-12 * res) << "step " << step;
            }
        }
    }
    if (test::world_rank() == 0) fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Decks, IoDeckTest, testing::ValuesIn(kDecks),
                         [](const testing::TestParamInfo<IoDeck>& info) {
                             return info.param.name;
                         });

// A crash between writing a checkpoint and renaming it leaves a stale checkpoint.h5.tmp next
// to the last complete checkpoint. That checkpoint must still restart, and the next
// checkpoint must replace the stale file.
TEST(Checkpoint, InterruptedBeforeRenameLeavesThePreviousIntact) {
    const IoDeck& d = kDecks[0];
    const std::string dir = shared_tmpdir("crash");
    const int n = test::world_size();
    const RunResult straight = run_with_output(n, d.text, {});
    const std::vector<std::string> ckpt = {"output.checkpoint_every=4", "time.steps=8",
                                           fmt::format("output.dir=\"{}\"", dir)};
    run_with_output(n, d.text, ckpt);  // checkpoint.h5 at step 8
    if (test::world_rank() == 0) {
        std::ofstream(dir + "/checkpoint.h5.tmp") << "half a checkpoint: the writer died here";
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const RunResult resumed = run_with_output(n, d.text, {}, dir + "/checkpoint.h5");
    if (test::world_rank() == 0) {
        EXPECT_EQ(resumed.start_step, 8);
        EXPECT_EQ(differences(resumed.global_field, straight.global_field), 0u);
    }
    run_with_output(n, d.text, ckpt);  // writes over the stale temporary file
    if (test::world_rank() == 0) {
        EXPECT_FALSE(fs::exists(dir + "/checkpoint.h5.tmp"));
        EXPECT_TRUE(fs::exists(dir + "/checkpoint.h5.prev"));
        fs::remove_all(dir);
    }
}

// output.mpi_hints reach the MPI-IO file HDF5 opens: its info (MPI_File_get_info) holds each
// hint the MPI-IO layer keeps, with the value asked for. ROMIO keeps its collective-buffering
// hints on every file system; the striping hints only where the file system takes them.
TEST(MpiHints, ReachTheOpenMpiFile) {
    const std::string dir = shared_tmpdir("hints");
    const std::vector<std::pair<std::string, std::string>> hints = {
        {"cb_buffer_size", "1048576"}, {"romio_cb_write", "enable"}, {"romio_ds_write", "disable"}};
    const h5::Id fapl = h5::file_access(MPI_COMM_WORLD, hints);
    const std::string path = dir + "/hints.h5";
    const h5::Id file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), H5Fclose);
    ASSERT_GE(file.get(), 0);
    void* handle = nullptr;
    ASSERT_GE(H5Fget_vfd_handle(file, fapl, &handle), 0);
    MPI_Info info = MPI_INFO_NULL;
    ASSERT_EQ(MPI_File_get_info(*static_cast<MPI_File*>(handle), &info), MPI_SUCCESS);
    for (const auto& [name, value] : hints) {
        char got[MPI_MAX_INFO_VAL + 1] = {};
        int found = 0;
        MPI_Info_get(info, name.c_str(), MPI_MAX_INFO_VAL, got, &found);
        EXPECT_TRUE(found) << name;
        EXPECT_EQ(std::string(got), value) << name;
    }
    MPI_Info_free(&info);
}
