// Transport ipc with the fields registered with the halo exchange, on every process grid this
// run's rank count allows, 2D and 3D, periodic and Dirichlet, halos 1 and 3 deep: faces across y
// and z stored straight into the neighbour's field (no pack, no unpack), faces across x (a few
// points per row) packed. Every halo point holds its owner's point (edges and corners too where
// the halo is deeper than one), every other point is untouched (support/halo_check.hpp). Two
// registered fields and an unregistered one (all of whose faces go packed) are exchanged in
// turn, twice over, so the handshake's counters and tags move on across fields and paths. Ranks
// may share a GPU. Large faces (a megabyte or more) moved beside other work go by a copy engine,
// both kinds.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <array>
#include <string>
#include <vector>

#include "gpu/require_gpu.hpp"
#include "platform/backend_select.hpp"
#include "problems/problem.hpp"
#include "support/halo_check.hpp"
#include "support/mpi_helpers.hpp"

using namespace gridsim;

namespace {

// Returns whether the grid was checked (false: it leaves a rank thinner than the halo). Rows of
// at least 64 doubles go straight (`wide` decks: 65 points or more per rank along x on up to
// four ranks; faces across y and z). `beside_work`: HaloExchange::exchange's.
bool check_ipc_exchange(const std::string& deck, int dims, const std::array<int, 3>& pg, int depth,
                        bool wide, bool beside_work = false) {
    const std::string grid =
        fmt::format("parallel.process_grid=[{}]", fmt::join(pg.begin(), pg.begin() + dims, ","));
    const Config cfg = load_config(deck, "halo.toml",
                                   {grid, "parallel.backend=cuda", "parallel.share_gpus=true",
                                    "parallel.transport=ipc", "problem.precision=double"});
    const Domain dom = make_domain(cfg);
    if (!decomposition_problem(dom, pg, test::world_size(), depth).empty()) return false;
    CartTopology topo(MPI_COMM_WORLD, cfg, dom, depth);
    BackendChoice<double> choice = choose_backend<double>(cfg, topo.comm());
    EXPECT_EQ(choice.transport, TransportKind::ipc);
    if (!choice.ipc.everywhere) return false;  // the same on every rank
    Backend<double>& be = *choice.backend;
    const FieldExtents ext =
        FieldExtents::make(dom.dims, topo.subdomain().size, depth, be.row_alignment());
    std::array<Field<double>, 3> f;
    for (auto& field : f) field = be.allocate_field(ext);
    HaloExchange<double> halo(topo, depth, be, TransportKind::ipc, choice.ipc,
                              {f[0].view(), f[1].view()});
    // Every remote face across y or z of a wide deck goes straight, every other packed.
    const Subdomain& sub = topo.subdomain();
    int straight = 0;
    for (int face = 2; face < 2 * dims; ++face) {
        straight += wide && sub.has_neighbour[face] && topo.neighbour(face) != topo.rank() ? 1 : 0;
    }
    EXPECT_EQ(halo.faces_stored(), straight);
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 3; ++i) {
            SCOPED_TRACE(
                fmt::format("round {}, field {} ({})", round, i, i < 2 ? "registered" : "packed"));
            const double tag = 0.25 * i + 0.125 * round;  // exact in double
            const std::vector<double> sent = test::coded_field(topo, dom, ext, tag);
            be.upload(sent, f[i].view());
            halo.exchange(f[i].view(), beside_work);
            std::vector<double> got;
            be.download(f[i].view(), got);
            test::expect_exchanged(topo, dom, pg, ext, sent, got, tag);
        }
    }
    return true;
}

}  // namespace

TEST(GpuHaloExchange, IpcStoresFacesStraightIntoTheNeighboursFields) {
    GRIDSIM_REQUIRE_GPU();
    const int n = test::world_size();
    if (n < 2) GTEST_SKIP() << "needs several ranks";
    int checked = 0;
    for (int depth : {1, 3}) {
        for (const char* bc : {"dirichlet", "periodic"}) {
            for (bool wide : {false, true}) {
                const std::string deck3 =
                    wide ? fmt::format("[grid]\ncells = [260, 7, 6]\n[boundary]\nkind = \"{}\"\n",
                                       bc)
                         : fmt::format(test::kHaloDeck3D, bc);
                const std::string deck2 =
                    wide ? fmt::format("[grid]\ncells = [260, 9]\n[boundary]\nkind = \"{}\"\n", bc)
                         : fmt::format(test::kHaloDeck2D, bc);
                for (int dims : {2, 3}) {
                    for (const auto& pg : test::process_grids(n, dims)) {
                        SCOPED_TRACE(fmt::format("depth {} {} {} process grid {}x{}x{}", depth, bc,
                                                 wide ? "wide" : "narrow", pg[0], pg[1], pg[2]));
                        checked +=
                            check_ipc_exchange(dims == 3 ? deck3 : deck2, dims, pg, depth, wide);
                    }
                }
            }
        }
    }
    // Faces of a megabyte or more (z faces of 300 x 300 points, 3 deep, 2.2 MB) moved beside
    // other work (as a split pass's are) go by a copy engine: packed and straight, between the
    // kernels that meet and tell the peer.
    for (const char* bc : {"dirichlet", "periodic"}) {
        const std::string large =
            fmt::format("[grid]\ncells = [300, 300, 8]\n[boundary]\nkind = \"{}\"\n", bc);
        for (const auto& pg : test::process_grids(n, 3)) {
            SCOPED_TRACE(
                fmt::format("depth 3 {} large process grid {}x{}x{}", bc, pg[0], pg[1], pg[2]));
            checked += check_ipc_exchange(large, 3, pg, 3, true, true);
        }
    }
    // Every grid checked here unless the GPUs do not all reach each other (then none).
    if (checked == 0) GTEST_SKIP() << "these GPUs do not all reach each other";
    EXPECT_GE(checked, 16);
}
