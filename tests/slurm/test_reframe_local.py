"""scripts/reframe/gridsim_checks.py run by ReFrame (installed here from the package index into
a venv; skipped, saying why, where it cannot be) with its local scheduler and mpirun: the
validation check and every benchmark deck's performance check pass, and each performance
variable ReFrame reports is the value in that check's own JSON run report. Needs GRIDSIM."""
import glob
import json
import os
import shutil
import tempfile
import unittest

import reframe_env

GRIDSIM = os.environ["GRIDSIM"]


def check_reports(test, prefix, output):
    """Every deck's three performance variables equal its report's values."""
    values = reframe_env.performance_lines(output)
    decks = {d for d, _ in values}
    test.assertEqual(decks, {"bench_jacobi2d", "bench_heat3d", "bench_jacobi3d", "bench_heat3d_implicit"}, output)
    for deck in decks:
        reports = glob.glob(os.path.join(prefix, "stage", "**", f"report-{deck}.json"), recursive=True)
        test.assertEqual(len(reports), 1, f"report-{deck}.json kept: {reports}")
        with open(reports[0]) as f:
            rep = json.load(f)
        test.assertAlmostEqual(values[(deck, "glups")], rep["glups"], delta=1e-9 * rep["glups"])
        test.assertAlmostEqual(values[(deck, "time_per_step")], rep["time_per_step_s"],
                               delta=1e-9 * rep["time_per_step_s"])
        test.assertAlmostEqual(values[(deck, "bandwidth_ratio")], rep["bandwidth_ratio"],
                               delta=1e-9 * rep["bandwidth_ratio"])


class ReframeLocal(unittest.TestCase):
    def test_checks_pass_and_report_the_json_values(self):
        try:
            reframe_env.reframe()
        except reframe_env.Unavailable as err:
            self.skipTest(str(err))
        prefix = tempfile.mkdtemp(prefix="gridsim_reframe_")
        self.addCleanup(shutil.rmtree, prefix, ignore_errors=True)
        res = reframe_env.run_checks("local", prefix, {**os.environ, "GRIDSIM": GRIDSIM})
        out = res.stdout + res.stderr
        self.assertEqual(res.returncode, 0, out)
        self.assertIn("Ran 5/5 test case(s) from 5 check(s) (0 failure(s)", out)
        check_reports(self, prefix, out)


if __name__ == "__main__":
    unittest.main()
