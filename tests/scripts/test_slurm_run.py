"""scripts/slurm/run.sbatch under stand-ins for srun (mpirun on 2 ranks) and scontrol (records
what it was asked): a run stopped by its STOP file exits 3 and is requeued; the requeued part
continues from the checkpoint and completes, reaching the same field as one uninterrupted run.
Needs GRIDSIM and MPIEXEC in the environment."""
import os
import shutil
import stat
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
GRIDSIM = os.environ["GRIDSIM"]
MPIEXEC = os.environ.get("MPIEXEC", "mpirun")


def write_exe(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)


class SlurmRun(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gridsim_sbatch_")
        bin_dir = os.path.join(self.tmp, "bin")
        os.makedirs(bin_dir)
        write_exe(os.path.join(bin_dir, "srun"),
                  "#!/bin/sh\nwhile [ \"${1#--}\" != \"$1\" ]; do shift; done\n"
                  f"exec {MPIEXEC} -np 2 --oversubscribe \"$@\"\n")
        self.requeues = os.path.join(self.tmp, "requeues")
        write_exe(os.path.join(bin_dir, "scontrol"),
                  f"#!/bin/sh\necho \"$@\" >> {self.requeues}\n")
        self.env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                        GRIDSIM=GRIDSIM, DECK=os.path.join(ROOT, "inputs", "default.toml"),
                        OUT=os.path.join(self.tmp, "run"), SLURM_JOB_ID="4242",
                        EXTRA="--quiet --set time.steps=120 --set output.write_final=true")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def part(self, n):
        env = dict(self.env, SLURM_RESTART_COUNT=str(n))
        return subprocess.run(["bash", os.path.join(ROOT, "scripts", "slurm", "run.sbatch")],
                              env=env, capture_output=True, text=True, timeout=300, check=False)

    def test_stop_requeue_and_continue(self):
        os.makedirs(self.env["OUT"])
        open(os.path.join(self.env["OUT"], "STOP"), "w").close()
        first = self.part(0)
        self.assertEqual(first.returncode, 0, first.stdout + first.stderr)
        self.assertIn("stopped with a checkpoint; requeueing", first.stdout)
        with open(self.requeues) as f:
            self.assertEqual(f.read().split(), ["requeue", "4242"])
        second = self.part(1)
        self.assertEqual(second.returncode, 0, second.stdout + second.stderr)
        self.assertIn("--restart", second.stdout)
        self.assertIn("the run is complete (part 1)", second.stdout)
        with open(self.requeues) as f:
            self.assertEqual(len(f.read().splitlines()), 1)  # not requeued again
        whole = os.path.join(self.tmp, "whole")
        res = subprocess.run([MPIEXEC, "-np", "1", GRIDSIM, "run", self.env["DECK"], "--quiet",
                              "--set", "time.steps=120", "--set", "output.write_final=true",
                              "--set", f'output.dir="{whole}"'], capture_output=True, text=True,
                             timeout=300, check=False)
        self.assertEqual(res.returncode, 0, res.stderr)
        with h5py.File(os.path.join(self.env["OUT"], "snapshot_final.h5")) as a, \
                h5py.File(os.path.join(whole, "snapshot_final.h5")) as b:
            np.testing.assert_array_equal(a["/fields/u"][...], b["/fields/u"][...])

    def test_a_failure_is_not_requeued(self):
        env_extra = self.env["EXTRA"] + " --set grid.cells=[2,2,2]"
        self.env["EXTRA"] = env_extra
        res = self.part(0)
        self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
        self.assertIn("gridsim failed with exit code 2", res.stdout)
        self.assertFalse(os.path.exists(self.requeues))


if __name__ == "__main__":
    unittest.main()
