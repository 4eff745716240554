// A fuzz target over everything gridsim reads from a user: deck text with --set overrides, and the
// HDF5 header checks of `gridsim compare` and `--restart`. Any input must end in a value or a
// ConfigError / std::runtime_error: never a crash, an abort, a hang or an allocation the size of
// a hostile file's claims.
//
// LLVMFuzzerTestOneInput is the libFuzzer entry point (link it with clang's -fsanitize=fuzzer to
// run it that way). Built here, main() drives it instead with a seeded mutator over a corpus of
// decks for a bounded time, which is what CTest runs:
//   fuzz_inputs --seconds 20 --seed 1 tests/fuzz/corpus
// The first input byte picks the target: deck text, or an HDF5 file built from the remaining
// bytes as a recipe (ranks, extents up to 2^40, element types, which attributes exist and what
// they hold, a residual history of any shape), checked as a checkpoint and compared.
#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "io/compare.hpp"
#include "io/snapshot.hpp"
#include "problems/problem.hpp"

namespace {

using gridsim::Config;
using gridsim::ConfigError;

// Reads choices from the fuzz bytes; past the end every choice is 0.
class Recipe {
public:
    Recipe(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
    unsigned pick(unsigned n) { return n == 0 ? 0 : (at_ < size_ ? data_[at_++] : 0) % n; }
    bool flag() { return pick(2) == 1; }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t at_ = 0;
};

void deck_target(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    // A line "--set KEY=VALUE" at the end becomes an override, as on the command line.
    std::vector<std::string> sets;
    for (std::size_t at; (at = text.rfind("\n--set ")) != std::string::npos;) {
        sets.push_back(text.substr(at + 7));
        text.erase(at);
    }
    try {
        const Config c = gridsim::load_config(text, "fuzz.toml", sets);
        (void)gridsim::to_toml(c);
        (void)gridsim::to_json(c);
    } catch (const ConfigError&) {
    }
}

constexpr hsize_t kExtents[] = {0, 1, 2, 8, 16, 17, 100000, hsize_t{1} << 40};

void attr_string(hid_t obj, const char* name, const std::string& value) {
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, value.empty() ? 1 : value.size());
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, type, value.empty() ? "" : value.data());
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
}

void attr_ints(hid_t obj, const char* name, const std::vector<long long>& v) {
    const hsize_t n = v.size();
    const hid_t space = n == 0 ? H5Screate(H5S_NULL) : H5Screate_simple(1, &n, nullptr);
    const hid_t attr = H5Acreate2(obj, name, H5T_NATIVE_LLONG, space, H5P_DEFAULT, H5P_DEFAULT);
    if (n > 0) H5Awrite(attr, H5T_NATIVE_LLONG, v.data());
    H5Aclose(attr);
    H5Sclose(space);
}

// One attribute of the root or /grid, written the right way, the wrong type, or not at all.
void maybe_attr(Recipe& r, hid_t obj, const char* name, const std::string& good_text,
                const std::vector<long long>& good_ints) {
    switch (r.pick(4)) {
        case 0:
            break;  // absent
        case 1:
            if (!good_text.empty()) {
                attr_string(obj, name, good_text);
            } else {
                attr_ints(obj, name, good_ints);
            }
            break;
        case 2:
            attr_ints(obj, name, {static_cast<long long>(r.pick(40)) - 8});  // wrong type/value
            break;
        default:
            attr_string(obj, name, std::string(r.pick(9), 'x'));
    }
}

// A dataset of `rank` extents from the table, of one of four element types, chunked so that no
// extent is ever allocated; a few small ones get data.
void dataset(Recipe& r, hid_t where, const char* name) {
    const int rank = static_cast<int>(r.pick(5));
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    hsize_t points = 1;
    for (auto& d : dims) {
        d = kExtents[r.pick(8)];
        points = d == 0 ? 0 : (points > (hsize_t{1} << 50) / d ? hsize_t{1} << 50 : points * d);
    }
    const hid_t types[] = {H5T_NATIVE_DOUBLE, H5T_NATIVE_FLOAT, H5T_NATIVE_INT, H5T_C_S1};
    const hid_t type = types[r.pick(4)];
    const hid_t space =
        rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims.data(), nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (rank > 0 && points > 0) {
        std::vector<hsize_t> chunk(dims.size());
        for (std::size_t i = 0; i < dims.size(); ++i) chunk[i] = std::min<hsize_t>(dims[i], 16);
        H5Pset_chunk(dcpl, rank, chunk.data());
    }
    const hid_t dset = H5Dcreate2(where, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dset >= 0 && points > 0 && points <= 4096 && type != H5T_C_S1) {
        std::vector<double> values(points);
        for (auto& v : values) v = static_cast<double>(r.pick(7)) - 3.0;
        H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    }
    if (dset >= 0) H5Dclose(dset);
    H5Pclose(dcpl);
    H5Sclose(space);
}

