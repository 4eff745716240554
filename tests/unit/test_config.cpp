// Deck parsing, overrides and validation: values land where they should, and every kind of
// bad input names the file, line and key.
#include <gtest/gtest.h>

#include <cmath>

#include "config/config.hpp"
#include "problems/problem.hpp"

using namespace gridsim;

namespace {

const char* kDeck = R"(# comment line 1
[problem]
name = "heat"
alpha = 0.5

[grid]
cells = [33, 17, 9]
length = [2.0, 1.0, 0.5]

[time]
steps = 7
)";

// The ConfigError message of loading `text` (fails the test if it loads).
std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
    try {
        load_config(text, "deck.toml", sets);
    } catch (const ConfigError& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected a ConfigError for:\n" << text;
    return {};
}

}  // namespace

TEST(Config, ReadsValuesAndDefaults) {
    const Config c = load_config(kDeck, "deck.toml", {});
    EXPECT_EQ(c.problem, "heat");
    EXPECT_EQ(c.dims, 3);
    EXPECT_EQ(c.cells, (std::array<int, 3>{33, 17, 9}));
    EXPECT_DOUBLE_EQ(c.spacing(0), 2.0 / 32);
    EXPECT_DOUBLE_EQ(c.spacing(2), 0.5 / 8);
    EXPECT_EQ(c.steps, 7);
    EXPECT_EQ(c.precision, Precision::float64);
    EXPECT_EQ(c.overlap, OverlapMode::automatic);
    // dt defaults to cfl (0.5) times the stability limit 1 / (2 alpha sum 1/h^2).
    const double inv_h2 =
        1 / std::pow(2.0 / 32, 2) + 1 / std::pow(1.0 / 16, 2) + 1 / std::pow(0.5 / 8, 2);
    EXPECT_NEAR(c.dt, 0.5 / (2 * 0.5 * inv_h2), 1e-18);
}

TEST(Config, BatchJobKeys) {
    const Config a = load_config(kDeck, "deck.toml", {"run.max_walltime=\"1-02:03:04\""});
    EXPECT_EQ(a.max_walltime, ((24.0 + 2) * 60 + 3) * 60 + 4);
    EXPECT_EQ(load_config(kDeck, "d", {"run.max_walltime=\"00:10:00\""}).max_walltime, 600.0);
    // The stall watchdog: ten minutes unless told otherwise; "00:00:00" turns it off.
    EXPECT_EQ(load_config(kDeck, "d", {}).stall_timeout, 600.0);
    EXPECT_EQ(load_config(kDeck, "d", {"run.stall_timeout=\"00:00:00\""}).stall_timeout, 0.0);
    // The blow-up check follows the progress line unless told otherwise; never when 0.
    EXPECT_EQ(load_config(kDeck, "d", {"output.progress_every=50"}).check_interval(), 50);
    EXPECT_EQ(load_config(kDeck, "d", {"output.progress_every=0"}).check_interval(), 1000);
    EXPECT_EQ(load_config(kDeck, "d", {"output.check_every=0"}).check_interval(), 0);
    // The resolved deck carries the wall time and loads back to it.
    const Config b = load_config(to_toml(a), "resolved.toml", {});
    EXPECT_EQ(b.max_walltime, a.max_walltime);
}

TEST(Config, OverridesReplaceAndAddKeys) {
    const Config c =
        load_config(kDeck, "deck.toml",
                    {"grid.cells=[65, 65]", "grid.length=[1, 1]", "problem.name=jacobi",
                     "parallel.overlap=false", "boundary.kind=\"benchmark\""});
    EXPECT_EQ(c.dims, 2);
    EXPECT_EQ(c.cells[0], 65);
    EXPECT_EQ(c.problem, "jacobi");
    EXPECT_EQ(c.precision, Precision::float32);  // jacobi's default
    EXPECT_EQ(c.overlap, OverlapMode::off);
    EXPECT_TRUE(c.benchmark);
    EXPECT_EQ(c.origin.at("grid.cells"), "--set grid.cells=[65, 65]");
    EXPECT_EQ(c.origin.at("time.steps"), "deck.toml:11");
}

