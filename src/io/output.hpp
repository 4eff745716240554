// Decides when to write snapshots and checkpoints (deck [output] keys) and writes them: the
// RunOptions hooks the solver calls. Snapshots go to {dir}/{prefix}_{step:08}.h5 with an XDMF
// sidecar and a temporal collection {dir}/{prefix}.xmf; the final state (write_final) to
// {dir}/{prefix}_final.h5; checkpoints replace {checkpoint} (the previous kept as .prev).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "io/background_writer.hpp"
#include "io/snapshot.hpp"
#include "run/run.hpp"

namespace gridsim {

// output.async resolved: whether snapshots are written by a background thread, and a note when
// the deck asked for it and MPI cannot (no MPI_THREAD_MULTIPLE: written synchronously instead).
struct AsyncChoice {
    bool on = false;
    std::string note;
};
AsyncChoice async_output(const Config& cfg);
// Host buffers of one field each that the output stages fields through (page-locked on the CUDA
// backend, allocated before the first step): output.async_buffers for background snapshots,
// else one where snapshots or checkpoints are written synchronously during the run.
int staging_buffers(const Config& cfg);

class OutputWriter {
public:
    // A background snapshot written under its temporary name, its sync, rename and sidecars
    // still to do (by the writer thread only).
    struct Tail {
        PendingCommit commit;
        BackgroundWriter::Job after;
    };

    // Checks that the output and checkpoint directories can be made and take the names the run
    // will write there (rank 0 tries; they are made at the first write). Collective: throws
    // ConfigError on every rank or none.
    // A restart may replace the files of the run it continues; otherwise files another problem
    // wrote are only replaced with output.overwrite = true.
    OutputWriter(const Config& cfg, MPI_Comm comm, bool restarting = false);
    // Completes the last background snapshot and stops the writer: a run ended by a failure
    // every rank shares (a blow-up) keeps the snapshots it wrote.
    ~OutputWriter();
    OutputWriter(const OutputWriter&) = delete;
    OutputWriter& operator=(const OutputWriter&) = delete;

    [[nodiscard]] bool due(std::int64_t step, bool last) const;
    void write(const OutputContext& ctx);
    // Adds output_due/on_output hooks to `opt` that call this writer (which must outlive the run).
    void attach(RunOptions& opt);

    [[nodiscard]] const std::vector<std::string>& written() const { return written_; }
    // Waits for the background writer and stops it (collective; a failure throws RunFailure).
    // Call after the run, before the report.
    void finish();
    // The report's "output" object (after finish()): files, bytes of /fields written, the
    // seconds spent staging (on the loop's path: starting the copies from the device), the
    // writer's wait for those copies, writing and the loop's waiting for the writing, the write
    // rate and the writing hidden behind the loop's work; times the largest over ranks.
    // Collective.
    [[nodiscard]] nlohmann::json summary(MPI_Comm comm) const;

private:
    [[nodiscard]] bool snapshot_due(std::int64_t step) const;
    [[nodiscard]] bool checkpoint_due(std::int64_t step) const;
    [[nodiscard]] std::vector<std::string> directories() const;
    struct Names {
        std::string dir;
        std::vector<std::string> names;
        const char* dir_key;   // the deck key a refused directory is blamed on
        const char* name_key;  // and a refused name
    };
    [[nodiscard]] std::vector<Names> names_to_write() const;
    void create_directories(MPI_Comm comm);
    [[nodiscard]] std::string other_runs_files() const;
    [[nodiscard]] std::string startup_error(bool restarting) const;
    void write_checkpoint(const OutputContext& ctx, SnapshotMeta meta);
    [[nodiscard]] HostField field_now(const OutputContext& ctx);
    void write_now(MPI_Comm comm, const BackgroundWriter::Job& job);
    void write_in_background(const OutputContext& ctx, const SnapshotMeta& meta,
                             const std::string& path);
    [[nodiscard]] BackgroundWriter::Job sidecars_job(const OutputContext& ctx,
                                                     const std::string& path, bool series) const;
    [[nodiscard]] BackgroundWriter::Job snapshot_job(const OutputContext& ctx,
                                                     const HostField& field,
                                                     const SnapshotMeta& meta,
                                                     const std::string& path, bool series) const;
    [[nodiscard]] BackgroundWriter::Job background_job(const OutputContext& ctx,
                                                       const StagedField& staged,
                                                       std::shared_ptr<void> memory,
                                                       const SnapshotMeta& meta,
                                                       const std::string& path) const;
    [[nodiscard]] BackgroundWriter::Job flush_job() const;
    void count_written(const Domain& domain, int value_bytes, const std::string& path);
    void drain();

    const Config& cfg_;
    std::string deck_toml_;
    std::vector<std::pair<std::string, double>> series_;
    std::vector<std::string> written_;
    double checkpoint_seconds_ = 0.0;
    bool directories_made_ = false;
    bool async_ = false;
    std::string async_note_;
    std::vector<std::shared_ptr<void>> staging_;  // staging_buffers(cfg_) fields (prepare_output)
    std::int64_t staged_ = 0;                     // snapshots staged so far (buffer: mod count)
    std::uint64_t bytes_written_ = 0;
    double staging_seconds_ = 0.0;  // starting the copies (the loop's part)
    // The writer's waits for those copies to land (its thread only, until finish()).
    std::shared_ptr<double> download_waits_ = std::make_shared<double>(0.0);
    // Writing, and the loop's waiting for it: synchronous writes (both), and the finished
    // writer's (finish()).
    double writing_seconds_ = 0.0;
    double waited_seconds_ = 0.0;
    std::shared_ptr<std::optional<Tail>> tail_ = std::make_shared<std::optional<Tail>>();
    std::unique_ptr<BackgroundWriter> writer_;  // made at the first write (collective)
};

// Why the file system refuses the file name `name` in the existing directory `dir` (too long,
// characters it does not take, no permission), or "". Tries: creates the file and removes it.
std::string refused_name(const std::string& dir, const std::string& name);

// The restart hooks for `opt` from a checkpoint file: start step, history and field loader.
// Throws ConfigError for a file that cannot continue this deck. Collective.
void attach_restart(const std::string& path, const Config& cfg, MPI_Comm comm, RunOptions& opt);

}  // namespace gridsim
