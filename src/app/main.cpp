// gridsim: the command line and its dispatch to the commands (app/commands.hpp says the exit
// codes).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "app/commands.hpp"
#include "io/compare.hpp"
#include "io/provenance.hpp"
#include "parallel/collectives.hpp"
#include "parallel/mpi_session.hpp"
#include "parallel/together.hpp"
#include "problems/problem.hpp"
#include "report/machine.hpp"

namespace gridsim::app {

namespace {

// The command line: every command with its options, and what was given.
struct CommandLine {
    CLI::App app{"gridsim: MPI-parallel structured-grid stencil simulations"};
    Options opt;
    CompareOptions compare_opt;
    BenchOptions bench_opt;
    int bench_mib = 256;
    std::string bench_io;
    bool markdown = false;
    CLI::App* run = nullptr;
    CLI::App* check = nullptr;
    CLI::App* problems = nullptr;
    CLI::App* info = nullptr;
    CLI::App* bench = nullptr;
    CLI::App* compare = nullptr;
};

const std::vector<std::string> kCommands = {"run", "check", "problems", "info", "bench", "compare"};

void add_deck_options(CLI::App& cmd, Options& opt) {
    cmd.add_option("deck", opt.deck, "TOML deck")->required();
    cmd.add_option("--set", opt.sets, "override a deck key, e.g. --set grid.cells=[128,128,128]")
        ->type_name("KEY=VALUE");
}

void define_deck_commands(CommandLine& c) {
    Options& opt = c.opt;
    c.run = c.app.add_subcommand("run", "run a deck");
    add_deck_options(*c.run, opt);
    c.run->add_option("--report", opt.report, "write the JSON run report here");
    c.run->add_flag("--quiet", opt.quiet, "print only the summary");
    c.run->add_flag("--verbose", opt.verbose,
                    "also print every rank's placement (GPU, NUMA node, CPUs, memory) at start");
    c.run->add_option("--restart", opt.restart,
                      "continue from this checkpoint (output.checkpoint_every writes them)");
    c.run->add_flag("--allow-nonfinite", opt.allow_nonfinite,
                    "restart even from a checkpoint that holds NaN or Inf values");
    c.check = c.app.add_subcommand("check", "validate a deck and print the resolved configuration");
    add_deck_options(*c.check, opt);
    c.check->add_flag("--json", opt.json,
                      "print the resolved configuration as JSON instead of TOML");
    c.check
        ->add_option("--ranks", opt.ranks, "also print the process grid this many ranks would use")
        ->check(CLI::Range(1, 1 << 24));
    c.check
        ->add_option("--ranks-per-node", opt.ranks_per_node,
                     "with --ranks: the grid, rank order and busiest rank's faces over nodes of "
                     "this many ranks")
        ->check(CLI::Range(1, 1 << 24));
}

void define_other_commands(CommandLine& c) {
    c.problems = c.app.add_subcommand(
        "problems", "the problems gridsim runs, with the deck keys each one owns");
    c.problems->add_flag(
        "--markdown", c.markdown,
        "print docs/deck-keys.md: every deck key with its type, default and meaning");
    c.info = c.app.add_subcommand("info",
                                  "build, versions, transports, and the rank -> host -> GPU map");
    c.bench = c.app.add_subcommand("bench",
                                   "measure copy and transfer bandwidths (the report's ceilings)");
    c.bench->add_option("--size-mib", c.bench_mib, "MiB per copy")->check(CLI::Range(1, 16384));
    c.bench->add_option("--io", c.bench_io,
                        "measure the file write ceiling of this directory instead (a large "
                        "sequential write + fsync per rank)");
    c.bench->add_option("--reps", c.bench_opt.reps, "repetitions (the best is kept)")
        ->check(CLI::Range(1, 1000));
    c.compare = c.app.add_subcommand("compare", "compare the fields of two gridsim HDF5 files");
    CompareOptions& cmp = c.compare_opt;
    c.compare->add_option("a", cmp.a, "file A")->required();
    c.compare->add_option("b", cmp.b, "file B (the reference: relative errors are relative to it)")
        ->required();
    c.compare->add_option("--rtol", cmp.rtol, "relative tolerance (default 0)")
        ->check(CLI::NonNegativeNumber);
    c.compare->add_option("--atol", cmp.atol, "absolute tolerance (default 0)")
        ->check(CLI::NonNegativeNumber);
    c.compare->add_option("--field", cmp.field, "compare only this field (default: all)");
}

// The parsed command, run; returns its exit code.
int dispatch(CommandLine& c, int rank, std::chrono::steady_clock::time_point start) {
    if (c.run->parsed()) return run_deck(c.opt, rank, start);
    if (c.check->parsed()) return check_deck(c.opt, rank);
    if (c.problems->parsed()) {
        if (rank == 0) std::cout << (c.markdown ? deck_keys_markdown() : problems_text());
        return 0;
    }
    if (c.compare->parsed()) {
        std::string text;
        const int status = compare_files(c.compare_opt, MPI_COMM_WORLD, text);
        std::cout << text << std::flush;
        return status;
    }
    if (c.info->parsed()) {
        std::cout << machine_info(MPI_COMM_WORLD) << std::flush;
        return 0;
    }
    c.bench_opt.bytes = static_cast<std::size_t>(c.bench_mib) << 20;
    if (!c.bench_io.empty()) {
        const std::string text = io_bench(MPI_COMM_WORLD, c.bench_io, c.bench_opt);
        if (rank == 0) std::cout << text << std::flush;
        return 0;
    }
    std::cout << machine_bench(MPI_COMM_WORLD, c.bench_opt) << std::flush;
    return 0;
}

// Parses argv; returns -1 to go on, else the exit code (--help, bad usage).
int parse(CommandLine& c, int argc, char** argv, int rank) {
    // CLI11 would say only "A subcommand is required" for a misspelt command.
    if (argc > 1 && argv[1][0] != '-' &&
        std::find(kCommands.begin(), kCommands.end(), argv[1]) == kCommands.end()) {
        if (rank == 0)
            std::cerr << fmt::format(
                             "gridsim: error: unknown command '{}' (commands: {}; see gridsim "
                             "--help)",
                             argv[1], fmt::join(kCommands, ", "))
                      << std::endl;
        return kExitBadInput;
    }
    try {
        c.app.parse(argc, argv);
    } catch (const CLI::Success& e) {  // --help
        return rank == 0 ? c.app.exit(e) : 0;
    } catch (const CLI::ParseError& e) {
        if (rank == 0)
            std::cerr << "gridsim: error: " << e.what() << " (see gridsim --help)" << std::endl;
        return kExitBadInput;
    }
    return -1;
}

}  // namespace

}  // namespace gridsim::app

