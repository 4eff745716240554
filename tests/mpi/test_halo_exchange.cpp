// Halo exchange on every process-grid shape the rank count allows (1D, 2D and 3D process
// grids), periodic and not: each rank fills its owned points with a code of its rank and the
// global index, and every halo point must then hold the value its owner wrote for the
// (wrapped) point across the face (support/halo_check.hpp). One-deep halos: edge and corner
// halos are not exchanged (star stencils) and must stay untouched, as must halos on faces
// without a neighbour. Deeper halos (temporal blocking) also carry the edges and corners
// between faces that have neighbours.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "parallel/halo_exchange.hpp"
#include "parallel/peer_routes.hpp"
#include "problems/problem.hpp"
#include "support/halo_check.hpp"
#include "support/mpi_helpers.hpp"

using namespace gridsim;

namespace {

using test::process_grids;

// Routes that mix two transports on one rank: a face takes MPI on host buffers as given
// (cuda_aware) or staged by the parity of its two ranks' sum (the same at both ends), the kinds
// agreed over the ranks as a run agrees them.
FaceRoutes mixed_routes(const CartTopology& topo) {
    FaceRoutes r;
    unsigned used = 0;
    for (int face = 0; face < 6; ++face) {
        const int peer = topo.neighbour(face);
        r.face[face] =
            (topo.rank() + peer) % 2 != 0 ? TransportKind::cuda_aware : TransportKind::staged;
        if (peer != MPI_PROC_NULL && peer != topo.rank())
            used |= 1u << static_cast<unsigned>(r.face[face]);
    }
    MPI_Allreduce(MPI_IN_PLACE, &used, 1, MPI_UNSIGNED, MPI_BOR, topo.comm());
    for (TransportKind k : {TransportKind::cuda_aware, TransportKind::staged})
        if ((used & (1u << static_cast<unsigned>(k))) != 0) r.kinds.push_back(k);
    return r;
}

// Returns whether the grid was checked (false: it leaves a rank thinner than the halo).
bool check_exchange(const std::string& deck, int dims, const std::array<int, 3>& pg, int depth = 1,
                    bool mixed = false) {
    const std::string grid =
        fmt::format("parallel.process_grid=[{}]", fmt::join(pg.begin(), pg.begin() + dims, ","));
    const Config cfg = load_config(deck, "halo.toml", {grid});
    const Domain dom = make_domain(cfg);
    // Grids that leave a rank fewer points than the halo is deep are refused (domain tests).
    if (!decomposition_problem(dom, pg, test::world_size(), depth).empty()) return false;
    CartTopology topo(MPI_COMM_WORLD, cfg, dom, depth);
    const Subdomain& sub = topo.subdomain();
    auto be = make_cpu_backend<double>();
    const FieldExtents ext = FieldExtents::make(dom.dims, sub.size, depth);
    Field<double> f = be->allocate_field(ext);
    const std::vector<double> host = test::coded_field(topo, dom, ext, 0.0);
    be->upload(host, f.view());
    const FaceRoutes routes = mixed_routes(topo);
    HaloExchange<double> halo(topo, depth, *be, TransportKind::staged, {}, {},
                              mixed ? &routes : nullptr);
    if (mixed && routes.mixed()) {
        EXPECT_EQ(std::string(halo.transport_name()), "cuda-aware+staged");
        int faces = 0;
        for (const auto& [kind, n] : halo.route_counts()) faces += n;
        int remote = 0;
        for (int face = 0; face < 2 * dims; ++face)
            remote += topo.neighbour(face) != MPI_PROC_NULL && topo.neighbour(face) != topo.rank();
        EXPECT_EQ(faces, remote);
    }
    // A periodic axis held by one rank along it is the rank's own neighbour on both faces.
    unsigned self = 0;
    for (int d = 0; d < dom.dims; ++d) self |= dom.periodic[d] && pg[d] == 1 ? 1u << d : 0u;
    EXPECT_EQ(halo.self_axes(), self);
    halo.exchange(f.view());
    std::vector<double> got;
    be->download(f.view(), got);
    test::expect_exchanged(topo, dom, pg, ext, host, got, 0.0);
    return true;
}

using test::kHaloDeck2D;
using test::kHaloDeck3D;

}  // namespace

TEST(HaloExchange, EveryFaceOfEvery3DProcessGrid) {
    for (const char* bc : {"dirichlet", "periodic"}) {
        for (const auto& pg : process_grids(test::world_size(), 3)) {
            SCOPED_TRACE(fmt::format("{} process grid {}x{}x{}", bc, pg[0], pg[1], pg[2]));
            check_exchange(fmt::format(kHaloDeck3D, bc), 3, pg);
        }
    }
}

