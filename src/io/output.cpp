#include "io/output.hpp"
#include "parallel/collectives.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "io/snapshot.hpp"
#include "io/stopwatch.hpp"
#include "parallel/mpi_session.hpp"
#include "problems/problem.hpp"

namespace gridsim {

namespace {

DiskPrecision disk_precision(const Config& cfg) {
    if (cfg.output_precision == "float") return DiskPrecision::float32;
    if (cfg.output_precision == "double") return DiskPrecision::float64;
    return DiskPrecision::native;
}

int disk_bytes(const Config& cfg) {
    const DiskPrecision d = disk_precision(cfg);
    if (d == DiskPrecision::native) return cfg.precision == Precision::float32 ? 4 : 8;
    return d == DiskPrecision::float32 ? 4 : 8;
}

// NaN or Inf among this rank's owned points of a host field.
long long count_nonfinite(const HostField& f, const Subdomain& sub) {
    long long n = 0;
    auto scan = [&](const auto* data) {
        for (int k = 0; k < sub.size[2]; ++k)
            for (int j = 0; j < sub.size[1]; ++j)
                for (int i = 0; i < sub.size[0]; ++i)
                    n += std::isfinite(static_cast<double>(data[f.ext.index(i, j, k)])) ? 0 : 1;
    };
    if (f.single) {
        scan(static_cast<const float*>(f.data));
    } else {
        scan(static_cast<const double*>(f.data));
    }
    return n;
}

}  // namespace
AsyncChoice async_output(const Config& cfg) {
    if (cfg.output_async == "off" || (cfg.output_async == "auto" && cfg.snapshot_every == 0))
        return {};
    if (!mpi_thread_multiple())
        return {false,
                "output.async: MPI does not provide MPI_THREAD_MULTIPLE, so snapshots are "
                "written synchronously"};
    return {true, {}};
}

int staging_buffers(const Config& cfg) {
    if (cfg.snapshot_every > 0 && async_output(cfg).on) return cfg.async_buffers;
    return cfg.snapshot_every > 0 || cfg.checkpoint_every > 0 ? 1 : 0;
}

// The directories and names are only tried here (and nothing is left): the directories are made
// at the first write, so a run refused before it writes anything leaves nothing behind.
OutputWriter::OutputWriter(const Config& cfg, MPI_Comm comm, bool restarting)
    : cfg_(cfg), deck_toml_(to_toml(cfg)) {
    const AsyncChoice choice = async_output(cfg);
    async_ = choice.on;
    async_note_ = choice.note;
    std::string error;
    if (comm_rank(comm) == 0) error = startup_error(restarting);
    broadcast_string(comm, error);
    if (!error.empty()) throw ConfigError(error);
}

namespace {

// The last part of the background snapshot before: its sync and rename, then its sidecars.
void finish_tail(std::optional<OutputWriter::Tail>& tail, MPI_Comm comm) {
    if (!tail) return;
    const OutputWriter::Tail t = std::move(*tail);
    tail.reset();
    finish_commit(t.commit, comm, true);
    t.after(comm);
}

}  // namespace

// Runs `job` now on the run's communicator, or, while a background writer exists, on the writer
// (HDF5 is not thread-safe: it is then the only thread that calls it) and waits for it. A
// failure there was agreed and said inside the job: every rank throws RunFailure here.
void OutputWriter::write_now(MPI_Comm comm, const BackgroundWriter::Job& job) {
    if (!writer_) {
        Stopwatch watch;
        job(comm);
        const double took = watch.lap();
        writing_seconds_ += took;  // written, and all of it waited for
        waited_seconds_ += took;
        return;
    }
    writer_->submit(flush_job());  // the snapshots before it are complete first
    writer_->submit(job);
    drain();
}

// The current field for a write that is waited for: its owned points staged packed into the
// first staging buffer (the writer drained first, so every buffer is free), from which HDF5
// writes without a packing copy; without staging buffers, the solver's host copy.
HostField OutputWriter::field_now(const OutputContext& ctx) {
    if (staging_.empty()) return ctx.field();
    drain();
    Stopwatch watch;
    const HostField field = ctx.stage(staging_.front().get()).landed();
    staging_seconds_ += watch.lap();
    return field;
}

// Completes the last background snapshot (its sync, rename and sidecars).
BackgroundWriter::Job OutputWriter::flush_job() const {
    return [tail = tail_](MPI_Comm comm) { finish_tail(*tail, comm); };
}

// Refuses (on every rank) to replace a good checkpoint by one holding NaN or Inf: a restart
// would only carry the blow-up on. Then writes it (after every snapshot still in flight) and
// times the write.
void OutputWriter::write_checkpoint(const OutputContext& ctx, SnapshotMeta meta) {
    const HostField field = field_now(ctx);
    const long long bad = allreduce(
        ctx.comm, static_cast<long long>(count_nonfinite(field, *ctx.subdomain)), Reduce::sum);
    if (bad > 0) {
        if (comm_rank(ctx.comm) == 0)
            std::cerr << fmt::format(
                             "gridsim: error: step {}: refusing to write checkpoint {}: the field "
                             "holds {} non-finite value(s); {} is left as it was",
                             ctx.step, cfg_.checkpoint_path(), bad, cfg_.checkpoint_path())
                      << std::endl;
        throw RunFailure("non-finite checkpoint refused");
    }
    Stopwatch watch;
    meta.checkpoint = true;
    if (ctx.residual_history != nullptr) meta.residual_history = *ctx.residual_history;
    write_now(ctx.comm, [&, meta](MPI_Comm comm) {
        write_snapshot(cfg_.checkpoint_path(), comm, *ctx.domain, *ctx.subdomain, field, meta,
                       DiskPrecision::native, true);
    });
    count_written(*ctx.domain, field.single ? 4 : 8, cfg_.checkpoint_path());
    checkpoint_seconds_ = watch.lap();
}

// Bytes of `domain`'s field at `value_bytes` per point, the size of one file's /fields/u.
void OutputWriter::count_written(const Domain& domain, int value_bytes, const std::string& path) {
    bytes_written_ += grid_points(domain) * static_cast<std::uint64_t>(value_bytes);
    written_.push_back(path);
}

bool OutputWriter::snapshot_due(std::int64_t step) const {
    return cfg_.snapshot_every > 0 && step % cfg_.snapshot_every == 0;
}

bool OutputWriter::checkpoint_due(std::int64_t step) const {
    return cfg_.checkpoint_every > 0 && step % cfg_.checkpoint_every == 0;
}

bool OutputWriter::due(std::int64_t step, bool last) const {
    // The last step also waits for the snapshots still being written.
    return snapshot_due(step) || checkpoint_due(step) || (last && (cfg_.write_final || writer_));
}

// The XDMF sidecar of the snapshot `path`, and with `series` the temporal collection over every
// snapshot so far (copied now: the job runs later). Rank 0 writes them, collectively.
BackgroundWriter::Job OutputWriter::sidecars_job(const OutputContext& ctx, const std::string& path,
                                                 bool series) const {
    const Domain dom = *ctx.domain;
    const int bytes = disk_bytes(cfg_);
    const double time = ctx.time;
    std::vector<std::pair<std::string, double>> list;
    if (series) list = series_;
    const std::string series_path =
        series ? fmt::format("{}/{}.xmf", cfg_.output_dir, cfg_.output_prefix) : std::string();
    return [dom, bytes, time, path, list, series_path](MPI_Comm comm) {
        on_rank0_together(comm, [&] { write_xdmf(path, dom, bytes, time); });
        if (!series_path.empty())
            on_rank0_together(comm, [&] { write_xdmf_series(series_path, dom, bytes, list); });
    };
}

// One snapshot file, then its sidecars. Collective over `comm`. Everything it needs is copied
// into it (it may run after the solver is gone, e.g. while a failure unwinds).
BackgroundWriter::Job OutputWriter::snapshot_job(const OutputContext& ctx, const HostField& field,
                                                 const SnapshotMeta& meta, const std::string& path,
                                                 bool series) const {
    const Domain dom = *ctx.domain;
    const Subdomain sub = *ctx.subdomain;
    const DiskPrecision disk = disk_precision(cfg_);
    return [dom, sub, field, meta, path, disk,
            after = sidecars_job(ctx, path, series)](MPI_Comm comm) {
        write_snapshot(path, comm, dom, sub, field, meta, disk, false);
        after(comm);
    };
}

// A background snapshot: written and closed under its temporary name, then the one before it
// (which the disk has been writing back meanwhile) is synced and renamed, and this one waits in
// `tail_` for the next snapshot or a flush. The staging buffer (`memory`) is free when it ends.
// It starts by waiting for the field's download, which ran beside the loop's next steps; one
// that never lands (the device failed under it) is this rank's error alone, which ends every
// rank (the writer's MPI_Abort) rather than leave them waiting in the collective write.
BackgroundWriter::Job OutputWriter::background_job(const OutputContext& ctx,
                                                   const StagedField& staged,
                                                   std::shared_ptr<void> memory,
                                                   const SnapshotMeta& meta,
                                                   const std::string& path) const {
    const Domain dom = *ctx.domain;
    const Subdomain sub = *ctx.subdomain;
    const DiskPrecision disk = disk_precision(cfg_);
    return [tail = tail_, dom, sub, staged, memory, meta, path, disk, waits = download_waits_,
            after = sidecars_job(ctx, path, true)](MPI_Comm comm) {
        Stopwatch watch;
        const HostField& field = staged.landed();
        *waits += watch.lap();
        PendingCommit mine;
        try {
            mine = write_snapshot_begin(path, comm, dom, sub, field, meta, disk, false);
        } catch (const RunFailure&) {
            try {  // the one before is whole: keep it (this failure is the one said)
                if (*tail) finish_commit((*tail)->commit, comm, false);
            } catch (const RunFailure&) {
            }
            tail->reset();
            throw;
        }
        finish_tail(*tail, comm);
        *tail = Tail{mine, after};
    };
}

// A due snapshot handed to the background writer: the field's copy into the next staging
// buffer started (after waiting for room: that buffer's earlier snapshot is then written), the
// write queued behind it.
void OutputWriter::write_in_background(const OutputContext& ctx, const SnapshotMeta& meta,
                                       const std::string& path) {
    writer_->wait_for_room();
    Stopwatch watch;
    // Allocated before the first step (prepare_output), one per snapshot in flight.
    const std::shared_ptr<void>& slot = staging_.at(staged_++ % staging_.size());
    const StagedField staged = ctx.stage(slot.get());
    staging_seconds_ += watch.lap();
    writer_->submit(background_job(ctx, staged, slot, meta, path));
}

void OutputWriter::write(const OutputContext& ctx) {
    SnapshotMeta meta;
    meta.problem = cfg_.problem;
    meta.step = ctx.step;
    meta.time = ctx.time;
    meta.dt = cfg_.has_time ? cfg_.dt : 0.0;
    meta.deck_toml = deck_toml_;
    meta.process_grid.assign(ctx.process_grid.begin(), ctx.process_grid.begin() + cfg_.dims);
    meta.devices = ctx.devices;
    meta.mpi_hints = cfg_.mpi_hints;
    create_directories(ctx.comm);
    if (async_ && !writer_) {
        const char* delay = std::getenv("GRIDSIM_TEST_WRITE_DELAY_MS");  // tests only
        writer_ = std::make_unique<BackgroundWriter>(ctx.comm, cfg_.async_buffers,
                                                     delay != nullptr ? std::atof(delay) / 1e3 : 0);
    }
    auto snapshot_now = [&](const std::string& path, bool series, const HostField& field) {
        write_now(ctx.comm, snapshot_job(ctx, field, meta, path, series));
        count_written(*ctx.domain, disk_bytes(cfg_), path);
    };
    if (ctx.force_checkpoint) {
        write_checkpoint(ctx, meta);
        return;
    }
    if (ctx.last_good) {
        const std::string path =
            fmt::format("{}/{}_lastgood_{:08d}.h5", cfg_.output_dir, cfg_.output_prefix, ctx.step);
        snapshot_now(path, false, ctx.field());  // the kept state, not the current one
        if (comm_rank(ctx.comm) == 0)
            std::cerr << fmt::format("gridsim: the last good state, step {}, is in {}", ctx.step,
                                     path)
                      << std::endl;
        return;
    }

    if (snapshot_due(ctx.step)) {
        const std::string path =
            fmt::format("{}/{}_{:08d}.h5", cfg_.output_dir, cfg_.output_prefix, ctx.step);
        series_.emplace_back(path, ctx.time);
        if (writer_) {
            write_in_background(ctx, meta, path);
            count_written(*ctx.domain, disk_bytes(cfg_), path);
        } else {
            snapshot_now(path, true, field_now(ctx));
        }
    }
    if (ctx.last && cfg_.write_final)
        snapshot_now(fmt::format("{}/{}_final.h5", cfg_.output_dir, cfg_.output_prefix), false,
                     field_now(ctx));
    if (checkpoint_due(ctx.step)) write_checkpoint(ctx, meta);
    if (ctx.last) drain();  // the loop's time includes the writing it could not hide
}

// Waits for every write in flight; a failure there (said when it happened) ends every rank.
void OutputWriter::drain() {
    if (!writer_) return;
    writer_->submit(flush_job());
    writer_->drain();
    if (const std::string failure = writer_->failure(); !failure.empty()) throw RunFailure(failure);
}

OutputWriter::~OutputWriter() {
    if (writer_ && writer_->failure().empty()) writer_->submit(flush_job());
}  // writer_'s own destructor runs every queued job, then joins its thread

void OutputWriter::finish() {
    if (!writer_) return;
    drain();
    writing_seconds_ += writer_->busy_seconds();
    waited_seconds_ += writer_->waited_seconds();
    writer_.reset();
}

nlohmann::json OutputWriter::summary(MPI_Comm comm) const {
    double writing = writing_seconds_;
    double waited = waited_seconds_;
    double staging = staging_seconds_;
    double download_wait = *download_waits_;  // after finish(): the writer has stopped
    SnapshotTimes parts = snapshot_times();
    for (double* v : {&writing, &waited, &staging, &download_wait, &parts.write_s, &parts.close_s,
                      &parts.sync_s})
        *v = allreduce(comm, *v, Reduce::max);
    const double bytes = static_cast<double>(bytes_written_);
    return {{"async", async_},
            {"async_note", async_note_},
            {"files", written_.size()},
            {"field_bytes", bytes_written_},
            {"staging_s", staging},
            {"download_wait_s", download_wait},
            {"hdf5_write_s", parts.write_s},
            {"hdf5_close_s", parts.close_s},
            {"fsync_rename_s", parts.sync_s},
            {"writing_s", writing},
            {"waited_s", waited},
            // The files' rate: the writer's time less its waits for the device's copies.
            {"write_rate_MBps",
             writing > download_wait ? bytes / (writing - download_wait) / 1e6 : 0.0},
            {"hidden_s", std::max(0.0, writing - waited)}};
}

void OutputWriter::attach(RunOptions& opt) {
    opt.output_due = [this](std::int64_t step, bool last) { return due(step, last); };
    opt.on_output = [this](const OutputContext& ctx) { write(ctx); };
    opt.checkpoint_seconds = [this] { return checkpoint_seconds_; };
    opt.output_failed = [this] { return writer_ && !writer_->failure().empty(); };
    opt.prepare_output = [this](const std::function<std::shared_ptr<void>()>& allocate) {
        for (int i = 0; i < staging_buffers(cfg_); ++i) staging_.push_back(allocate());
    };
}

void attach_restart(const std::string& path, const Config& cfg, MPI_Comm comm, RunOptions& opt) {
    const CheckpointInfo info = read_checkpoint_info(path, comm, cfg);
    opt.start_step = info.step;
    opt.restart_file = path;
    opt.start_history = info.residual_history;
    opt.load_field = [path](MPI_Comm c, const Domain& dom, const Subdomain& sub,
                            const HostField& f) { read_field(path, c, dom, sub, f); };
}

}  // namespace gridsim
