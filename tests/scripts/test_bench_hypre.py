"""scripts/bench_hypre.py end to end on a small grid: gridsim's multigrid and hypre's PFMG-CG take
the same steps on 2 ranks, their final fields agree, and the table holds each solver's row with
the iterations each printed in its own output. Bad input exits 2. Needs GRIDSIM, MPIEXEC and
HYPRE_STEP."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "bench_hypre.py")
LAUNCH = os.environ.get("MPIEXEC", "mpirun") + " -np {n} --oversubscribe"


def bench(*args):
    return subprocess.run([sys.executable, SCRIPT, "--gridsim", os.environ["GRIDSIM"], "--hypre-step",
                           os.environ["HYPRE_STEP"], "--launcher", LAUNCH, *args],
                          capture_output=True, text=True, check=False, timeout=600)


class BenchHypre(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gridsim_bench_hypre_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_both_solvers_on_two_ranks(self):
        res = bench("--cells", "17", "--ranks", "2", "--steps", "2", "--repeat", "2", "--cfl", "50", "1000", "--out", self.tmp)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        rows = [line.split("|")[1:-1] for line in res.stdout.splitlines() if line.startswith("| 50 ")
                or line.startswith("| 1000 ")]
        self.assertEqual(len(rows), 6)  # gridsim and hypre's two smoothers, at each cfl
        for cfl in ("50", "1000"):
            with open(os.path.join(self.tmp, f"cfl{cfl}.json")) as f:
                report = json.load(f)
            mine = [r for r in rows if r[0].strip() == cfl and "gridsim" in r[1]][0]
            self.assertEqual(float(mine[2]), round(report["cg"]["iterations_per_step"]["mean"], 1))
            self.assertEqual(report["ranks"], 2)
            self.assertEqual(report["cg"]["preconditioner"], "multigrid")
            for r in rows:
                if r[0].strip() == cfl and "hypre" in r[1]:
                    self.assertGreater(float(r[2]), 0)
                    self.assertGreater(float(r[4]), 0)
        self.assertIn("largest difference of the final fields", res.stdout)

    def test_bad_input(self):
        res = bench("--cells", "4")
        self.assertEqual(res.returncode, 2)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        res = bench("--cells", "17", "--gridsim", "/nonexistent")
        self.assertEqual(res.returncode, 2)


if __name__ == "__main__":
    unittest.main()
