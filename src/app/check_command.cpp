// `gridsim check`.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <iostream>

#include "app/commands.hpp"
#include "kernels/stencil.hpp"
#include "mesh/domain.hpp"
#include "mesh/field.hpp"
#include "parallel/cart_topology.hpp"
#include "parallel/grid_model.hpp"
#include "parallel/node_layout.hpp"
#include "problems/problem.hpp"

namespace gridsim::app {

namespace {

// The halo layers the deck's fields carry: the stencil's radius times parallel.time_block when
// set ("auto" may choose more once the backend is known; the run checks it then).
int halo_depth(const Config& cfg) { return cfg.stencil_radius * std::max(1, cfg.time_block); }

// The process grid `ranks` ranks would run `cfg` on (the deck's, or the modelled cheapest);
// throws ConfigError when it cannot be decomposed that way.
std::array<int, 3> grid_for_ranks(const Config& cfg, int ranks) {
    const Domain dom = make_domain(cfg);
    const std::array<int, 3> grid = choose_process_grid(cfg, dom, ranks);
    if (const std::string why = decomposition_problem(dom, grid, ranks, halo_depth(cfg));
        !why.empty()) {
        throw ConfigError("--ranks " + std::to_string(ranks) + ": " + why);
    }
    return grid;
}

// Bytes of the fields of the largest rank on `grid` (the problem's count of them), halos
// included (the block at coords 0: the first blocks take the remainder points), without the row
// padding a backend may add: what a run needs at least, before it knows its backend.
double field_bytes_per_rank(const Config& cfg, const std::array<int, 3>& grid) {
    const Domain dom = make_domain(cfg);
    const Subdomain sub = make_subdomain(dom, grid, {0, 0, 0});
    const auto ext = FieldExtents::make(cfg.dims, sub.size, halo_depth(cfg));
    const double value = cfg.precision == Precision::float32 ? 4.0 : 8.0;
    return find_problem(cfg.problem).field_count(cfg) * static_cast<double>(ext.total) * value;
}

// --ranks N --ranks-per-node G: the layout over N / G nodes (node_layout.hpp) and the busiest
// rank's faces inside its node and to other nodes, per sweep (what scaling.py model takes).
nlohmann::json layout_for_nodes(const Config& cfg, int ranks, int per_node) {
    if (ranks % per_node != 0) {
        throw ConfigError(
            fmt::format("--ranks-per-node {}: does not divide --ranks {}", per_node, ranks));
    }
    const Domain dom = make_domain(cfg);
    std::vector<int> node_of;
    for (int r = 0; r < ranks; ++r) node_of.push_back(r / per_node);
    const Layout l = choose_layout(cfg, dom, node_of);
    if (const std::string why = decomposition_problem(dom, l.grid, ranks, halo_depth(cfg));
        !why.empty()) {
        throw ConfigError("--ranks " + std::to_string(ranks) + ": " + why);
    }
    const FaceTraffic f = busiest_faces(dom, l, node_of, cfg);
    return {{"nodes", ranks / per_node},
            {"ranks_per_node", per_node},
            {"grid", std::vector<int>(l.grid.begin(), l.grid.begin() + cfg.dims)},
            {"node_tile", l.tile},
            {"modelled_seconds_per_sweep", l.seconds},
            {"busiest_rank",
             {{"intra_messages", f.intra_messages},
              {"intra_bytes", f.intra_bytes},
              {"inter_messages", f.inter_messages},
              {"inter_bytes", f.inter_bytes}}}};
}

}  // namespace

int check_deck(const Options& opt, int rank) {
    const Config cfg = load_deck(opt, rank);
    if (opt.ranks_per_node > 0 && opt.ranks == 0)
        throw ConfigError("--ranks-per-node needs --ranks");
    const nlohmann::json nodes = opt.ranks_per_node > 0
                                     ? layout_for_nodes(cfg, opt.ranks, opt.ranks_per_node)
                                     : nlohmann::json();
    std::array<int, 3> grid{1, 1, 1};
    int on_gpus = opt.ranks;  // the ranks a run on GPUs would use of --ranks (ranks_to_use)
    if (opt.ranks > 0) {
        grid = grid_for_ranks(cfg, opt.ranks);
        on_gpus = ranks_to_use(cfg, make_domain(cfg), opt.ranks, true);
    }
    if (rank != 0) return 0;
    const std::vector<int> shown(grid.begin(), grid.begin() + cfg.dims);
    const int ranks = std::max(opt.ranks, 1);
    const double bytes = field_bytes_per_rank(cfg, grid);
    if (opt.json) {
        nlohmann::json doc = nlohmann::json::parse(to_json(cfg));
        if (opt.ranks > 0) {
            doc["process_grid_for_ranks"] = {
                {"ranks", opt.ranks}, {"grid", shown}, {"ranks_used_on_gpus", on_gpus}};
        }
        if (!nodes.is_null()) doc["layout_for_nodes"] = nodes;
        if (!cfg.ignored.empty()) doc["ignored_keys"] = cfg.ignored;
        doc["field_bytes_per_rank"] = {{"ranks", ranks}, {"bytes", static_cast<long long>(bytes)}};
        std::cout << doc.dump(2) << std::endl;
    } else {
        std::cout << "# " << opt.deck << ": valid\n";
        for (const std::string& key : cfg.ignored)
            std::cout << fmt::format("# note: problem {} ignores {}\n", cfg.problem, key);
        if (opt.ranks > 0)
            std::cout << fmt::format("# process grid for {} ranks: {}\n", opt.ranks,
                                     fmt::join(shown, "x"));
        if (!nodes.is_null()) {
            const auto& b = nodes["busiest_rank"];
            std::cout << fmt::format(
                "# over {} nodes of {} ranks: grid {}, {}; the busiest rank sends {} faces "
                "({:.3g} MB) inside its node and {} ({:.3g} MB) to other nodes per sweep\n",
                nodes["nodes"].get<int>(), opt.ranks_per_node,
                fmt::join(nodes["grid"].get<std::vector<int>>(), "x"),
                nodes["node_tile"][0] == 0
                    ? std::string("the launcher's order")
                    : fmt::format("each node a {} box",
                                  fmt::join(nodes["node_tile"].get<std::vector<int>>(), "x")),
                b["intra_messages"].get<double>(), b["intra_bytes"].get<double>() / 1e6,
                b["inter_messages"].get<double>(), b["inter_bytes"].get<double>() / 1e6);
        }
        if (on_gpus < opt.ranks) {
            std::cout << fmt::format(
                "# on GPUs the run uses {} of the {} ranks (parallel.ranks_used; docs/tuning.md, "
                "\"Ranks used\")\n",
                on_gpus, opt.ranks);
        }
        // The run checks this against the free memory of the machine it runs on.
        std::cout << fmt::format(
            "# memory per rank at {} rank(s): {:.3g} GiB ({} fields with halos, largest rank; "
            "the CPU backend keeps one more copy)\n",
            ranks, bytes / 1073741824.0, find_problem(cfg.problem).field_count(cfg));
        std::cout << to_toml(cfg) << std::flush;
    }
    return 0;
}

}  // namespace gridsim::app