// parallel.overlap: true, false, "auto", "fused", "faces_first" or "pipelined", each surviving
// the resolved deck.
TEST(Config, OverlapTakesAutoFusedFacesFirstPipelinedOrABoolean) {
    const std::vector<std::pair<std::string, OverlapMode>> cases = {
        {"true", OverlapMode::on},
        {"false", OverlapMode::off},
        {"\"auto\"", OverlapMode::automatic},
        {"\"fused\"", OverlapMode::fused},
        {"\"faces_first\"", OverlapMode::faces_first},
        {"\"pipelined\"", OverlapMode::pipelined}};
    for (const auto& [value, mode] : cases) {
        const Config c = load_config(kDeck, "deck.toml", {"parallel.overlap=" + value});
        EXPECT_EQ(c.overlap, mode) << value;
        EXPECT_EQ(load_config(to_toml(c), "resolved.toml", {}).overlap, mode) << value;
    }
    try {
        (void)load_config(kDeck, "deck.toml", {"parallel.overlap=\"sometimes\""});
        ADD_FAILURE() << "accepted parallel.overlap = \"sometimes\"";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find(
                      "parallel.overlap: expected \"auto\", \"fused\", \"faces_first\", "
                      "\"pipelined\", true or false, got "
                      "\"sometimes\""),
                  std::string::npos)
            << e.what();
    }
}

TEST(Config, ResolvedTomlLoadsBackToTheSameConfig) {
    const Config a = load_config(kDeck, "deck.toml", {"boundary.y=\"periodic\""});
    const Config b = load_config(to_toml(a), "resolved.toml", {});
    EXPECT_EQ(to_toml(a), to_toml(b));
    EXPECT_EQ(b.axis_bc[1], AxisBc::periodic);
    EXPECT_EQ(b.dt, a.dt);
}

struct BadDeck {
    const char* name;
    std::string text;
    std::vector<std::string> sets;
    const char* expect;
};

void PrintTo(const BadDeck& c, std::ostream* os) { *os << c.name; }

class ConfigRejects : public testing::TestWithParam<BadDeck> {};

TEST_P(ConfigRejects, WithLocationAndKey) {
    const BadDeck& b = GetParam();
    const std::string msg = error_of(b.text, b.sets);
    EXPECT_NE(msg.find(b.expect), std::string::npos) << "message: " << msg;
}

const std::string kBase = "[grid]\ncells = [16, 16]\n";

