// gridsim: subcommand dispatch and the wiring of the layers (config -> solver -> report).
//
// Exit codes: 0 success, 1 runtime failure (all ranks aborted), 2 bad input or usage.
// Bad input is detected identically on every rank (rank 0 reads the deck and broadcasts its
// text), so every rank returns 2 together and rank 0 prints the message once.
#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "comm/cart_topology.hpp"
#include "comm/mpi_check.hpp"
#include "comm/mpi_session.hpp"
#include "config/config.hpp"
#include "field/field.hpp"
#include "grid/domain.hpp"
#include "io/compare.hpp"
#include "io/output.hpp"
#include "io/provenance.hpp"
#include "kernels/stencil.hpp"
#include "report/machine.hpp"
#include "report/report.hpp"
#include "solver/problem.hpp"
#include "solver/run.hpp"
#include "solver/stop_request.hpp"

namespace {

// When main() began: the run report's start-up time runs from here to the first step.
std::chrono::steady_clock::time_point g_process_start;

using gridsim::Config;
using gridsim::ConfigError;

constexpr int kExitRuntime = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitStopped = 3;  // stopped early with a checkpoint: continue with --restart

struct Options {
    std::string deck;
    std::vector<std::string> sets;
    std::string report;
    bool quiet = false;
    bool verbose = false;
    bool allow_nonfinite = false;
    bool json = false;
    std::string restart;
    int ranks = 0;  // check: also print the process grid this many ranks would use
};

// Rank 0 reads the deck; every rank gets its text (or the same error).
std::string read_deck_everywhere(const std::string& path, int rank) {
    std::string text;
    std::string error;
    if (rank == 0) {
        std::ifstream in(path, std::ios::binary);
        if (std::filesystem::is_directory(path)) {
            error = fmt::format("{}: is a directory, not a deck", path);
        } else if (!in) {
            error = fmt::format("{}: cannot read deck: {}", path, std::strerror(errno));
        } else {
            std::ostringstream ss;
            ss << in.rdbuf();
            text = ss.str();
        }
    }
    gridsim::broadcast_string(MPI_COMM_WORLD, error);
    gridsim::broadcast_string(MPI_COMM_WORLD, text);
    if (!error.empty()) throw ConfigError(error);
    return text;
}

// Why the run report could not be written at `path`, or "": refused before running rather than
// the result lost at the end. Its temporary name is tried (created and removed), so a name the
// file system refuses shows too.
std::string unwritable_report(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir = fs::absolute(path, ec).parent_path();
    if (!fs::is_directory(dir, ec))
        return fmt::format("directory '{}' does not exist", dir.string());
    if (fs::is_directory(path, ec)) return fmt::format("'{}' is a directory, not a file", path);
    return gridsim::refused_name(dir.string(), fs::path(path).filename().string() + ".tmp");
}

Config load(const Options& opt, int rank) {
    Config cfg = gridsim::load_config(read_deck_everywhere(opt.deck, rank), opt.deck, opt.sets);
    if (!opt.report.empty()) {
        cfg.report = opt.report;
        cfg.origin["output.report"] = "--report";
    }
    if (opt.quiet) cfg.progress_every = 0;
    std::string error;
    if (rank == 0 && !cfg.report.empty()) error = unwritable_report(cfg.report);
    gridsim::broadcast_string(MPI_COMM_WORLD, error);
    if (!error.empty()) throw ConfigError(cfg.where("output.report") + error);
    return cfg;
}

// The halo layers the deck's fields carry: parallel.time_block when set ("auto" may choose more
// once the backend is known; the run checks it then).
int halo_depth(const Config& cfg) { return std::max(gridsim::kStencilRadius, cfg.time_block); }

// The process grid `ranks` ranks would run `cfg` on (the deck's, or the modelled cheapest);
// throws ConfigError when it cannot be decomposed that way.
std::array<int, 3> grid_for_ranks(const Config& cfg, int ranks) {
    const gridsim::Domain dom = gridsim::make_domain(cfg);
    const std::array<int, 3> grid = gridsim::choose_process_grid(cfg, dom, ranks);
    if (const std::string why = gridsim::decomposition_problem(dom, grid, ranks, halo_depth(cfg));
        !why.empty()) {
        throw ConfigError("--ranks " + std::to_string(ranks) + ": " + why);
    }
    return grid;
}

// Bytes of the fields of the largest rank on `grid` (the problem's count of them), halos
// included (the block at coords 0: the first blocks take the remainder points), without the row
// padding a backend may add: what a run needs at least, before it knows its backend.
double field_bytes_per_rank(const Config& cfg, const std::array<int, 3>& grid) {
    const gridsim::Domain dom = gridsim::make_domain(cfg);
    const gridsim::Subdomain sub = gridsim::make_subdomain(dom, grid, {0, 0, 0});
    const auto ext = gridsim::FieldExtents::make(cfg.dims, sub.size, halo_depth(cfg));
    const double value = cfg.precision == gridsim::Precision::float32 ? 4.0 : 8.0;
    return gridsim::find_problem(cfg.problem).field_count(cfg) * static_cast<double>(ext.total) *
           value;
}

int cmd_check(const Options& opt, int rank) {
    const Config cfg = load(opt, rank);
    std::array<int, 3> grid{1, 1, 1};
    if (opt.ranks > 0) grid = grid_for_ranks(cfg, opt.ranks);
    if (rank != 0) return 0;
    const std::vector<int> shown(grid.begin(), grid.begin() + cfg.dims);
    const int ranks = std::max(opt.ranks, 1);
    const double bytes = field_bytes_per_rank(cfg, grid);
    if (opt.json) {
        nlohmann::json doc = nlohmann::json::parse(gridsim::to_json(cfg));
        if (opt.ranks > 0) doc["process_grid_for_ranks"] = {{"ranks", opt.ranks}, {"grid", shown}};
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
        // The run checks this against the free memory of the machine it runs on.
        std::cout << fmt::format(
            "# memory per rank at {} rank(s): {:.3g} GiB ({} fields with halos, largest rank; "
            "the CPU backend keeps one more copy)\n",
            ranks, bytes / 1073741824.0, gridsim::find_problem(cfg.problem).field_count(cfg));
        std::cout << gridsim::to_toml(cfg) << std::flush;
    }
    return 0;
}

// A shell word: quoted unless it is plain.
std::string shell_word(const std::string& w) {
    if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_-./=:,[]+") == std::string::npos)
        return w;
    std::string out = "'";
    for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// Why the run stopped before time.steps, where it left its checkpoint and how to continue.
nlohmann::json stop_record(const Config& cfg, const Options& opt, const gridsim::RunResult& r) {
    std::string again = "gridsim run " + shell_word(opt.deck);
    for (const auto& s : opt.sets) again += " --set " + shell_word(s);
    if (!opt.report.empty()) again += " --report " + shell_word(opt.report);
    again += " --restart " + shell_word(cfg.checkpoint_path());
    const std::string message = fmt::format(
        "stopped at step {} of {} by {}: checkpoint {} written; continue with (under your "
        "launcher):\n  {}",
        r.steps, cfg.steps, r.stopped, cfg.checkpoint_path(), again);
    return {{"reason", r.stopped},
            {"step", r.steps},
            {"checkpoint", cfg.checkpoint_path()},
            {"restart_command", again},
            {"message", message}};
}

int cmd_run(const Options& opt, int rank) {
    const Config cfg = load(opt, rank);
    gridsim::RunOptions run_opt;
    run_opt.measure_copy_bandwidth = true;
    run_opt.process_start = g_process_start;
    run_opt.on_progress = [rank](const gridsim::ProgressSample& s) {
        if (rank == 0) std::cout << gridsim::progress_line(s) << std::endl;
    };
    if (!opt.quiet) {
        run_opt.on_start = [&](const gridsim::RunStart& s) {
            if (rank != 0) return;
            std::cout << gridsim::start_header(cfg, s, opt.restart)
                      << (opt.verbose ? gridsim::placement_map(s.placements) : std::string())
                      << std::flush;
        };
    }
    gridsim::OutputWriter output(cfg, MPI_COMM_WORLD, !opt.restart.empty());
    output.attach(run_opt);
    if (!opt.restart.empty()) gridsim::attach_restart(opt.restart, cfg, MPI_COMM_WORLD, run_opt);
    run_opt.allow_nonfinite_restart = opt.allow_nonfinite;
    gridsim::install_stop_handlers();
    const gridsim::RunResult result = gridsim::run_problem(cfg, MPI_COMM_WORLD, run_opt);
    output.finish();
    nlohmann::json doc = gridsim::build_report(cfg, result, MPI_COMM_WORLD);
    doc["output"] = output.summary(MPI_COMM_WORLD);
    if (rank == 0) {
        doc["outputs"] = output.written();
        if (!opt.restart.empty())
            doc["restarted_from"] = {{"file", opt.restart}, {"step", run_opt.start_step}};
    }
    if (rank == 0) {
        std::cout << gridsim::summary_text(doc) << std::flush;
        for (const auto& f : output.written()) std::cout << "  wrote           " << f << '\n';
        if (!result.stopped.empty()) doc["stopped"] = stop_record(cfg, opt, result);
    }
    // Checked before the first step; a report that cannot be written now (the file system
    // changed under the run) ends every rank with rank 0's one line.
    if (!cfg.report.empty()) {
        gridsim::on_rank0_together(MPI_COMM_WORLD, [&] {
            gridsim::write_report(cfg.report, doc);
            std::cout << "  report          " << cfg.report << '\n' << std::flush;
        });
    }
    if (rank == 0 && !result.stopped.empty())
        std::cout << doc["stopped"]["message"].get<std::string>() << std::endl;
    return result.stopped.empty() ? 0 : kExitStopped;
}

void add_deck_options(CLI::App& cmd, Options& opt) {
    cmd.add_option("deck", opt.deck, "TOML deck")->required();
    cmd.add_option("--set", opt.sets, "override a deck key, e.g. --set grid.cells=[128,128,128]")
        ->type_name("KEY=VALUE");
}

}  // namespace

int main(int argc, char** argv) {
    g_process_start = std::chrono::steady_clock::now();
    // The CUDA runtime loads each kernel at its first launch by default (lazy loading), which
    // puts the loading into the first steps of the timed loop (docs/tuning.md, "Kernel
    // loading"). Load every kernel when CUDA starts instead, in the start-up time,
    // unless the user chose. Before MPI: a CUDA-aware MPI may start CUDA in MPI_Init.
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    gridsim::MpiSession mpi(&argc, &argv);
    const int rank = mpi.rank();

    CLI::App app{"gridsim: MPI-parallel structured-grid stencil simulations"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "gridsim " + gridsim::gridsim_version());
    Options opt;
    CLI::App* run = app.add_subcommand("run", "run a deck");
    add_deck_options(*run, opt);
    run->add_option("--report", opt.report, "write the JSON run report here");
    run->add_flag("--quiet", opt.quiet, "print only the summary");
    run->add_flag("--verbose", opt.verbose,
                  "also print every rank's placement (GPU, NUMA node, CPUs, memory) at start");
    run->add_option("--restart", opt.restart,
                    "continue from this checkpoint (output.checkpoint_every writes them)");
    run->add_flag("--allow-nonfinite", opt.allow_nonfinite,
                  "restart even from a checkpoint that holds NaN or Inf values");
    CLI::App* check =
        app.add_subcommand("check", "validate a deck and print the resolved configuration");
    add_deck_options(*check, opt);
    check->add_flag("--json", opt.json, "print the resolved configuration as JSON instead of TOML");
    check->add_option("--ranks", opt.ranks, "also print the process grid this many ranks would use")
        ->check(CLI::Range(1, 1 << 24));
    CLI::App* problems_cmd = app.add_subcommand(
        "problems", "the problems gridsim runs, with the deck keys each one owns");
    bool markdown = false;
    problems_cmd->add_flag(
        "--markdown", markdown,
        "print docs/deck-keys.md: every deck key with its type, default and meaning");
    CLI::App* info =
        app.add_subcommand("info", "build, versions, transports, and the rank -> host -> GPU map");
    CLI::App* bench =
        app.add_subcommand("bench", "measure copy and transfer bandwidths (the report's ceilings)");
    CLI::App* compare =
        app.add_subcommand("compare", "compare the fields of two gridsim HDF5 files");
    gridsim::CompareOptions cmp;
    compare->add_option("a", cmp.a, "file A")->required();
    compare->add_option("b", cmp.b, "file B (the reference: relative errors are relative to it)")
        ->required();
    compare->add_option("--rtol", cmp.rtol, "relative tolerance (default 0)")
        ->check(CLI::NonNegativeNumber);
    compare->add_option("--atol", cmp.atol, "absolute tolerance (default 0)")
        ->check(CLI::NonNegativeNumber);
    compare->add_option("--field", cmp.field, "compare only this field (default: all)");
    int bench_mib = 256;
    gridsim::BenchOptions bench_opt;
    bench->add_option("--size-mib", bench_mib, "MiB per copy")->check(CLI::Range(1, 16384));
    std::string bench_io;
    bench->add_option("--io", bench_io,
                      "measure the file write ceiling of this directory instead (a large "
                      "sequential write + fsync per rank)");
    bench->add_option("--reps", bench_opt.reps, "repetitions (the best is kept)")
        ->check(CLI::Range(1, 1000));

    // CLI11 would say only "A subcommand is required" for a misspelt command.
    const std::vector<std::string> commands = {"run",  "check", "problems",
                                               "info", "bench", "compare"};
    if (argc > 1 && argv[1][0] != '-' &&
        std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
        if (rank == 0)
            std::cerr << fmt::format(
                             "gridsim: error: unknown command '{}' (commands: {}; see gridsim "
                             "--help)",
                             argv[1], fmt::join(commands, ", "))
                      << std::endl;
        return kExitBadInput;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {  // --help
        return rank == 0 ? app.exit(e) : 0;
    } catch (const CLI::ParseError& e) {
        if (rank == 0)
            std::cerr << "gridsim: error: " << e.what() << " (see gridsim --help)" << std::endl;
        return kExitBadInput;
    }

    try {
        if (run->parsed()) return cmd_run(opt, rank);
        if (check->parsed()) return cmd_check(opt, rank);
        if (problems_cmd->parsed()) {
            if (rank == 0)
                std::cout << (markdown ? gridsim::deck_keys_markdown() : gridsim::problems_text());
            return 0;
        }
        if (compare->parsed()) {
            std::string text;
            const int status = gridsim::compare_files(cmp, MPI_COMM_WORLD, text);
            std::cout << text << std::flush;
            return status;
        }
        if (info->parsed()) {
            std::cout << gridsim::machine_info(MPI_COMM_WORLD) << std::flush;
            return 0;
        }
        bench_opt.bytes = static_cast<std::size_t>(bench_mib) << 20;
        if (!bench_io.empty()) {
            const std::string text = gridsim::io_bench(MPI_COMM_WORLD, bench_io, bench_opt);
            if (rank == 0) std::cout << text << std::flush;
            return 0;
        }
        std::cout << gridsim::machine_bench(MPI_COMM_WORLD, bench_opt) << std::flush;
        return 0;
    } catch (const ConfigError& e) {
        if (rank == 0) std::cerr << "gridsim: error: " << e.what() << std::endl;
        return kExitBadInput;
    } catch (const gridsim::RunFailure&) {
        return kExitRuntime;  // every rank saw it together; the ranks concerned said why
    } catch (const std::exception& e) {
        // A failure that may be local to this rank: end every rank rather than leave them waiting.
        std::cerr << fmt::format("gridsim: rank {}: error: {}", rank, e.what()) << std::endl;
        MPI_Abort(MPI_COMM_WORLD, kExitRuntime);
        return kExitRuntime;
    }
}
