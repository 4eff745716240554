// Bad input through the real executable under mpirun: each malformed deck or argument must
// print one clear error (once, from rank 0) naming the problem, exit with code 2 on every
// rank, and leave no output file behind.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

struct Outcome {
    int exit_code = -1;
    std::string output;
};

// This test is itself the launcher: like the CTest launches of the MPI tests, allow root and
// oversubscription (CI runs as root on 2 cores), without overriding a caller's own settings.
void allow_test_launches() {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
}

Outcome run(const std::string& command) {
    allow_test_launches();
    Outcome o;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return o;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) o.output.append(buf, n);
    const int status = pclose(pipe);
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return o;
}

std::size_t count(const std::string& haystack, const std::string& needle) {
    std::size_t c = 0;
    for (auto p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + 1))
        ++c;
    return c;
}

struct BadInput {
    const char* name;
    std::string deck;  // written to bad.toml in a fresh directory ("" = no deck file)
    std::string args;  // after "gridsim"; {deck} and {dir} are replaced
    int ranks;
    std::string expect;
};

const std::string kGood = "[grid]\ncells = [8, 8, 8]\n[time]\nsteps = 2\n";

class BadInputTest : public testing::TestWithParam<BadInput> {};

void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

std::string substitute(std::string s, const std::string& key, const std::string& value) {
    for (auto p = s.find(key); p != std::string::npos; p = s.find(key, p + value.size()))
        s.replace(p, key.size(), value);
    return s;
}

}  // namespace

TEST_P(BadInputTest, ExitsTwoWithOneMessageAndNoOutput) {
    const BadInput& b = GetParam();
    const fs::path dir = fs::temp_directory_path() /
                         ("gridsim_bad_" + std::string(b.name) + "_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path deck = dir / "bad.toml";
    if (!b.deck.empty()) std::ofstream(deck) << b.deck;

    std::string args =
        substitute(substitute(b.args, "{deck}", deck.string()), "{dir}", dir.string());
    const Outcome o = run(std::string(GRIDSIM_MPIEXEC) + " -np " + std::to_string(b.ranks) +
                          " --oversubscribe " + GRIDSIM_EXE + " " + args);
    EXPECT_EQ(o.exit_code, 2) << o.output;
    EXPECT_NE(o.output.find(b.expect), std::string::npos) << o.output;
    EXPECT_EQ(count(o.output, "gridsim: error:"), 1u) << o.output;
    // Nothing written: the directory holds at most the deck we put there.
    std::size_t files = 0;
    for (const auto& entry : fs::directory_iterator(dir)) files += entry.path() != deck ? 1 : 0;
    EXPECT_EQ(files, 0u);
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadInputTest,
    testing::Values(
        BadInput{"missing_deck", "", "run {dir}/nope.toml", 2,
                 "nope.toml: cannot read deck: No such file"},
        BadInput{"syntax_error", "[grid\ncells = [8, 8]\n", "run {deck} --report {dir}/r.json", 2,
                 "bad.toml:1:6: TOML syntax error"},
        BadInput{"unknown_key", kGood + "[output]\nverbose = true\n",
                 "run {deck} --report {dir}/r.json", 2, "bad.toml:6: output.verbose: unknown key"},
        BadInput{"wrong_type", "[grid]\ncells = [8, \"8\"]\n", "run {deck}", 2,
                 "bad.toml:2: grid.cells: array element is a string"},
        BadInput{"out_of_range", kGood + "[initial]\nradius = 2.0\n", "check {deck}", 2,
                 "bad.toml:6: initial.radius: must be in (0, 1]"},
        BadInput{"unstable_dt", kGood + "dt = 1.0\n", "run {deck}", 2,
                 "bad.toml:5: time.dt: explicit heat step is unstable"},
        BadInput{"process_grid_mismatch", kGood,
                 "run {deck} --set parallel.process_grid=[3,1,1] --report {dir}/r.json", 2,
                 "--set parallel.process_grid=[3,1,1]: parallel.process_grid: process grid 3x1x1 "
                 "has 3 ranks but the run has 2"},
        BadInput{"ranks_used_beyond_launched", kGood + "[parallel]\nranks_used = 3\n",
                 "run {deck} --report {dir}/r.json", 2,
                 "bad.toml:6: parallel.ranks_used: 3 ranks asked for, but 2 were launched"},
        BadInput{"fewer_points_than_halo",
                 "[grid]\ncells = [8, 8, 3]\n[parallel]\nprocess_grid = [1, 1, 4]\n", "run {deck}",
                 4, "bad.toml:4: parallel.process_grid: axis z has 3 points over 4 ranks"},
        BadInput{"cuda_backend", kGood + "[parallel]\nbackend = \"cuda\"\n", "run {deck}", 2,
                 "bad.toml:6: parallel.backend: "},
        BadInput{"nccl_on_cpu", kGood + "[parallel]\ntransport = \"nccl\"\n", "run {deck}", 2,
                 "parallel.transport: \"nccl\" moves device memory"},
        BadInput{"ipc_on_cpu", kGood + "[parallel]\ntransport = \"ipc\"\n", "run {deck}", 2,
                 "parallel.transport: \"ipc\" moves device memory"},
        BadInput{"bad_set", kGood, "run {deck} --set time.steps", 2,
                 "--set time.steps: expected key=value"},
        BadInput{"set_unknown_table", kGood, "run {deck} --set a.b.c=1", 2,
                 "gridsim: error: --set a.b.c=1: a: unknown table"},
        BadInput{"set_unknown_inner_table", kGood, "check {deck} --set time.x.y=1", 2,
                 "gridsim: error: --set time.x.y=1: time.x: unknown table"},
        BadInput{"report_dir_missing", kGood, "run {deck} --report {dir}/no/such/r.json", 2,
                 "output.report: directory"},
        BadInput{"unknown_subcommand", "", "frobnicate", 2, "gridsim: error:"},
        BadInput{"run_without_deck", "", "run", 2, "deck is required"},
        BadInput{"unknown_option", kGood, "run {deck} --fast", 2, "--fast"}),
    [](const testing::TestParamInfo<BadInput>& info) { return info.param.name; });