void write_recipe_file(const std::string& path, Recipe& r) {
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    maybe_attr(r, file, "format", "gridsim", {});
    maybe_attr(r, file, "kind", r.flag() ? "checkpoint" : "snapshot", {});
    maybe_attr(r, file, "problem", r.flag() ? "heat" : "jacobi", {});
    maybe_attr(r, file, "step", "", {static_cast<long long>(r.pick(12)) - 2});
    if (r.flag()) {
        const hid_t grid = H5Gcreate2(file, "/grid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        std::vector<long long> cells(r.pick(4));
        for (auto& c : cells) c = static_cast<long long>(kExtents[r.pick(8)]);
        maybe_attr(r, grid, "global_cells", "", cells);
        H5Gclose(grid);
    }
    if (r.flag()) {
        const hid_t fields = H5Gcreate2(file, "/fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (r.pick(4) != 0) dataset(r, fields, "u");
        H5Gclose(fields);
    }
    maybe_attr(r, file, "time", "", {0});
    if (r.flag()) dataset(r, file, "restart_residual_history");
    H5Fclose(file);
    // Sometimes cut the file short, as an interrupted copy would.
    if (r.pick(4) == 0) {
        const auto size = std::filesystem::file_size(path);
        std::filesystem::resize_file(path, size * r.pick(100) / 100);
    }
}

void hdf5_target(const std::uint8_t* data, std::size_t size) {
    static const std::string dir = [] {
        const auto p =
            std::filesystem::temp_directory_path() / ("gridsim_fuzz_" + std::to_string(::getpid()));
        std::filesystem::create_directories(p);
        return p.string();
    }();
    const std::string path = dir + "/input.h5";
    Recipe r(data, size);
    write_recipe_file(path, r);
    Config cfg = gridsim::load_config("[grid]\ncells = [16, 16]\n[time]\nsteps = 8\n", "deck", {});
    try {
        (void)gridsim::read_checkpoint_info(path, MPI_COMM_SELF, cfg);
    } catch (const std::exception&) {
    }
    try {
        gridsim::CompareOptions opt;
        opt.a = path;
        opt.b = path;
        std::string text;
        (void)gridsim::compare_files(opt, MPI_COMM_SELF, text);
    } catch (const std::exception&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    if (data[0] % 2 == 0) {
        deck_target(data + 1, size - 1);
    } else {
        hdf5_target(data + 1, size - 1);
    }
    return 0;
}

#ifndef GRIDSIM_LIBFUZZER
namespace {

// Pieces a mutation inserts: TOML syntax, the deck's own words, and hostile numbers.
const char* const kTokens[] = {"[",
                               "]",
                               "=",
                               "\"",
                               "'",
                               ",",
                               "\n",
                               "{",
                               "}",
                               "#",
                               ".",
                               "-",
                               "'''",
                               "\\u0000",
                               "\\",
                               "[grid]",
                               "[time]",
                               "[output]",
                               "[parallel]",
                               "[run]",
                               "[extra]",
                               "cells",
                               "steps",
                               "prefix",
                               "0",
                               "-1",
                               "3",
                               "2147483648",
                               "9223372036854775807",
                               "1e999",
                               "1e39",
                               "nan",
                               "inf",
                               "-0.0",
                               "true",
                               "\"auto\"",
                               "\"strict\"",
                               "\"00:00:01\"",
                               "[1, 2, 3, 4]",
                               "[]",
                               "\n--set grid.cells=[4,4]",
                               "\n--set time.steps=0",
                               "\n--set output.prefix=\"a/b\""};

std::string mutate(std::string s, std::mt19937_64& rng, const std::vector<std::string>& corpus) {
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
        const std::size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
        switch (rng() % 5) {
            case 0:
                if (!s.empty()) s[std::min(at, s.size() - 1)] = static_cast<char>(rng() % 256);
                break;
            case 1:
                s.insert(at, kTokens[rng() % (sizeof kTokens / sizeof *kTokens)]);
                break;
            case 2:
                s.erase(at, rng() % 16);
                break;
            case 3: {  // splice a line of another corpus entry
                const std::string& other = corpus[rng() % corpus.size()];
                const std::size_t from = other.empty() ? 0 : rng() % other.size();
                s.insert(at, other.substr(from, other.find('\n', from) - from + 1));
                break;
            }
            default:
                if (!s.empty()) s.insert(at, s.substr(rng() % s.size(), rng() % 24));
        }
    }
    return s;
}

int usage() {
    std::cerr << "usage: fuzz_inputs [--seconds S] [--seed N] CORPUS_DIR" << std::endl;
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = 10;
    unsigned long long seed = 1;
    std::string corpus_dir;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--seconds" && i + 1 < argc) {
            seconds = std::stod(argv[++i]);
        } else if (a == "--seed" && i + 1 < argc) {
            seed = std::stoull(argv[++i]);
        } else if (corpus_dir.empty()) {
            corpus_dir = a;
        } else {
            return usage();
        }
    }
    if (corpus_dir.empty()) return usage();
    std::vector<std::string> corpus;
    for (const auto& entry : std::filesystem::directory_iterator(corpus_dir)) {
        std::ifstream in(entry.path(), std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        corpus.push_back(text.str());
    }
    if (corpus.empty()) return usage();
    MPI_Init(&argc, &argv);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    std::mt19937_64 rng(seed);
    const auto start = std::chrono::steady_clock::now();
    long long runs[2] = {0, 0};
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
           seconds) {
        std::string input;
        if (rng() % 4 == 0) {  // an HDF5 recipe: random bytes
            input.resize(1 + rng() % 64);
            for (auto& c : input) c = static_cast<char>(rng() % 256);
            input[0] = 1;
        } else {
            input = '\0' + mutate(corpus[rng() % corpus.size()], rng, corpus);
        }
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
        ++runs[input[0] % 2];
    }
    std::printf("fuzz_inputs: %lld decks and %lld HDF5 files in %.0f s (seed %llu): no crash\n",
                runs[0], runs[1], seconds, seed);
    MPI_Finalize();
    std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                ("gridsim_fuzz_" + std::to_string(::getpid())));
    return 0;
}
#endif