int main(int argc, char** argv) {
    using namespace gridsim::app;  // NOLINT(google-build-using-namespace): main is the app's
    const auto start = std::chrono::steady_clock::now();  // the report's start-up time from here
    // The CUDA runtime loads each kernel at its first launch by default (lazy loading), which
    // puts the loading into the first steps of the timed loop (docs/tuning.md, "Kernel
    // loading"). Load every kernel when CUDA starts instead, in the start-up time, unless the
    // user chose. Before MPI: a CUDA-aware MPI may start CUDA in MPI_Init.
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    gridsim::MpiSession mpi(&argc, &argv);
    const int rank = mpi.rank();
    CommandLine c;
    c.app.require_subcommand(1);
    c.app.set_version_flag("--version", "gridsim " + gridsim::gridsim_version());
    define_deck_commands(c);
    define_other_commands(c);
    if (const int code = parse(c, argc, argv, rank); code >= 0) return code;
    try {
        return dispatch(c, rank, start);
    } catch (const gridsim::ConfigError& e) {
        if (rank == 0) std::cerr << "gridsim: error: " << e.what() << std::endl;
        return kExitBadInput;
    } catch (const gridsim::RunFailure&) {
        return kExitRuntime;  // every rank saw it together; the ranks concerned said why
    } catch (const std::exception& e) {
        // A failure that may be local to this rank: end every rank rather than leave them waiting.
        std::cerr << fmt::format("gridsim: rank {}: error: {}", rank, e.what()) << std::endl;
        gridsim::abort_all(kExitRuntime);
    }
}
