// Halo exchange on every process-grid shape the rank count allows (1D, 2D and 3D process
// grids), periodic and not: each rank fills its owned points with rank*1e6 + global index,
// and every halo point must then hold the value its owner wrote for the (wrapped) point
// across the face. One-deep halos: edge and corner halos are not exchanged (star stencils) and
// must stay untouched, as must halos on faces without a neighbour. Deeper halos (temporal
// blocking) also carry the edges and corners between faces that have neighbours.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "comm/halo_exchange.hpp"
#include "comm/peer_routes.hpp"
#include "solver/problem.hpp"
#include "support/mpi_helpers.hpp"

using namespace gridsim;

namespace {

constexpr double kSentinel = -1.0;

std::vector<std::array<int, 3>> process_grids(int nranks, int dims) {
    std::vector<std::array<int, 3>> out;
    for (int a = 1; a <= nranks; ++a)
        for (int b = 1; b <= nranks; ++b) {
            const int c = dims == 3 ? nranks / (a * b) : 1;
            if (a * b * c == nranks) out.push_back({a, b, c});
        }
    return out;
}

// Owner of solved-grid point g, found by scanning blocks (independent of the neighbour code).
int owner_of(MPI_Comm cart, const Domain& dom, const std::array<int, 3>& pg,
             const std::array<int, 3>& g) {
    std::array<int, 3> coords{0, 0, 0};
    for (int d = 0; d < dom.dims; ++d) {
        for (int c = 0; c < pg[d]; ++c) {
            const BlockRange r = block_range(dom.solved[d], pg[d], c);
            if (g[d] >= r.start && g[d] < r.start + r.size) coords[d] = c;
        }
    }
    int rank = -1;
    MPI_Cart_rank(cart, coords.data(), &rank);
    return rank;
}

double encode(int rank, const Domain& dom, const std::array<int, 3>& g) {
    return rank * 1e6 + g[0] + dom.solved[0] * (g[1] + dom.solved[1] * g[2]);
}

// Returns whether the grid was checked (false: it leaves a rank thinner than the halo).
bool check_exchange(const std::string& deck, int dims, const std::array<int, 3>& pg,
                    int depth = 1) {
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
    std::vector<double> host(ext.total, kSentinel);
    const int hz = dom.dims == 3 ? depth : 0;
    auto for_all = [&](auto&& fn) {
        for (int k = -hz; k < sub.size[2] + hz; ++k)
            for (int j = -depth; j < sub.size[1] + depth; ++j)
                for (int i = -depth; i < sub.size[0] + depth; ++i) fn(i, j, k);
    };
    for_all([&](int i, int j, int k) {
        const std::array<int, 3> l{i, j, k};
        bool owned = true;
        for (int d = 0; d < 3; ++d) owned = owned && l[d] >= 0 && l[d] < sub.size[d];
        if (owned)
            host[ext.index(i, j, k)] =
                encode(topo.rank(), dom, {sub.offset[0] + i, sub.offset[1] + j, sub.offset[2] + k});
    });
    be->upload(host, f.view());
    HaloExchange<double> halo(topo, depth, *be);
    // A periodic axis held by one rank along it is the rank's own neighbour on both faces.
    unsigned self = 0;
    for (int d = 0; d < dom.dims; ++d) self |= dom.periodic[d] && pg[d] == 1 ? 1u << d : 0u;
    EXPECT_EQ(halo.self_axes(), self);
    halo.exchange(f.view());
    std::vector<double> got;
    be->download(f.view(), got);

    for_all([&](int i, int j, int k) {
        const std::array<int, 3> l{i, j, k};
        int outside = 0;
        bool all_have_neighbours = true;
        std::array<int, 3> g{};
        for (int d = 0; d < 3; ++d) {
            g[d] = sub.offset[d] + l[d];
            if (l[d] < 0 || l[d] >= sub.size[d]) {
                ++outside;
                all_have_neighbours =
                    all_have_neighbours && sub.has_neighbour[2 * d + (l[d] < 0 ? 0 : 1)];
                g[d] = (g[d] + dom.solved[d]) % dom.solved[d];  // periodic wrap
            }
        }
        const double value = got[ext.index(i, j, k)];
        if (outside == 0) {
            ASSERT_EQ(value, host[ext.index(i, j, k)]);
        } else if ((outside == 1 || depth > 1) && all_have_neighbours) {
            ASSERT_EQ(value, encode(owner_of(topo.comm(), dom, pg, g), dom, g))
                << "halo point " << i << "," << j << "," << k;
        } else {
            ASSERT_EQ(value, kSentinel) << "untouched halo " << i << "," << j << "," << k;
        }
    });
    return true;
}

constexpr const char kDeck3D[] = "[grid]\ncells = [9, 7, 6]\n[boundary]\nkind = \"{}\"\n";
constexpr const char kDeck2D[] = "[grid]\ncells = [11, 9]\n[boundary]\nkind = \"{}\"\n";

}  // namespace

TEST(HaloExchange, EveryFaceOfEvery3DProcessGrid) {
    for (const char* bc : {"dirichlet", "periodic"}) {
        for (const auto& pg : process_grids(test::world_size(), 3)) {
            SCOPED_TRACE(fmt::format("{} process grid {}x{}x{}", bc, pg[0], pg[1], pg[2]));
            check_exchange(fmt::format(kDeck3D, bc), 3, pg);
        }
    }
}

TEST(HaloExchange, EveryFaceOfEvery2DProcessGrid) {
    for (const char* bc : {"dirichlet", "periodic"}) {
        for (const auto& pg : process_grids(test::world_size(), 2)) {
            SCOPED_TRACE(fmt::format("{} process grid {}x{}", bc, pg[0], pg[1]));
            check_exchange(fmt::format(kDeck2D, bc), 2, pg);
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
TEST(HaloExchange, DeepHalosCarryEdgesAndCorners) {
    for (int depth : {2, 3}) {
        int checked = 0;  // grids thin for the depth are skipped; the others must be many
        for (const char* bc : {"dirichlet", "periodic"}) {
            for (const auto& pg : process_grids(test::world_size(), 3)) {
                SCOPED_TRACE(fmt::format("depth {} {} process grid {}x{}x{}", depth, bc, pg[0],
                                         pg[1], pg[2]));
                checked += check_exchange(fmt::format(kDeck3D, bc), 3, pg, depth) ? 1 : 0;
            }
            for (const auto& pg : process_grids(test::world_size(), 2)) {
                SCOPED_TRACE(
                    fmt::format("depth {} {} process grid {}x{}", depth, bc, pg[0], pg[1]));
                checked += check_exchange(fmt::format(kDeck2D, bc), 2, pg, depth) ? 1 : 0;
            }
        }
        const std::string mixed =
            "[grid]\ncells = [9, 7, 6]\n[boundary]\nx = \"periodic\"\nz = \"periodic\"\n";
        for (const auto& pg : process_grids(test::world_size(), 3)) {
            SCOPED_TRACE(
                fmt::format("depth {} mixed process grid {}x{}x{}", depth, pg[0], pg[1], pg[2]));
            checked += check_exchange(mixed, 3, pg, depth) ? 1 : 0;
        }
        EXPECT_GE(checked, 5) << "process grids checked at depth " << depth;
    }
}

// The ipc routes' table (comm/peer_routes.hpp): every rank's entry, in rank order, on every
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
