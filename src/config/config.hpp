// The resolved, immutable run configuration: a TOML deck plus `--set key=value` overrides,
// every key checked (name, type, range) and every physical constraint that can be checked
// without MPI (stability of the explicit step, problem/boundary combinations).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "config/mpi_hints.hpp"
#include "parallel/transport_table.hpp"  // plain rows: the transports' names and memory

namespace gridsim {

// Bad input (deck, override or command-line argument). The message already names the file,
// line and key; main() prints it once and exits with code 2.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class Precision { float32, float64 };
enum class AxisBc { dirichlet, periodic };
enum class InitialKind { sine, hotspot, constant };
enum class BackendKind { automatic, cpu, cuda };
// CUDA stencil variants (kernels/cuda/stream_kernels.cuh, tiled_kernel.cuh); all give bitwise the
// same fields.
enum class KernelKind { stream, tiled, naive };
// parallel.bind: where a rank's CPUs and host memory go (parallel/binding.hpp).
enum class BindMode { automatic, none, numa, strict };
enum class GraphMode { automatic, on, off };
// parallel.overlap: the halo exchange beside the interior (on), after it on one lane (off),
// every updated point of a sweep or pass in one launch and then the halos (fused), a pass's
// points in one launch that writes the faces first, the halos moving beside the rest of it
// (faces_first: 3D time blocks on the CUDA backend; other sweeps as fused), a pass's points in
// one launch while the halos of the pass before still move, its blocks waiting for them
// (pipelined: 3D time blocks on the CUDA backend, ipc exchanges across z only; other sweeps as
// fused), or (auto) a sweep without sums on a rank with no neighbour on another rank fused, and
// with time blocks on several ranks whichever of on, fused, faces_first and pipelined a start-up
// trial finds fastest.
enum class OverlapMode { automatic, on, off, fused, faces_first, pipelined };
// Whether the mode lets a sweep or pass run as one launch followed by the halos ("auto" where
// SweepPlan::fuses says so, "fused", "faces_first" and "pipelined" always).
constexpr bool may_fuse(OverlapMode m) {
    return m == OverlapMode::automatic || m == OverlapMode::fused ||
           m == OverlapMode::faces_first || m == OverlapMode::pipelined;
}
// The most sweeps between halo exchanges parallel.time_block may ask for (docs/architecture.md,
// "Temporal blocking"). A pass over memory takes at most the backend's levels (CUDA: 8 in 2D, 4
// in 3D); a longer block runs as several passes.
constexpr int kMaxTimeBlock = 16;

class DeckReader;
struct Config;

// One [[initial.regions]] entry: a box (lo..hi, fractions of grid.length, ends included) or a
// sphere (centre as fractions of grid.length, radius as a fraction of the shortest length) and
// the density of the points it holds.
struct DensityRegion {
    bool sphere = false;
    std::array<double, 3> lo{0, 0, 0};
    std::array<double, 3> hi{1, 1, 1};
    std::array<double, 3> center{0.5, 0.5, 0.5};
    double radius = 0.1;
    double density = 1.0;
};
constexpr int kMaxRegions = 16;

// The value of a deck key a problem owns; its type is the type of the key's default.
using ParamValue = std::variant<bool, std::int64_t, double, std::string>;

// A deck key a problem owns: its default (which also gives its type), the values it may take,
// and its README row. Read, range-checked and written back (gridsim check) by the config layer,
// so a problem declares its keys instead of parsing them.
struct KeySpec {
    std::string key;      // "time.cg_tolerance"
    ParamValue fallback;  // the default
    std::string meaning;  // README's "meaning" column
    // A string key: the words it may be (empty: any string).
    std::vector<std::string> choices;
    // A number or integer key: the closed or open range it must lie in, and the error if not.
    double min = -HUGE_VAL;
    double max = HUGE_VAL;
    bool min_open = false;
    std::string must;          // e.g. "must be > 0"
    std::string default_text;  // README's "default" column when not the default's TOML text

