// The header `gridsim run` prints once before the first step (report.hpp, start_header) and the
// placement map.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "io/output.hpp"
#include "io/provenance.hpp"
#include "parallel/grid_model.hpp"
#include "platform/backend_select.hpp"
#include "problems/problem.hpp"
#include "report/report.hpp"

namespace gridsim {

namespace {

std::string axes_text(const Config& cfg, const std::array<double, 3>& v) {
    std::vector<std::string> parts;
    for (int d = 0; d < cfg.dims; ++d) parts.push_back(fmt::format("{:.4g}", v[d]));
    return fmt::format("{}", fmt::join(parts, " x "));
}

std::string boundary_text(const Config& cfg) {
    if (cfg.benchmark) return "benchmark (x: fixed sine columns, y: periodic)";
    std::vector<std::string> parts;
    for (int d = 0; d < cfg.dims; ++d)
        parts.push_back(fmt::format("{} {}", "xyz"[d], to_string(cfg.axis_bc[d])));
    return fmt::format("{}", fmt::join(parts, ", "));
}

// Three significant digits in MiB below a GiB, in GiB above.
std::string bytes_text(std::size_t bytes) {
    const double mib = static_cast<double>(bytes) / (1 << 20);
    return mib < 1024 ? fmt::format("{:.3g} MiB", mib) : fmt::format("{:.3g} GiB", mib / 1024);
}

std::string outputs_text(const Config& cfg) {
    std::vector<std::string> parts;
    if (cfg.snapshot_every > 0)
        parts.push_back(fmt::format("snapshots every {}", cfg.snapshot_every));
    if (cfg.write_final) parts.push_back("final snapshot");
    if (cfg.checkpoint_every > 0)
        parts.push_back(
            fmt::format("checkpoint every {} to {}", cfg.checkpoint_every, cfg.checkpoint_path()));
    std::string out = parts.empty()
                          ? std::string("no files")
                          : fmt::format("{} in {}", fmt::join(parts, ", "), cfg.output_dir);
    if (!cfg.report.empty()) out += "; report " + cfg.report;
    return out;
}

// The measured crossover below which a grid ran slower on more GPUs, for the header's notes.
std::string crossover_text(const Domain& dom) {
    return fmt::format(
        "blocks of at most {} points per GPU ran slower on 2 GPUs than the whole grid on one (the "
        "measured crossover, docs/tuning.md, \"Ranks used\")",
        slower_per_gpu_points(dom.dims));
}

// The process grid, who chose it, the ranks the automatic choice left idle, and what it costs
// the run where the header should say so.
std::string process_grid_text(const Config& cfg, const RunStart& s, int launched) {
    const bool grid_given = process_grid_given(cfg);
    const std::vector<int> grid(s.process_grid.begin(), s.process_grid.begin() + cfg.dims);
    const std::string of = launched > s.ranks ? fmt::format(" of {}", launched) : std::string();
    std::string out = fmt::format(
        "  ranks           {}{} on process grid {} ({})\n", s.ranks, of, fmt::join(grid, "x"),
        grid_given ? "parallel.process_grid" : "lowest modelled cost per sweep");
    const Domain dom = make_domain(cfg);
    if (s.ranks < launched && cfg.ranks_used == 0) {
        out += fmt::format(
            "  note            {} of {} ranks wait idle: {}; parallel.ranks_used = {} "
            "runs on every rank\n",
            launched - s.ranks, launched, crossover_text(dom), launched);
    }
    if (s.backend == "cuda" && below_paying_size(dom, s.process_grid)) {
        out += fmt::format("  note            {} points per rank: {}; fewer ranks may be faster\n",
                           largest_block_points(dom, s.process_grid), crossover_text(dom));
    }
    return out;
}

// "ipc 4 faces, staged 4 faces": how the faces of all ranks travel.
std::string routes_text(const std::vector<std::pair<std::string, int>>& routes) {
    std::vector<std::string> parts;
    for (const auto& [name, n] : routes) parts.push_back(fmt::format("{} {} faces", name, n));
    return fmt::format("{}{}", fmt::join(parts, ", "),
                       routes.size() > 1 ? " (each face the best route its two ranks share)" : "");
}

// How the nodes hold the grid's blocks: "" on one node, else a box each or the launcher's order.
std::string node_tile_text(const Config& cfg, const RunStart& s) {
    if (s.nodes.nodes() < 2) return {};
    if (s.node_tile[0] == 0) return "; blocks in the launcher's order";
    return fmt::format("; each node a {} box of blocks",
                       fmt::join(s.node_tile.begin(), s.node_tile.begin() + cfg.dims, "x"));
}

}  // namespace

std::string placement_map(const std::vector<RankPlacement>& ranks) {
    std::string out = "  placement\n";
    for (std::size_t r = 0; r < ranks.size(); ++r)
        out += fmt::format("    rank {:<4} {}\n", r, ranks[r].line());
    return out;
}

std::string start_header(const Config& cfg, const RunStart& s, const std::string& restart,
                         int launched) {
    std::array<double, 3> h{};
    for (int d = 0; d < cfg.dims; ++d) h[d] = cfg.spacing(d);
    std::string out = fmt::format("gridsim {}: {} {}D, {}\n", gridsim_version(), cfg.problem,
                                  cfg.dims, to_string(cfg.precision));
    const std::vector<int> cells(cfg.cells.begin(), cfg.cells.begin() + cfg.dims);
    out += fmt::format("  grid            {} points, length {}, h {}\n", fmt::join(cells, "x"),
                       axes_text(cfg, cfg.length), axes_text(cfg, h));
    out += fmt::format("  boundary        {}; initial {}\n", boundary_text(cfg),
                       to_string(cfg.initial));
    out += find_problem(cfg.problem).describe(cfg);
    for (const std::string& key : cfg.ignored)
        out += fmt::format("  note            {} ignores {}\n", cfg.problem, key);
    if (!restart.empty())
        out += fmt::format("  restart         from {} at step {}\n", restart, s.start_step);
    out += process_grid_text(cfg, s, launched);
    out += fmt::format("  nodes           {}{}\n", s.nodes.text(), node_tile_text(cfg, s));
    if (!s.layout_note.empty()) out += fmt::format("  note            {}\n", s.layout_note);
    out += fmt::format("  backend         {} on {}{}\n", s.backend, s.devices,
                       s.backend_note.empty() ? std::string() : " (" + s.backend_note + ")");
    out += fmt::format("  transport       {}, overlap {}{}\n", s.transport, to_string(cfg.overlap),
                       s.graphs ? ", sweeps replayed as CUDA graphs" : "");
    if (!s.routes.empty()) out += fmt::format("  routes          {}\n", routes_text(s.routes));
    if (!s.transport_note.empty()) out += fmt::format("  note            {}\n", s.transport_note);
    if (s.backend == "cuda" && !transports_missing().empty())
        out += fmt::format("  note            {}\n", transports_missing());
    out += fmt::format("  kernel          {}\n", s.launch);
    if (s.time_block > 1) {
        out += fmt::format(
            "  time blocking   {} sweeps per halo exchange ({}-deep halos; "
            "parallel.time_block{}){}\n",
            s.time_block, s.time_block, cfg.time_block == 0 ? " = \"auto\"" : "",
            s.sums_in_passes ? ", every sweep's residual summed inside the passes" : "");
    }
    if (!s.time_block_trial.empty()) {
        out += fmt::format(
            "  time-block trial {} per sweep at start-up (slowest rank), fastest taken\n",
            trial_text(s.time_block_trial));
    }
    if (s.exchange_trial.ran) out += exchange_trial_text(s.exchange_trial);
    out += fmt::format("  memory per rank {} ({} fields with halos, largest rank)\n",
                       bytes_text(s.field_bytes_max),
                       s.field_count == 2 ? std::string("two") : std::to_string(s.field_count));
    out += fmt::format("  output          {}\n", outputs_text(cfg));
    const AsyncChoice async = async_output(cfg);
    const std::size_t field = s.field_bytes_max / static_cast<std::size_t>(s.field_count);
    const int buffers = staging_buffers(cfg);
    if (async.on) {
        out += fmt::format(
            "  async output    snapshots written by a thread while the loop goes on; {} "
            "staging buffer(s) of {} per rank ({})\n",
            cfg.async_buffers, bytes_text(field),
            bytes_text(field * static_cast<std::size_t>(cfg.async_buffers)));
    } else if (buffers > 0) {
        out += fmt::format("  output staging  one buffer of {} per rank\n", bytes_text(field));
    }
    if (!async.note.empty()) out += fmt::format("  note            {}\n", async.note);
    return out;
}

}  // namespace gridsim
