"""A scaling study writes only inside its own directory: started where `out/` holds another
problem's snapshot (the README's example run left it there), the study succeeds, leaves that
file as it was, and creates nothing outside the study; two studies of different decks in one
working directory both succeed. Needs GRIDSIM (the executable) and MPIEXEC."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "scaling.py")
INPUTS = os.path.join(ROOT, "inputs")
GRIDSIM = os.environ["GRIDSIM"]
MPIEXEC = os.environ.get("MPIEXEC", "mpirun")
LAUNCH = MPIEXEC + " -np {n} --oversubscribe"


def tree(top, skip=()):
    """{relative path: sha256} of every file below top, leaving out the directories in skip."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in skip]
        for name in filenames:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, top)] = hashlib.sha256(f.read()).hexdigest()
    return out


class StudyOutputs(unittest.TestCase):
    def setUp(self):
        self.cwd = tempfile.mkdtemp(prefix="gridsim_study_cwd_")
        self.addCleanup(shutil.rmtree, self.cwd, ignore_errors=True)

    def run_in_cwd(self, *cmd):
        return subprocess.run(list(cmd), cwd=self.cwd, capture_output=True, text=True, check=False)

    def study(self, deck, out, *sets):
        run = self.run_in_cwd(sys.executable, SCRIPT, "run", "strong", "--deck", deck, "--ranks", "1", "2",
                              "--launcher", LAUNCH, "--out", out, "--gridsim", GRIDSIM, *sets)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        return json.load(open(os.path.join(self.cwd, out, "study.json")))

    def test_a_study_leaves_an_earlier_runs_output_alone(self):
        # What the README's example leaves behind: jacobi's final snapshot in ./out/.
        earlier = self.run_in_cwd(GRIDSIM, "run", os.path.join(INPUTS, "jacobi2d_small.toml"), "--quiet",
                                  "--set", 'output.dir="out"', "--set", "output.write_final=true",
                                  "--set", "time.steps=20")
        self.assertEqual(earlier.returncode, 0, earlier.stderr)
        self.assertTrue(os.path.isfile(os.path.join(self.cwd, "out", "snapshot_final.h5")))
        before = tree(self.cwd)

        # scaling_cpu.toml writes into ./out by default: a heat problem, which gridsim refuses to
        # let replace jacobi's file. The study puts each run's output inside the study instead.
        tiny = ["--set", "grid.cells=[20,16,12]", "--set", "time.steps=4", "--set", "output.write_final=true",
                "--set", "output.checkpoint_every=2"]
        study = self.study(os.path.join(INPUTS, "scaling_cpu.toml"), "heat_study", *tiny)
        after = tree(self.cwd, skip=(os.path.join(self.cwd, "heat_study"),))
        self.assertEqual(after, before, "the study wrote or changed files outside its directory")
        # Each run's final snapshot and checkpoint are in its own directory inside the study.
        for run in study["runs"]:
            name = run["report"][:-len(".json")]
            run_dir = os.path.join(self.cwd, "heat_study", "runs", name)
            self.assertTrue(os.path.isfile(os.path.join(run_dir, "snapshot_final.h5")), name)
            self.assertTrue(os.path.isfile(os.path.join(run_dir, "checkpoint.h5")), name)
        self.assertIn("runs/<kind>_n<N>_r<repeat>/", study["outputs"])

        # A second study, another deck (jacobi again, whose own deck writes to ./out), in the same
        # working directory: it succeeds too, and the report says where the files went.
        self.study(os.path.join(INPUTS, "jacobi2d_small.toml"), "jacobi_study", "--set", "time.steps=20",
                   "--set", "output.write_final=true")
        self.assertEqual(tree(self.cwd, skip=(os.path.join(self.cwd, "heat_study"),
                                              os.path.join(self.cwd, "jacobi_study"))), before)
        report = self.run_in_cwd(sys.executable, SCRIPT, "report", "jacobi_study")
        self.assertEqual(report.returncode, 0, report.stderr)
        with open(os.path.join(self.cwd, "jacobi_study", "report.md")) as f:
            self.assertIn("into its own directory, runs/<kind>_n<N>_r<repeat>/", f.read())

    def test_an_explicit_output_dir_is_the_users_choice(self):
        study = self.study(os.path.join(INPUTS, "scaling_cpu.toml"), "study", "--set", "grid.cells=[12,12,12]",
                           "--set", "time.steps=2", "--set", "output.write_final=true",
                           "--set", 'output.dir="mine"')
        self.assertTrue(os.path.isfile(os.path.join(self.cwd, "mine", "snapshot_final.h5")))
        self.assertFalse(os.path.exists(os.path.join(self.cwd, "study", "runs", "strong_n1_r0")))
        self.assertIn("given with --set output.dir", study["outputs"])


if __name__ == "__main__":
    unittest.main()
