// What OutputWriter checks before the first step (output.hpp): names the file system refuses,
// directories that cannot be made or written, and files another run left in output.dir.
#include "io/output.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/snapshot.hpp"
#include "parallel/mpi_session.hpp"
#include "problems/problem.hpp"

namespace gridsim {

// Only trying tells (a name too long, characters the file system does not take).
std::string refused_name(const std::string& dir, const std::string& name) {
    const std::filesystem::path path = std::filesystem::path(dir) / name;
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) return {};  // it has the name already
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return fmt::format("cannot create '{}': {}", path.string(), std::strerror(errno));
    ::close(fd);
    ::unlink(path.c_str());
    return {};
}

namespace {

// Why `dir` could not be created (or used) by this process, or why it refuses one of `names`,
// or "". The nearest part of `dir` that exists must be a directory we may write into, and a
// missing `dir` must be creatable: only trying tells (root passes access() on /proc, where mkdir
// fails), so a missing directory is created, the names tried in it, and it is removed again.
// Nothing is left behind, and a run refused for it stops before its header, with nothing
// written. `name_refused` tells which of the two it was.
std::string unusable_directory(const std::string& dir, const std::vector<std::string>& names,
                               bool& name_refused) {
    namespace fs = std::filesystem;
    name_refused = false;
    std::error_code ec;
    const fs::path target = fs::absolute(dir, ec);
    fs::path p = target;
    while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
    if (!fs::is_directory(p, ec)) return fmt::format("'{}' is not a directory", p.string());
    if (::access(p.c_str(), W_OK | X_OK) != 0)
        return fmt::format("cannot create '{}' in '{}': {}", dir, p.string(), std::strerror(errno));
    if (p != target) fs::create_directories(target, ec);
    std::string error =
        ec ? fmt::format("cannot create directory '{}': {}", dir, ec.message()) : std::string();
    for (const std::string& name : names) {
        if (!error.empty()) break;
        error = refused_name(target.string(), name);
        name_refused = !error.empty();
    }
    std::error_code ignored;
    for (fs::path made = target; made != p && !made.empty(); made = made.parent_path())
        fs::remove(made, ignored);  // only the empty directories made just now
    return error;
}

}  // namespace

// The output directory, and the checkpoint's when it has one of its own.
std::vector<std::string> OutputWriter::directories() const {
    std::vector<std::string> out = {cfg_.output_dir};
    const std::string ckpt = std::filesystem::path(cfg_.checkpoint_path()).parent_path().string();
    if (!ckpt.empty()) out.push_back(ckpt);
    return out;
}

// Each directory the run writes into, with the longest name of every kind it may write there
// (temporary names included: ".xmf.tmp" is the longest ending) and the key that names them.
std::vector<OutputWriter::Names> OutputWriter::names_to_write() const {
    const std::string& p = cfg_.output_prefix;
    const std::string last_step = fmt::format("{:08d}", cfg_.steps);  // the widest step number
    const std::filesystem::path ckpt(cfg_.checkpoint_path());
    const std::string ckpt_name = ckpt.filename().string();
    const std::string ckpt_dir = ckpt.parent_path().empty() ? "." : ckpt.parent_path().string();
    const char* ckpt_key = cfg_.checkpoint.empty() ? "output.dir" : "output.checkpoint";
    return {{cfg_.output_dir,
             {p + "_" + last_step + ".xmf.tmp", p + "_lastgood_" + last_step + ".xmf.tmp",
              p + "_final.xmf.tmp", p + ".xmf.tmp"},
             "output.dir",
             "output.prefix"},
            {ckpt_dir, {ckpt_name + ".tmp", ckpt_name + ".prev"}, ckpt_key, ckpt_key}};
}

// The first file this run would replace that another problem wrote (its /provenance deck differs
// in [problem], [grid], [boundary] or [initial]), as an error; "" when there is none. A rerun of
// the same problem, and a restart, replace their own files. The checkpoint and the first few
// snapshots stand for the directory: a run writes them all from one deck.
std::string OutputWriter::other_runs_files() const {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<std::string> candidates = {cfg_.checkpoint_path()};
    for (const auto& e : fs::directory_iterator(cfg_.output_dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind(cfg_.output_prefix + "_", 0) == 0 && e.path().extension() == ".h5")
            candidates.push_back(e.path().string());
        if (candidates.size() > 3) break;
    }
    const std::string mine = problem_identity(cfg_);
    for (const std::string& path : candidates) {
        if (!fs::exists(path, ec)) continue;
        const std::string deck = written_deck(path);
        std::string theirs;
        try {
            theirs = deck.empty() ? std::string() : problem_identity(load_config(deck, path, {}));
        } catch (const ConfigError&) {
        }
        if (theirs != mine) {
            return fmt::format(
                "'{}' holds {}, written by another run (a different problem, or "
                "not by gridsim): set output.overwrite = true to replace it, or "
                "choose another output.dir",
                cfg_.output_dir, path);
        }
    }
    return {};
}

// The output directory and the checkpoint's (rank 0), once, at the first write. They were found
// usable before the first step; one that cannot be made now (the file system changed under the
// run) ends every rank together.
void OutputWriter::create_directories(MPI_Comm comm) {
    if (directories_made_) return;
    directories_made_ = true;
    on_rank0_together(comm, [this] {
        for (const std::string& d : directories()) {
            std::error_code ec;
            std::filesystem::create_directories(d, ec);
            if (ec)
                throw std::runtime_error(
                    fmt::format("cannot create directory '{}': {}", d, ec.message()));
        }
    });
}

// Rank 0, before the header: the first directory or name the run could not write, or files
// another run left in output.dir (unless restarting or output.overwrite); "" when none.
std::string OutputWriter::startup_error(bool restarting) const {
    for (const Names& n : names_to_write()) {
        bool name_refused = false;
        const std::string error = unusable_directory(n.dir, n.names, name_refused);
        if (!error.empty()) return cfg_.where(name_refused ? n.name_key : n.dir_key) + error;
    }
    if (!restarting && !cfg_.overwrite) {
        if (const std::string theirs = other_runs_files(); !theirs.empty())
            return cfg_.where("output.dir") + theirs;
    }
    return {};
}

}  // namespace gridsim
