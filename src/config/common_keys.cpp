#include "config/common_keys.hpp"

#include <string>

#include "parallel/transport_table.hpp"

namespace gridsim {

namespace {

// parallel.transport's meaning: the transport table's names, then `auto`.
std::string_view transport_meaning() {
    static const std::string text = [] {
        std::string t = "halo transport:";
        for (const TransportRow& row : kTransportRows) t += std::string(" `") + row.name + "`,";
        t.back() = ' ';
        return t +
               "or `auto` (per face, the most direct its two ranks share); `gridsim info` "
               "lists this build's, each with its meaning";
    }();
    return text;
}

// The problem, its grid, boundary, initial condition and time.
std::vector<CommonKey> model_keys() {
    return {
        {"problem.name", "string", "`\"heat\"`",
         "the problem: `heat` or `jacobi`; `gridsim problems` lists them, and the tables below "
         "give "
         "the keys each one owns"},
        {"problem.precision", "string", "`\"double\"` (`\"float\"` for jacobi)",
         "`float` or `double`"},
        {"grid.cells", "[integer, ...]", "required",
         "points per axis `[nx, ny]` or `[nx, ny, nz]`, each at least 3"},
        {"grid.length", "[number, ...]", "`1.0` per axis",
         "domain length per axis, `(cells - 1) * h` (vertex-centred points)"},
        {"boundary.kind", "string", "`\"dirichlet\"`",
         "every axis: `dirichlet` (boundary points hold a value), `periodic`, or `benchmark` (2D "
         "jacobi: NVIDIA's multi-GPU Jacobi problem, sine columns, y periodic)"},
        {"boundary.x", "string", "`boundary.kind`", "x axis override: `dirichlet` or `periodic`"},
        {"boundary.y", "string", "`boundary.kind`", "y axis override: `dirichlet` or `periodic`"},
        {"boundary.z", "string", "`boundary.kind`", "z axis override: `dirichlet` or `periodic`"},
        {"boundary.value", "number", "`0.0`", "value held by every Dirichlet face"},
        {"boundary.face_values", "[number, ...]", "`boundary.value`",
         "per face `[x_lo, x_hi, y_lo, y_hi(, z_lo, z_hi)]`; where faces meet, the x face's value "
         "wins, then the y face's"},
        {"initial.kind", "string", "`\"sine\"` (`\"constant\"` for jacobi)",
         "`sine` (a product of sines and cosines: an exact eigenmode), `hotspot` (`amplitude` "
         "inside a sphere, `initial.value` outside) or `constant`"},
        {"initial.modes", "[integer, ...]", "`1` per axis", "wave numbers k_d >= 0 of `sine`"},
        {"initial.amplitude", "number", "`1.0`", "amplitude of `sine` and `hotspot`"},
        {"initial.center", "[number, ...]", "`0.5` per axis",
         "hot-spot centre as fractions of `grid.length`"},
        {"initial.radius", "number", "`0.1`",
         "hot-spot radius as a fraction of the shortest length, in (0, 1]"},
        {"initial.value", "number", "`0.0`", "`constant` value; background of `hotspot`"},
        {"initial.density", "number", "`1.0`",
         "heat with `problem.conductivity = \"density\"`: the density outside every region, > 0"},
        {"initial.regions", "[[table]]", "none",
         "heat with density conductivity: boxes (`shape`, `lo`, `hi`, `density`) or spheres "
         "(`shape`, `center`, `radius`, `density`), later ones over earlier (README, \"Heat\")"},
        {"time.steps", "integer", "`100`", "time steps (heat) or most sweeps (jacobi), >= 1"},
    };
}

// How it runs: the parallel layout, output and the run's limits.
std::vector<CommonKey> execution_keys() {
    return {
        {"parallel.process_grid", "[integer, ...]", "`0` per axis",
         "ranks per axis; all 0: the factorisation with the lowest modelled cost per sweep"},
        {"parallel.backend", "string", "`\"auto\"`",
         "`cpu`, `cuda` (one GPU per rank) or `auto`: CUDA when built with it and every rank has "
         "a GPU, else CPU; the header says which and why"},
        {"parallel.transport", "string", "`\"auto\"`", transport_meaning()},
        {"parallel.overlap", "string or boolean", "`\"auto\"`",
         "`true`: halos beside the interior; `false`: after it; `fused`: one launch, then "
         "halos; `faces_first`: halos once faces are written; `pipelined`: halos beside the "
         "next pass; `auto`: chosen per run"},
        {"parallel.share_gpus", "boolean", "`false`",
         "allow more ranks on a node than it has GPUs (they share round-robin; side by side "
         "only through MPS: docs/running.md, \"Ranks sharing a GPU\"); otherwise an error"},
        {"parallel.network_latency_us", "number", "`10.0`",
         "the process grid's model: microseconds a halo message between nodes costs "
         "(docs/tuning.md, "
         "\"Process grid\")"},
        {"parallel.network_bandwidth_GBps", "number", "`100.0`",
         "the process grid's model: GB/s a node sends to other nodes, shared by its ranks (4 x 200 "
         "Gb/s)"},
        {"parallel.ranks_used", "string or integer", "`\"auto\"`",
         "ranks that run, of those launched (the rest wait idle); `auto`: all, except on GPUs "
         "where blocks would be at most the measured crossover (docs/running.md, \"Ranks used\")"},
        {"parallel.kernel", "string", "`\"stream\"`",
         "CUDA stencil: `stream` (register walk along the slowest axis), `tiled` (shared-memory "
         "tile) or `naive`; all give the same bits"},
        {"parallel.block", "[integer, integer]", "`[0, 0]`",
         "CUDA threads per block `[x, y]`; 0: the variant's default"},
        {"parallel.rows_per_thread", "integer", "`0`",
         "CUDA points per thread along the slowest axis; 0: the variant's default"},
        {"parallel.phase_every", "integer", "`0`",
         "time the report's phases on every n-th sweep only, scaled to all; 0: the backend's "
         "default (CUDA 64, CPU 1)"},
        {"parallel.graphs", "string", "`\"auto\"`",
         "CUDA graphs: each kind of sweep recorded once, then replayed as one launch; `on`, `off` "
         "or `auto`. Results are bitwise the same"},
        {"parallel.time_block", "string or integer", "`\"auto\"`",
         "sweeps between halo exchanges (1 to 16), fields carrying that many ghost layers per "
         "point of the stencil's radius; `auto`: timed at start-up. Results are bitwise the same"},
        {"parallel.bind", "string", "`\"auto\"`",
         "where a rank's CPUs and memory go: `auto` (the NUMA node of its GPU, where known), "
         "`numa` (the same, warning where it cannot), `strict` (exit 2 where it cannot), `none`"},
        {"output.progress_every", "integer", "`100`",
         "progress line every n steps (and about every 10 s); 0: none"},
        {"output.report", "string", "`\"\"`", "JSON run report path, written at the end"},
        {"output.dir", "string", "`\"out\"`",
         "directory for snapshots, created at the first write; one that cannot be made is refused "
         "before the run"},
        {"output.prefix", "string", "`\"snapshot\"`",
         "snapshot names: `{dir}/{prefix}_{step:08}.h5`, `{dir}/{prefix}_final.h5`"},
        {"output.snapshot_every", "integer", "`0`",
         "HDF5 snapshot (with XDMF sidecars) every n steps; 0: none"},
        {"output.write_final", "boolean", "`false`", "write the last state as `{prefix}_final.h5`"},
        {"output.fields", "[string, ...]", "the problem's", "fields to write (heat, jacobi: `u`)"},
        {"output.precision", "string", "`\"native\"`",
         "values on disk: `native` (the run's), `float` or `double`"},
        {"output.checkpoint_every", "integer", "`0`", "checkpoint every n steps; 0: none"},
        {"output.checkpoint", "string", "`\"\"`",
         "checkpoint file (`\"\"`: `{dir}/checkpoint.h5`); written to `.tmp`, synced, renamed, the "
         "previous kept as `.prev`; never from a field holding NaN or Inf"},
        {"output.check_every", "integer", "with the progress line",
         "blow-up check every n steps (NaN, Inf, or beyond `output.max_abs`): exit 1 with one "
         "line; 1000 when progress is off; 0: never"},
        {"output.max_abs", "number", "`0.0`", "bound on |u| for the blow-up check; 0: none"},
        {"output.overwrite", "boolean", "`false`",
         "replace files in `output.dir` that another problem wrote (otherwise refused, exit 2)"},
        {"output.dump_on_failure", "boolean", "`false`",
         "keep the last good state and write it as `{prefix}_lastgood_{step:08}.h5` when a "
         "blow-up check fails"},
        {"output.async", "string", "`\"auto\"`",
         "snapshots written by a thread of their own while the loop goes on: `on`, `off` or `auto` "
         "(when MPI allows threads)"},
        {"output.async_buffers", "integer", "`2`",
         "snapshots in flight at most (1 to 16), each one field of host memory per rank"},
        {"output.mpi_hints", "table", "`{}`",
         "MPI-IO hints for every file written, name = string or integer (`striping_factor`, "
         "`striping_unit`, `cb_nodes`, `romio_cb_write`, ...); recorded in `/provenance`"},
        {"run.max_walltime", "string", "none",
         "`HH:MM:SS` or `D-HH:MM:SS`: stop with a checkpoint and exit code 3 before this much time "
         "has passed"},
        {"run.stall_timeout", "string", "`\"00:10:00\"`",
         "a rank that completes no step for this long ends itself (exit 1); `00:00:00` turns the "
         "watchdog off"},
    };
}

}  // namespace

const std::vector<CommonKey>& common_keys() {
    static const std::vector<CommonKey> keys = [] {
        std::vector<CommonKey> all = model_keys();
        const std::vector<CommonKey> more = execution_keys();
        all.insert(all.end(), more.begin(), more.end());
        return all;
    }();
    return keys;
}

}  // namespace gridsim
