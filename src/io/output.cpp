#include "io/output.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "comm/mpi_check.hpp"
#include "io/snapshot.hpp"

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

}  // namespace

OutputWriter::OutputWriter(const Config& cfg, MPI_Comm comm) : cfg_(cfg), deck_toml_(to_toml(cfg)) {
    const bool any = cfg.snapshot_every > 0 || cfg.write_final || cfg.checkpoint_every > 0;
    if (!any) return;
    int ok = 1;
    std::string dirs[2] = {cfg.output_dir,
                           std::filesystem::path(cfg.checkpoint_path()).parent_path().string()};
    if (comm_rank(comm) == 0) {
        std::error_code ec;
        for (const auto& d : dirs) {
            if (!d.empty()) std::filesystem::create_directories(d, ec);
        }
        ok = ec ? 0 : 1;
    }
    GRIDSIM_MPI_CHECK(MPI_Bcast(&ok, 1, MPI_INT, 0, comm));
    if (ok == 0)
        throw ConfigError(cfg.where("output.dir") + "cannot create directory '" + cfg.output_dir +
                          "'");
}

bool OutputWriter::snapshot_due(std::int64_t step) const {
    return cfg_.snapshot_every > 0 && step % cfg_.snapshot_every == 0;
}

bool OutputWriter::checkpoint_due(std::int64_t step) const {
    return cfg_.checkpoint_every > 0 && step % cfg_.checkpoint_every == 0;
}

bool OutputWriter::due(std::int64_t step, bool last) const {
    return snapshot_due(step) || checkpoint_due(step) || (last && cfg_.write_final);
}

void OutputWriter::write(const OutputContext& ctx) {
    SnapshotMeta meta;
    meta.problem = to_string(cfg_.problem);
    meta.step = ctx.step;
    meta.time = ctx.time;
    meta.dt = cfg_.problem == ProblemKind::heat ? cfg_.dt : 0.0;
    meta.deck_toml = deck_toml_;
    meta.process_grid.assign(ctx.process_grid.begin(), ctx.process_grid.begin() + cfg_.dims);
    meta.devices = ctx.devices;
    const bool rank0 = comm_rank(ctx.comm) == 0;
    auto snapshot = [&](const std::string& path) {
        write_snapshot(path, ctx.comm, *ctx.domain, *ctx.subdomain, ctx.field, meta,
                       disk_precision(cfg_), false);
        if (rank0) write_xdmf(path, *ctx.domain, disk_bytes(cfg_), ctx.time);
        written_.push_back(path);
    };
    if (snapshot_due(ctx.step)) {
        const std::string path =
            fmt::format("{}/{}_{:08d}.h5", cfg_.output_dir, cfg_.output_prefix, ctx.step);
        snapshot(path);
        series_.emplace_back(path, ctx.time);
        if (rank0)
            write_xdmf_series(fmt::format("{}/{}.xmf", cfg_.output_dir, cfg_.output_prefix),
                              *ctx.domain, disk_bytes(cfg_), series_);
    }
    if (ctx.last && cfg_.write_final)
        snapshot(fmt::format("{}/{}_final.h5", cfg_.output_dir, cfg_.output_prefix));
    if (checkpoint_due(ctx.step)) {
        meta.checkpoint = true;
        if (ctx.residual_history != nullptr) meta.residual_history = *ctx.residual_history;
        write_snapshot(cfg_.checkpoint_path(), ctx.comm, *ctx.domain, *ctx.subdomain, ctx.field,
                       meta, DiskPrecision::native, true);
        written_.push_back(cfg_.checkpoint_path());
    }
}

void OutputWriter::attach(RunOptions& opt) {
    opt.output_due = [this](std::int64_t step, bool last) { return due(step, last); };
    opt.on_output = [this](const OutputContext& ctx) { write(ctx); };
}

void attach_restart(const std::string& path, const Config& cfg, MPI_Comm comm, RunOptions& opt) {
    const CheckpointInfo info = read_checkpoint_info(path, comm, cfg);
    opt.start_step = info.step;
    opt.start_history = info.residual_history;
    opt.load_field = [path](MPI_Comm c, const Domain& dom, const Subdomain& sub,
                            const HostField& f) { read_field(path, c, dom, sub, f); };
}

}  // namespace gridsim
