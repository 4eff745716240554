// The resolved, immutable run configuration: a TOML deck plus `--set key=value` overrides,
// every key checked (name, type, range) and every physical constraint that can be checked
// without MPI (stability of the explicit step, problem/boundary combinations).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace gridsim {

// Bad input (deck, override or command-line argument). The message already names the file,
// line and key; main() prints it once and exits with code 2.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class ProblemKind { heat, jacobi };
enum class Precision { float32, float64 };
enum class AxisBc { dirichlet, periodic };
enum class InitialKind { sine, hotspot, constant };
enum class BackendKind { automatic, cpu, cuda };
enum class TransportKind { automatic, staged, cuda_aware, nccl };
// CUDA stencil variants (kernels/cuda/stencil_kernels.cuh); all give bitwise the same fields.
enum class KernelKind { stream, tiled, naive };
// parallel.bind: where a rank's CPUs and host memory go (affinity/binding.hpp).
enum class BindMode { automatic, none, numa, strict };

struct Config {
    // [problem]
    ProblemKind problem = ProblemKind::heat;
    Precision precision = Precision::float64;
    double alpha = 1.0;  // heat diffusivity [length^2 / time]

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

    // [time]
    double dt = 0.0;           // resolved: never 0 after loading (heat); unused by jacobi
    double cfl = 0.5;          // dt = cfl * stable_dt_limit() when dt is not given
    std::int64_t steps = 100;  // time steps (heat) or maximum sweeps (jacobi)
    double tolerance = 0.0;    // jacobi: stop when the residual drops below it (0: never)
    int norm_every = 10;       // jacobi: residual every n sweeps

    // [parallel]
    std::array<int, 3> process_grid{0, 0, 0};  // 0 = chosen (choose_process_grid)
    BackendKind backend = BackendKind::automatic;
    TransportKind transport = TransportKind::automatic;
    bool overlap = true;
    bool share_gpus = false;  // allow more ranks than GPUs on a node
    BindMode bind = BindMode::automatic;
    // CUDA stencil kernel: stream (each thread walks `rows` points along the slowest axis,
    // neighbours on that axis in registers), tiled (the same walk with the cross-section in
    // shared memory) or naive (global loads only). The default is the fastest measured on the
    // benchmark decks (docs/performance.md).
    KernelKind kernel = KernelKind::stream;
    std::array<int, 2> block{0, 0};  // CUDA threads per block (x, y); 0 = the variant's default
    int rows = 0;  // CUDA: points per thread along the slowest axis; 0 = the variant's default

    // [output]
    std::int64_t progress_every = 100;  // steps between progress lines (also every ~10 s)
    std::string report;                 // JSON run report path ("" = none)
    std::string output_dir = "out";     // snapshots and (by default) the checkpoint
    std::string output_prefix = "snapshot";
    std::int64_t snapshot_every = 0;          // steps between HDF5 snapshots (0 = none)
    bool write_final = false;                 // the last state as {prefix}_final.h5
    std::string output_precision = "native";  // on disk: native | float | double
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
    // Sum over axes of alpha*dt/h_d^2 (r_d); the explicit scheme is stable iff 2*sum <= 1.
    [[nodiscard]] double diffusion_number_sum() const;
    // The largest stable explicit dt: 1 / (2 alpha sum_d 1/h_d^2).
    [[nodiscard]] double stable_dt_limit() const;
    [[nodiscard]] std::int64_t global_points() const;
};

// Parses deck text (read from `path` by the caller) and applies `overrides` ("key=value", the
// value written as in TOML). Throws ConfigError naming file, line and key.
Config load_config(const std::string& deck_text, const std::string& path,
                   const std::vector<std::string>& overrides);

// The resolved configuration as a TOML document, every key included, defaults resolved.
// The deck's [problem], [grid], [boundary] and [initial] tables as TOML: what makes two runs
// the same problem (steps, output and parallel settings aside).
std::string problem_identity(const Config& cfg);
std::string to_toml(const Config& cfg);
// The same as a JSON document (for the run report).
std::string to_json(const Config& cfg);

const char* to_string(ProblemKind v);
const char* to_string(Precision v);
const char* to_string(AxisBc v);
const char* to_string(InitialKind v);
const char* to_string(BackendKind v);
const char* to_string(TransportKind v);
const char* to_string(KernelKind v);
const char* to_string(BindMode v);

}  // namespace gridsim
