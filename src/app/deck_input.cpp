// Reading a deck for `run` and `check`: rank 0 reads, every rank parses the same text.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/commands.hpp"
#include "io/output.hpp"
#include "parallel/mpi_session.hpp"
#include "problems/problem.hpp"

namespace gridsim::app {

namespace {

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
    broadcast_string(MPI_COMM_WORLD, error);
    broadcast_string(MPI_COMM_WORLD, text);
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
    return refused_name(dir.string(), fs::path(path).filename().string() + ".tmp");
}

}  // namespace

Config load_deck(const Options& opt, int rank) {
    Config cfg = load_config(read_deck_everywhere(opt.deck, rank), opt.deck, opt.sets);
    if (!opt.report.empty()) {
        cfg.report = opt.report;
        cfg.origin["output.report"] = "--report";
    }
    if (opt.quiet) cfg.progress_every = 0;
    std::string error;
    if (rank == 0 && !cfg.report.empty()) error = unwritable_report(cfg.report);
    broadcast_string(MPI_COMM_WORLD, error);
    if (!error.empty()) throw ConfigError(cfg.where("output.report") + error);
    return cfg;
}

}  // namespace gridsim::app