    // A number in (min, inf) (open) or [min, max] (closed), `must` the error otherwise.
    static KeySpec number(std::string key, double fallback, std::string meaning, double min,
                          bool min_open, double max, std::string must) {
        KeySpec k;
        k.key = std::move(key);
        k.fallback = fallback;
        k.meaning = std::move(meaning);
        k.min = min;
        k.min_open = min_open;
        k.max = max;
        k.must = std::move(must);
        return k;
    }
    // An integer in [min, max].
    static KeySpec integer(std::string key, std::int64_t fallback, std::string meaning,
                           std::int64_t min, std::int64_t max) {
        KeySpec k;
        k.key = std::move(key);
        k.fallback = fallback;
        k.meaning = std::move(meaning);
        k.min = static_cast<double>(min);
        k.max = static_cast<double>(max);
        return k;
    }
    // One of `choices`; the default is the first.
    static KeySpec choice(std::string key, std::vector<std::string> choices, std::string meaning) {
        KeySpec k;
        k.key = std::move(key);
        k.fallback = choices.front();
        k.meaning = std::move(meaning);
        k.choices = std::move(choices);
        return k;
    }
};

// The deck side of a problem, from its entry in the problem table (problems/problem.hpp): what
// load_config needs to read and check a deck of that problem.
struct ProblemDeck {
    std::string name;
    std::string summary;    // one line: gridsim problems, README
    bool has_time = false;  // t = step * dt is a physical time (snapshots, progress, report)
    Precision precision = Precision::float64;  // problem.precision's default
    InitialKind initial = InitialKind::sine;   // initial.kind's default
    bool benchmark_boundary = false;           // accepts boundary.kind = "benchmark" (2D)
    std::vector<std::string> fields{"u"};      // output.fields may name these
    std::vector<KeySpec> keys;                 // the keys it owns beyond the common ones
    // Checks across keys and resolved values, once every key is read (heat: dt from time.cfl
    // and the stability limit). May be empty.
    std::function<void(const DeckReader&, Config&)> finish;
};

struct Config {
    // [problem]
    std::string problem = "heat";  // a name in the problem table
    bool has_time = true;          // the problem's: step * dt is physical time
    Precision precision = Precision::float64;
    // Values of the keys the problem owns (its KeySpecs), by dotted key.
    std::map<std::string, ParamValue> params;
    // Keys of other problems the deck gives (checked, then ignored), e.g. "problem.alpha (a key
    // of problem heat)": gridsim check and the run header say so.
    std::vector<std::string> ignored;

    // [grid]: vertex-centred, point i at x_i = i*h, h = length / (cells - 1)
    int dims = 3;
    std::array<int, 3> cells{1, 1, 1};  // points per axis (x, y, z); z = 1 in 2D
    std::array<double, 3> length{1.0, 1.0, 1.0};

    // [boundary]
    bool benchmark = false;  // jacobi 2D benchmark boundary (README, "Deck keys")
    std::array<AxisBc, 3> axis_bc{AxisBc::dirichlet, AxisBc::dirichlet, AxisBc::dirichlet};
    std::array<double, 6> face_value{};  // x_lo, x_hi, y_lo, y_hi, z_lo, z_hi

    // [initial]
    InitialKind initial = InitialKind::sine;
    std::array<int, 3> modes{1, 1, 1};
    double amplitude = 1.0;
    std::array<double, 3> center{0.5, 0.5, 0.5};  // fractions of length
    double radius = 0.1;                          // fraction of the shortest length
    double initial_value = 0.0;
    // The density field (README, "Heat"): `density` everywhere, then each region in deck order
    // over the points it holds ([[initial.regions]]; at most kMaxRegions).
    double density = 1.0;
    std::vector<DensityRegion> regions;

    // [time]
    // The physical time step, resolved by the problem (never 0 when has_time; 0 otherwise).
    double dt = 0.0;
    std::int64_t steps = 100;  // time steps, or at most this many sweeps/iterations

    // [parallel]
    std::array<int, 3> process_grid{0, 0, 0};  // 0 = chosen (choose_process_grid)
    BackendKind backend = BackendKind::automatic;
    TransportKind transport = TransportKind::automatic;
    OverlapMode overlap = OverlapMode::automatic;
    bool share_gpus = false;  // allow more ranks than GPUs on a node
    // The process grid's model of the network between nodes (parallel/node_layout.hpp).
    double network_latency_us = 10.0;
    double network_bandwidth_gbps = 100.0;
    int ranks_used = 0;  // ranks the run uses of those launched; 0 = chosen (ranks_to_use)
    BindMode bind = BindMode::automatic;
    // CUDA stencil kernel: stream (each thread walks `rows` points along the slowest axis,
    // neighbours on that axis in registers), tiled (the same walk with the cross-section in
    // shared memory) or naive (global loads only). The default is the fastest measured on the
    // benchmark decks (docs/tuning.md, "Launch shapes").
    KernelKind kernel = KernelKind::stream;
    std::array<int, 2> block{0, 0};  // CUDA threads per block (x, y); 0 = the variant's default
    int rows = 0;  // CUDA: points per thread along the slowest axis; 0 = the variant's default
    // Lane phases timed on every n-th pass (sweep or operator application), scaled to all; 0 =
    // the backend's default (CUDA 64: its events cost small steps measurable time; CPU 1).
    int phase_every = 0;
    // CUDA graphs: sweeps recorded once and replayed (auto: where a step needs no host, i.e. the
    // CUDA backend with NCCL or without remote neighbours).
    GraphMode graphs = GraphMode::automatic;
    // Sweeps between halo exchanges (temporal blocking): fields carry this many ghost layers, a
    // sweep also updates the halo points still valid for the next ones, and the CUDA backend
    // advances runs of sweeps without a residual several time levels per pass over memory.
    // 0 = auto (chosen by the simulation from the backend and the deck), else 1..kMaxTimeBlock.
    int time_block = 0;
    // The radius of the problem's stencil (load_config sets it from the problem table): the halo
    // layers a sweep reads; and whether it is a plain star (radius 1, constant coefficients),
    // which passes of several levels take.
    int stencil_radius = 1;
    bool stencil_plain_star = true;