INSTANTIATE_TEST_SUITE_P(
    Table, ConfigRejects,
    testing::Values(
        BadDeck{"unknown_key",
                kBase + "[time]\nstepz = 3\n",
                {},
                "deck.toml:4: time.stepz: unknown key"},
        BadDeck{"unknown_section",
                kBase + "[solver]\nx = 1\n",
                {},
                "deck.toml:3: solver: unknown table"},
        BadDeck{
            "empty_unknown_table", kBase + "[extra]\n", {}, "deck.toml:3: extra: unknown table"},
        BadDeck{"unknown_key_in_known_table",
                kBase + "[output]\ncheckpoint_evry = 5\n",
                {},
                "deck.toml:4: output.checkpoint_evry: unknown key"},
        BadDeck{"wrong_type",
                kBase + "[time]\nsteps = \"ten\"\n",
                {},
                "deck.toml:4: time.steps: expected an integer, got a string"},
        BadDeck{"negative_steps",
                kBase + "[time]\nsteps = -1\n",
                {},
                "deck.toml:4: time.steps: -1 is out of range"},
        BadDeck{"bad_choice",
                kBase + "[problem]\nname = \"wave\"\n",
                {},
                "deck.toml:4: problem.name: 'wave' is not one of: heat, jacobi"},
        BadDeck{"too_few_points",
                "[grid]\ncells = [2, 16]\n",
                {},
                "deck.toml:2: grid.cells: 2 points on axis 0 is out of range"},
        BadDeck{"four_dims",
                "[grid]\ncells = [4, 4, 4, 4]\n",
                {},
                "grid.cells: expected 2 or 3 values"},
        BadDeck{"missing_cells", "[time]\nsteps = 1\n", {}, "deck.toml: grid.cells: is required"},
        BadDeck{"length_count",
                kBase + "length = [1.0]\n",
                {},
                "deck.toml:3: grid.length: expected 2 values"},
        BadDeck{"unstable_dt",
                kBase + "[time]\ndt = 0.01\n",
                {},
                "deck.toml:4: time.dt: explicit heat step is unstable"},
        BadDeck{"cfl_range", kBase + "[time]\ncfl = 1.5\n", {}, "time.cfl: must be in (0, 1]"},
        BadDeck{"benchmark_heat",
                kBase + "[boundary]\nkind = \"benchmark\"\n",
                {},
                "deck.toml:4: boundary.kind: \"benchmark\" is the 2D jacobi benchmark"},
        BadDeck{"walltime_word",
                kBase + "[run]\nmax_walltime = \"soon\"\n",
                {},
                "deck.toml:4: run.max_walltime: 'soon' is not a wall time"},
        BadDeck{"stall_timeout_word",
                kBase + "[run]\nstall_timeout = \"never\"\n",
                {},
                "run.stall_timeout: 'never' is not a duration"},
        BadDeck{"walltime_minutes",
                kBase + "[run]\nmax_walltime = \"01:60:00\"\n",
                {},
                "run.max_walltime: '01:60:00' is not a wall time"},
        BadDeck{"float_amplitude",
                kBase + "[problem]\nprecision = \"float\"\n[initial]\namplitude = 1e39\n",
                {},
                "initial.amplitude: 1e+39 cannot be held by a float field"},
        BadDeck{"nonfinite_value",
                kBase + "[boundary]\nvalue = inf\n",
                {},
                "boundary.value: must be a finite number"},
        BadDeck{"prefix_control",
                kBase + "[output]\nprefix = \"a\\tb\"\n",
                {},
                "output.prefix: must be a file name"},
        BadDeck{"prefix_dotdot",
                kBase + "[output]\nprefix = \"..\"\n",
                {},
                "output.prefix: must be a file name"},
        BadDeck{"max_abs_negative",
                kBase + "[output]\nmax_abs = -1.0\n",
                {},
                "output.max_abs: must be finite and >= 0"},
        BadDeck{"check_every_negative",
                kBase + "[output]\ncheck_every = -3\n",
                {},
                "output.check_every"},
        BadDeck{"benchmark_sine",
                "[problem]\nname = \"jacobi\"\n[grid]\ncells = [8, 8]\n[boundary]\nkind = "
                "\"benchmark\"\n[initial]\nkind = \"sine\"\n",
                {},
                "deck.toml:8: initial.kind: \"sine\" is not defined with boundary.kind = "
                "\"benchmark\""},
        BadDeck{
            "z_in_2d", kBase + "[boundary]\nz = \"periodic\"\n", {}, "boundary.z: the grid is 2D"},
        BadDeck{"face_values",
                kBase + "[boundary]\nface_values = [1.0, 2.0]\n",
                {},
                "boundary.face_values: expected 4 values"},
        BadDeck{"process_grid_len",
                kBase + "[parallel]\nprocess_grid = [2, 2, 1]\n",
                {},
                "parallel.process_grid: expected 2 values"},
        BadDeck{"syntax", kBase + "[time\n", {}, "deck.toml:3:6: TOML syntax error"},
        BadDeck{"override_unknown",
                kBase,
                {"grid.cellz=[4,4]"},
                "--set grid.cellz=[4,4]: grid.cellz: unknown key"},
        BadDeck{
            "override_no_equals", kBase, {"grid.cells"}, "--set grid.cells: expected key=value"},
        BadDeck{
            "override_bad_value", kBase, {"grid.cells=[4,"}, "cannot read '[4,' as a TOML value"},
        BadDeck{"override_type",
                kBase,
                {"time.steps=1.5"},
                "--set time.steps=1.5: time.steps: expected an integer"}),
    [](const testing::TestParamInfo<BadDeck>& info) { return info.param.name; });

