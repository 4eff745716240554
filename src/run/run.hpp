// Runs one deck to completion on a communicator and returns what the report needs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "engine/phase_timer.hpp"
#include "engine/trial.hpp"
#include "kernels/backend.hpp"
#include "mesh/domain.hpp"
#include "parallel/node_map.hpp"
#include "parallel/together.hpp"
#include "platform/placement.hpp"

namespace gridsim {

struct ErrorNorms {
    double max_abs = 0.0;
    double rel_l2 = 0.0;  // ||u - ref||_2 / ||ref||_2 over all grid points
};

// A progress sample, taken collectively; the callback runs on every rank.
struct ProgressSample {
    std::int64_t step = 0;
    std::int64_t start = 0;  // the step this run began at (a restart's checkpoint step)
    std::int64_t total = 0;
    double sim_time = 0.0;
    const char* norm_name = "";
    double norm = 0.0;
    double elapsed_s = 0.0;
    double glups = 0.0;
};

// What the output layer gets at a step it asked for (all ranks, collectively).
struct OutputContext {
    std::int64_t step = 0;
    double time = 0.0;
    bool last = false;
    MPI_Comm comm = MPI_COMM_NULL;
    const Domain* domain = nullptr;
    const Subdomain* subdomain = nullptr;
    std::array<int, 3> process_grid{1, 1, 1};
    // The field on the host, fetched when called (a download from the device, waited for): into
    // the solver's own host copy, halos included. Or `stage`: its owned points, packed, on their
    // way into `dst`, one field's worth of memory from the allocator prepare_output was given
    // (page-locked on the CUDA backend); the copy runs beside the steps issued after it: wait
    // for its landing before reading `dst`.
    std::function<HostField()> field;
    std::function<StagedField(void* dst)> stage;
    const std::vector<std::pair<std::int64_t, double>>* residual_history = nullptr;
    std::string devices;  // every rank's device, e.g. "4 x NVIDIA H200" (identical on all ranks)
    bool force_checkpoint = false;  // a stop request: write a checkpoint now, nothing else
    bool last_good = false;         // a blow-up: `field` is the last good state, written as such
};

// What a run was set up with, which its start header (RunStart) and its result (RunResult) both
// report. The same on every rank.
struct RunSetup {
    std::string backend;
    std::string backend_note;  // why `auto` chose the backend
    std::string launch;        // kernel variant and block shape
    std::string transport;
    bool graphs = false;                           // sweeps recorded and replayed (CUDA graphs)
    int time_block = 1;                            // sweeps between halo exchanges
    std::vector<TimeBlockTrial> time_block_trial;  // "auto"'s start-up trial, if one ran
    ExchangeTrial exchange_trial;  // overlap "auto"'s trial of the exchanging pass, if one ran
    bool sums_in_passes = false;   // a residual every sweep, summed inside passes of several
    std::array<int, 3> process_grid{1, 1, 1};
    int ranks = 1;
    NodeMap nodes;                                    // the ranks on each node
    std::vector<std::pair<std::string, int>> routes;  // faces of all ranks per transport
    std::array<int, 3> node_tile{0, 0, 0};  // the box of blocks each node takes; 0: launcher's
    std::string layout_note;      // where the deck's process grid costs more on these nodes
    std::int64_t start_step = 0;  // where the run began (a restart's checkpoint step)
};

// What a run was set up with, known once the simulation exists and before its first step (the
// header a batch log starts with). The same on every rank.
struct RunStart : RunSetup {
    std::string transport_note;             // the route lost inside a node, and how to keep it
    std::string devices;                    // e.g. "4 x NVIDIA H200"
    std::size_t field_bytes_max = 0;        // the fields of the largest rank
    int field_count = 2;                    // how many: the two of every problem, and a solver's
    std::vector<RankPlacement> placements;  // every rank's, on rank 0
};

struct RunOptions {
    bool gather_field = false;  // fill RunResult::global_field on rank 0
    // When the process began (main() entry); set, the report gets the start-up time.
    std::optional<std::chrono::steady_clock::time_point> process_start;
    bool measure_copy_bandwidth = false;  // the report's ceiling (costs a large copy)
    std::function<void(const ProgressSample&)> on_progress;
    // Called on every rank (collectively) once the field is initialised, before the first step.
    std::function<void(const RunStart&)> on_start;
    // Output: asked after every step (the answer must be the same on every rank); when true,
    // on_output gets the field on the host.
    std::function<bool(std::int64_t step, bool last)> output_due;
    std::function<void(const OutputContext&)> on_output;
    // Called once before the first step with a way to allocate host memory for one field (the
    // output layer's staging buffers: allocated before the loop, not in it).
    std::function<void(const std::function<std::shared_ptr<void>()>&)> prepare_output;
    // Whether output written in the background has failed (asked at every stop agreement: the
    // ranks end together at the same step, exit 1; the failure was said when it happened).
    std::function<bool()> output_failed;
    // Restart: continue after `start_step` from the field `load_field` reads (owned points),
    // with this residual history so far.
    std::int64_t start_step = 0;
    std::vector<std::pair<std::int64_t, double>> start_history;
    std::function<void(MPI_Comm, const Domain&, const Subdomain&, const HostField&)> load_field;
    std::string restart_file;              // for messages
    bool allow_nonfinite_restart = false;  // continue from a checkpoint holding NaN/Inf
    // Seconds the last checkpoint took to write (0: none yet): the wall-time stop keeps that
    // much time in hand.
    std::function<double()> checkpoint_seconds;
};

struct RunResult : RunSetup {
    std::string device;           // this rank's GPU "name (PCI bus id)", "" on the CPU
    RankPlacement placement;      // this rank's binding and where its memory is
    double copy_bandwidth = 0.0;  // bytes/s of a large device copy, this rank, same run
    std::int64_t steps = 0;       // last step (heat) or sweep (jacobi) reached
    std::string stopped;          // why the run stopped before time.steps ("": it did not)
    double dt = 0.0;
    double sim_time = 0.0;
    double loop_seconds = 0.0;        // wall time of the step loop, slowest rank
    double loop_seconds_local = 0.0;  // this rank's
    double startup_seconds = 0.0;     // process start to the first step, slowest rank (0: unknown)
    std::int64_t updated_points = 0;  // per step, all ranks
    std::size_t value_bytes = 8;      // sizeof(T)
    int coefficient_fields = 0;       // read-only fields the stencil reads (a density: 1)
    PhaseTimes phases{};              // this rank's
    // How the lane phases were timed: on every `phase_every`-th of `passes` passes (sweeps,
    // operator applications), `timed_passes` of them, scaled to all.
    int phase_every = 1;
    std::int64_t passes = 0;
    std::int64_t timed_passes = 0;
    std::int64_t memory_passes = 0;  // passes over memory (levels a backend ran one by one count)
    std::int64_t pipelined_passes = 0;  // this rank's passes of a pipeline (overlap "pipelined")
    std::vector<std::pair<std::int64_t, double>> residual_history;  // jacobi
    bool converged = false;                                         // jacobi reached time.tolerance
    double final_norm = 0.0;  // residual (jacobi) or ||u||_2 (heat)
    // What the problem adds to the report (its Problem entry): merged into the report's top level.
    nlohmann::json problem_report = nlohmann::json::object();
    FieldStats final_stats;                      // of the final field, all ranks
    std::optional<ErrorNorms> error_discrete;    // vs the exact discrete solution
    std::optional<ErrorNorms> error_continuous;  // vs the continuous PDE solution
    std::vector<double> global_field;            // solved grid on rank 0, when asked for
};

// Throws ConfigError for decks this rank count or build cannot run (same on every rank).
RunResult run_problem(const Config& cfg, MPI_Comm comm, const RunOptions& options = {});

}  // namespace gridsim