TEST(HaloExchange, EveryFaceOfEvery2DProcessGrid) {
    for (const char* bc : {"dirichlet", "periodic"}) {
        for (const auto& pg : process_grids(test::world_size(), 2)) {
            SCOPED_TRACE(fmt::format("{} process grid {}x{}", bc, pg[0], pg[1]));
            check_exchange(fmt::format(kHaloDeck2D, bc), 2, pg);
        }
    }
}

// A route per neighbour: each face through the transport its two ranks share, two transports on
// one rank, deep halos too (their axes go one after another, each with its own faces).
TEST(HaloExchange, FacesOfOneRankTakeDifferentRoutes) {
    for (int depth : {1, 2}) {
        for (const auto& pg : process_grids(test::world_size(), 3)) {
            SCOPED_TRACE(fmt::format("depth {} process grid {}x{}x{}", depth, pg[0], pg[1], pg[2]));
            check_exchange(fmt::format(kHaloDeck3D, "periodic"), 3, pg, depth, true);
        }
    }
}

TEST(HaloExchange, MixedPeriodicAxes) {
    const std::string deck =
        "[grid]\ncells = [9, 7, 6]\n[boundary]\nx = \"periodic\"\nz = \"periodic\"\n";
    for (const auto& pg : process_grids(test::world_size(), 3)) {
        SCOPED_TRACE(fmt::format("process grid {}x{}x{}", pg[0], pg[1], pg[2]));
        check_exchange(deck, 3, pg);
    }
}

// Halos 2 and 3 deep, with their edges and corners, on every process grid the rank count allows.
// The decks grow with the rank count (3 points per rank on every axis of any grid), so that
// each factorisation at 8 ranks fits as the small decks' do at 4.
TEST(HaloExchange, DeepHalosCarryEdgesAndCorners) {
    const int n = test::world_size();
    const auto deck3d = [n](const std::string& kind) {
        return fmt::format("[grid]\ncells = [{}, {}, {}]\n[boundary]\nkind = \"{}\"\n", 3 * n + 3,
                           3 * n + 1, 3 * n + 2, kind);
    };
    const auto deck2d = [n](const std::string& kind) {
        return fmt::format("[grid]\ncells = [{}, {}]\n[boundary]\nkind = \"{}\"\n", 3 * n + 5,
                           3 * n + 3, kind);
    };
    const std::string mixed = fmt::format(
        "[grid]\ncells = [{}, {}, {}]\n[boundary]\nx = \"periodic\"\nz = \"periodic\"\n", 3 * n + 3,
        3 * n + 1, 3 * n);
    for (int depth : {2, 3}) {
        int checked = 0;  // grids thin for the depth are skipped; the others must be many
        for (const char* bc : {"dirichlet", "periodic"}) {
            for (const auto& pg : process_grids(n, 3)) {
                SCOPED_TRACE(fmt::format("depth {} {} process grid {}x{}x{}", depth, bc, pg[0],
                                         pg[1], pg[2]));
                checked += check_exchange(deck3d(bc), 3, pg, depth) ? 1 : 0;
            }
            for (const auto& pg : process_grids(n, 2)) {
                SCOPED_TRACE(
                    fmt::format("depth {} {} process grid {}x{}", depth, bc, pg[0], pg[1]));
                checked += check_exchange(deck2d(bc), 2, pg, depth) ? 1 : 0;
            }
        }
        for (const auto& pg : process_grids(n, 3)) {
            SCOPED_TRACE(
                fmt::format("depth {} mixed process grid {}x{}x{}", depth, pg[0], pg[1], pg[2]));
            checked += check_exchange(mixed, 3, pg, depth) ? 1 : 0;
        }
        EXPECT_GE(checked, 5) << "process grids checked at depth " << depth;
    }
}

// The ipc routes' table (parallel/peer_routes.hpp): every rank's entry, in rank order, on every
// rank, a rank without a GPU included (every other rank has none here).
TEST(GatherRankGpus, EveryRankGetsTheWholeTableInRankOrder) {
    const int n = test::world_size();
    const int me = test::world_rank();
    auto entry = [](int r) {
        RankGpu g;
        g.node = fmt::format("node{}", r / 2);
        if (r % 2 == 0) g.bus_id = fmt::format("0000:{:02x}:00.0", r);
        for (int k = 0; k < r; ++k) g.reaches.push_back(fmt::format("0000:{:02x}:00.0", k));
        return g;
    };
    const std::vector<RankGpu> table = gather_rank_gpus(MPI_COMM_WORLD, entry(me));
    ASSERT_EQ(static_cast<int>(table.size()), n);
    for (int r = 0; r < n; ++r) {
        SCOPED_TRACE(fmt::format("rank {} reads rank {}", me, r));
        EXPECT_EQ(table[r].node, entry(r).node);
        EXPECT_EQ(table[r].bus_id, entry(r).bus_id);
        EXPECT_EQ(table[r].reaches, entry(r).reaches);
    }
}