    // [output]
    std::int64_t progress_every = 100;  // steps between progress lines (also every ~10 s)
    std::string report;                 // JSON run report path ("" = none)
    std::string output_dir = "out";     // snapshots and (by default) the checkpoint
    std::string output_prefix = "snapshot";
    std::int64_t snapshot_every = 0;          // steps between HDF5 snapshots (0 = none)
    bool write_final = false;                 // the last state as {prefix}_final.h5
    std::string output_precision = "native";  // on disk: native | float | double
    std::vector<std::string> fields{"u"};     // the fields the problem writes
    std::int64_t checkpoint_every = 0;        // steps between checkpoints (0 = none)
    std::string checkpoint;                   // checkpoint file ("" = {output_dir}/checkpoint.h5)
    // Blow-up check every n steps (non-finite values, |u| > max_abs when max_abs > 0); -1: with
    // the progress line, or every 1000 steps without one; 0: never.
    std::int64_t check_every = -1;
    double max_abs = 0.0;
    bool overwrite = false;  // replace files another problem left in output.dir
    // Keep the state of the last good blow-up check (one more field) and write it when a check
    // fails: {dir}/{prefix}_lastgood_{step:08}.h5.
    bool dump_on_failure = false;
    // Snapshots written by a thread while the loop goes on: "auto" (when snapshots are due and
    // MPI provides MPI_THREAD_MULTIPLE), "on", "off". At most async_buffers snapshots in flight,
    // each in a staging buffer of one field.
    std::string output_async = "auto";
    int async_buffers = 2;
    MpiHints mpi_hints;  // output.mpi_hints: MPI-IO hints of every file written, in deck order
    [[nodiscard]] std::int64_t check_interval() const {
        if (check_every >= 0) return check_every;
        return progress_every > 0 ? progress_every : 1000;
    }

    // [run]
    double max_walltime = 0.0;  // seconds; 0: no limit (else checkpoint and exit 3 before it)
    // Seconds without a completed step after which a rank ends itself (exit 1): a peer that died
    // or hangs must not hold the job. 0: no watchdog.
    double stall_timeout = 600.0;
    [[nodiscard]] std::string checkpoint_path() const {
        return checkpoint.empty() ? output_dir + "/checkpoint.h5" : checkpoint;
    }

    // Where each key came from ("deck.toml:12" or "--set grid.cells=..."), for later errors.
    std::map<std::string, std::string> origin;
    std::string deck_path;

    // "deck.toml:12: grid.cells: " style prefix for an error about `key`.
    [[nodiscard]] std::string where(const std::string& key) const;
    [[nodiscard]] bool is_periodic(int axis) const { return axis_bc[axis] == AxisBc::periodic; }
    [[nodiscard]] double spacing(int axis) const { return length[axis] / (cells[axis] - 1); }
    [[nodiscard]] std::int64_t global_points() const;

    // A key the problem owns (std::logic_error when it owns no such key of that type).
    [[nodiscard]] double number(const std::string& key) const;
    [[nodiscard]] std::int64_t integer(const std::string& key) const;
    [[nodiscard]] bool flag(const std::string& key) const;
    [[nodiscard]] const std::string& word(const std::string& key) const;
};

// Parses deck text (read from `path` by the caller) and applies `overrides` ("key=value", the
// value written as in TOML), for the problem `problem.name` names among `problems`. Throws
// ConfigError naming file, line and key. (problems/problem.hpp's load_config passes the table.)
Config load_config(const std::string& deck_text, const std::string& path,
                   const std::vector<std::string>& overrides,
                   const std::vector<const ProblemDeck*>& problems);

// A key's value as the TOML text a deck would hold (README, gridsim problems).
std::string toml_text(const ParamValue& v);

// The resolved configuration as a TOML document, every key included, defaults resolved.
// The deck's [problem], [grid], [boundary] and [initial] tables as TOML: what makes two runs
// the same problem (steps, output and parallel settings aside).
std::string problem_identity(const Config& cfg);
std::string to_toml(const Config& cfg);
// The same as a JSON document (for the run report).
std::string to_json(const Config& cfg);

const char* to_string(Precision v);
const char* to_string(AxisBc v);
const char* to_string(InitialKind v);
const char* to_string(BackendKind v);
const char* to_string(TransportKind v);
// "auto", "on", "off", "fused", "faces_first", "pipelined"
const char* to_string(OverlapMode v);
const char* to_string(KernelKind v);
const char* to_string(BindMode v);
const char* to_string(GraphMode v);

// Whether a transport hands over device memory (its row's `memory`): the CPU backend has none to
// give it.
inline bool moves_device_memory(TransportKind v) {
    return v != TransportKind::automatic && transport_row(v).memory == TransportMemory::device;
}

}  // namespace gridsim