// The CUDA kernel keys: every variant by name, any walk length for the walking kernels, and the
// naive kernel's compiled row counts only.
TEST(Config, KernelVariantsAndPointsPerThread) {
    EXPECT_EQ(load_config(kDeck, "deck.toml", {}).kernel, KernelKind::stream);
    const Config t = load_config(kDeck, "deck.toml",
                                 {"parallel.kernel=\"tiled\"", "parallel.rows_per_thread=3"});
    EXPECT_EQ(t.kernel, KernelKind::tiled);
    EXPECT_EQ(t.rows, 3);
    EXPECT_EQ(load_config(kDeck, "deck.toml", {"parallel.kernel=\"naive\""}).kernel,
              KernelKind::naive);
    EXPECT_NE(error_of(kDeck, {"parallel.kernel=\"naive\"", "parallel.rows_per_thread=3"})
                  .find("parallel.rows_per_thread"),
              std::string::npos);
    EXPECT_NE(error_of(kDeck, {"parallel.kernel=\"naive\"", "parallel.rows_per_thread=16"})
                  .find("1, 2, 4 or 8"),
              std::string::npos);
    EXPECT_NE(error_of(kDeck, {"parallel.kernel=\"fast\""}).find("parallel.kernel"),
              std::string::npos);
    EXPECT_NE(error_of(kDeck, {"parallel.rows_per_thread=-1"}).find("parallel.rows_per_thread"),
              std::string::npos);
}

// [[initial.regions]] in deck order, as inline tables through --set too, and written back so that
// the resolved deck reads the same regions.
TEST(Config, DensityRegionsRoundTrip) {
    const std::string deck =
        "[problem]\nconductivity = \"density\"\n[grid]\ncells = [9, 9, 5]\n[initial]\n"
        "density = 3.0\n[[initial.regions]]\nshape = \"sphere\"\ncenter = [0.5, 0.25, 1.0]\n"
        "radius = 2.0\ndensity = 0.5\n[[initial.regions]]\nshape = \"box\"\nlo = [0, 0.5, 0.5]\n"
        "hi = [1, 0.75, 0.5]\ndensity = 9\n";
    const Config a = load_config(deck, "deck.toml", {});
    ASSERT_EQ(a.regions.size(), 2u);
    EXPECT_EQ(a.density, 3.0);
    EXPECT_TRUE(a.regions[0].sphere);
    EXPECT_EQ(a.regions[0].radius, 2.0);
    EXPECT_EQ(a.regions[0].center[1], 0.25);
    EXPECT_FALSE(a.regions[1].sphere);
    EXPECT_EQ(a.regions[1].hi[1], 0.75);
    EXPECT_EQ(a.regions[1].density, 9.0);
    const Config b = load_config(to_toml(a), "resolved.toml", {});
    ASSERT_EQ(b.regions.size(), 2u);
    EXPECT_EQ(b.regions[1].lo, a.regions[1].lo);
    EXPECT_EQ(b.regions[0].center, a.regions[0].center);
    EXPECT_EQ(b.density, 3.0);
    EXPECT_EQ(problem_identity(a), problem_identity(b));
    const Config c =
        load_config(deck, "deck.toml",
                    {"initial.regions=[{shape = \"box\", lo = [0, 0, 0], hi = [1, 1, 1], "
                     "density = 4}]"});
    ASSERT_EQ(c.regions.size(), 1u);
    EXPECT_EQ(c.regions[0].density, 4.0);
    EXPECT_NE(problem_identity(a), problem_identity(c));
    // Regions name their entry in errors; a problem that reads no density refuses them.
    EXPECT_THROW(load_config(deck, "d", {"initial.regions=[{shape = \"box\", density = 1}]"}),
                 ConfigError);
    EXPECT_THROW(load_config(deck, "d", {"problem.conductivity=\"uniform\""}), ConfigError);
    try {
        (void)load_config(deck, "d", {"initial.regions=[{shape = \"cube\", density = 1}]"});
        ADD_FAILURE() << "a cube region was accepted";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("initial.regions[1].shape"), std::string::npos)
            << e.what();
        EXPECT_EQ(std::string(e.what()).rfind("--set initial.regions=", 0), 0u) << e.what();
    }
}
