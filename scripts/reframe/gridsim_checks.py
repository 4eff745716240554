"""ReFrame checks of gridsim for a site's regression and performance tracking.

  reframe -C scripts/reframe/settings.py -c scripts/reframe/gridsim_checks.py -r
  reframe ... -S num_tasks=4 -S GridsimBenchmark.points_per_axis=1024   # sizes and ranks

GridsimValidation (sanity): runs inputs/default.toml and holds its final field to the
independent reference file (reference/default.h5 installed, tests/reference/ in the source
tree) with `gridsim compare`; it passes on the compare's PASS line. GridsimBenchmark
(performance, one per benchmark deck): runs the deck with a JSON report and reads from that
report, not from the text output, the performance variables glups (GLUP/s), time_per_step
(s) and bandwidth_ratio (effective bandwidth over the device copy bandwidth measured in the
same run). REFERENCES below holds the expected values per system:partition; add a row for
yours (the defaults, for every system, record the values and never fail).

gridsim is found as the scripts find it: $GRIDSIM, the source tree's build/gridsim, the
installed PREFIX/bin/gridsim, else `gridsim` on PATH (or -S gridsim=PATH).
"""
import json
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, performance_function, run_before, sanity_function, variable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))  # the source tree, or PREFIX/share/gridsim
DECKS = os.path.join(ROOT, "inputs")


def default_gridsim():
    for path in (os.environ.get("GRIDSIM"), os.path.join(ROOT, "build", "gridsim"),
                 os.path.join(ROOT, "..", "..", "bin", "gridsim")):
        if path and os.access(path, os.X_OK):
            return os.path.abspath(path)
    return "gridsim"


def reference_file(name):
    for where in (os.path.join(ROOT, "reference"), os.path.join(ROOT, "tests", "reference")):
        if os.path.isfile(os.path.join(where, name)):
            return os.path.join(where, name)
    return os.path.join(ROOT, "reference", name)


# Expected performance per deck and system:partition: (value, lower, upper, unit), the bounds
# fractions of the value (-0.1: fail more than 10% below it; None: no bound). '*' matches any
# system. Example, from docs/performance.md (one rank on an H200, 2026-11-27):
#   "bench_jacobi2d": {"mycluster:h200": {"glups": (1800.0, -0.1, None, "GLUP/s"),
#                                          "bandwidth_ratio": (3.5, -0.1, None, "")}},
UNBOUNDED = {"glups": (0.0, None, None, "GLUP/s"), "time_per_step": (0.0, None, None, "s"),
             "bandwidth_ratio": (0.0, None, None, "")}
REFERENCES = {
    "bench_jacobi2d": {"*": UNBOUNDED},
    "bench_heat3d": {"*": UNBOUNDED},
    "bench_jacobi3d": {"*": UNBOUNDED},
    "bench_heat3d_implicit": {"*": UNBOUNDED},
}
DIMS = {"bench_jacobi2d": 2, "bench_heat3d": 3, "bench_jacobi3d": 3, "bench_heat3d_implicit": 3}


@sn.deferrable
def report_value(path, key):
    """A number from gridsim's JSON run report."""
    with open(path) as f:
        return float(json.load(f)[key])


class GridsimBase(rfm.RunOnlyRegressionTest):
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    gridsim = variable(str, value=default_gridsim())
    num_tasks = 2
    maintainers = ["gridsim"]
    tags = {"gridsim"}


@rfm.simple_test
class GridsimValidation(GridsimBase):
    descr = "gridsim: inputs/default.toml against its independent reference file"

    @run_before("run")
    def set_command(self):
        self.executable = self.gridsim
        self.executable_opts = ["run", os.path.join(DECKS, "default.toml"), "--quiet",
                                "--set", 'output.dir="out"']
        self.postrun_cmds = [f"{self.gridsim} compare out/snapshot_final.h5 "
                             f"{reference_file('default.h5')} --atol 1e-12"]

    @sanity_function
    def validated(self):
        return sn.all([sn.assert_found(r"^PASS$", self.stdout),
                       sn.assert_found(r"error vs exact discrete solution", self.stdout)])


@rfm.simple_test
class GridsimBenchmark(GridsimBase):
    deck = parameter(sorted(REFERENCES))
    points_per_axis = variable(int, value=0)  # 0: the deck's grid
    steps = variable(int, value=0)  # 0: the deck's

    @property
    def report(self):
        return f"report-{self.deck}.json"

    @run_before("run")
    def set_command(self):
        self.descr = f"gridsim: {self.deck} performance"
        self.executable = self.gridsim
        opts = ["run", os.path.join(DECKS, self.deck + ".toml"), "--quiet", "--report", self.report,
                "--set", 'output.dir="out"']
        if self.points_per_axis > 0:
            cells = ",".join([str(self.points_per_axis)] * DIMS[self.deck])
            opts += ["--set", f"grid.cells=[{cells}]"]
        if self.steps > 0:
            opts += ["--set", f"time.steps={self.steps}"]
        self.executable_opts = opts

    @run_before("performance")
    def set_reference(self):
        self.reference = REFERENCES[self.deck]

    @sanity_function
    def ran(self):
        return sn.all([sn.assert_found(r"time per step", self.stdout),
                       sn.assert_gt(report_value(os.path.join(self.stagedir, self.report), "glups"), 0)])

    @performance_function("GLUP/s")
    def glups(self):
        return report_value(os.path.join(self.stagedir, self.report), "glups")

    @performance_function("s")
    def time_per_step(self):
        return report_value(os.path.join(self.stagedir, self.report), "time_per_step_s")

    @performance_function("")
    def bandwidth_ratio(self):
        return report_value(os.path.join(self.stagedir, self.report), "bandwidth_ratio")
