"""The batch templates in scripts/slurm/ under a real Slurm (a one-node cluster started here,
slurm_cluster.py): run.sbatch runs to completion; a run.sbatch job signalled as its wall time
ends writes a checkpoint, exits 3, is requeued by the template and its requeued part continues
to the same final field, bit for bit, as an uninterrupted run; strong.sbatch and weak.sbatch run
a small CPU study on 1, 2 and 4 ranks whose report succeeds; `srun -n 4 gridsim run` works;
the ReFrame checks (scripts/reframe/) pass through it (sbatch, srun, squeue).
The jobs override only what a one-node CPU test needs on sbatch's command line (tasks, CPUs
per task, output file), as a site would. Skips, saying why, where Slurm is not installed.
Needs GRIDSIM in the environment."""
import glob
import json
import os
import re
import shutil
import tempfile
import time
import unittest

import h5py
import numpy as np

import reframe_env
from slurm_cluster import OneNodeSlurm, missing_programs
from test_reframe_local import check_reports

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
GRIDSIM = os.environ["GRIDSIM"]
DECK = os.path.join(ROOT, "inputs", "default.toml")


def read_json(path):
    with open(path) as f:
        return json.load(f)


def field(path):
    with h5py.File(path, "r") as f:
        return np.array(f["/fields/u"]), int(np.asarray(f.attrs["step"]).reshape(-1)[0])


class SlurmJobs(unittest.TestCase):
    """A Slurm cluster for the class's tests (one node, or the fake nodes of NODES) and the
    helpers that submit and follow their jobs."""
    NODES = None

    @classmethod
    def setUpClass(cls):
        missing = missing_programs()
        if missing:
            raise unittest.SkipTest("Slurm is not installed here (missing " + ", ".join(missing)
                                    + "; Debian: apt-get install slurm-wlm munge)")
        cls.slurm = OneNodeSlurm(cls.NODES).start()
        cls.tmp = tempfile.mkdtemp(prefix="gridsim_slurm_jobs_")

    @classmethod
    def tearDownClass(cls):
        cls.slurm.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def sbatch(self, template, name, env, *options):
        """Submits scripts/slurm/TEMPLATE from the repository root and returns the job id."""
        out = os.path.join(self.tmp, name + ".out")
        res = self.slurm.run("sbatch", "--parsable", f"--output={out}", f"--chdir={ROOT}", *options,
                             os.path.join(ROOT, "scripts", "slurm", template),
                             env={"GRIDSIM": GRIDSIM, **env})
        self.assertEqual(res.returncode, 0, res.stderr + (self.text(out) if os.path.exists(out) else ""))
        return res.stdout.strip().splitlines()[0].split(";")[0], out

    def job_state(self, job):
        res = self.slurm.run("scontrol", "show", "job", job)
        m = re.search(r"JobState=(\S+)", res.stdout)
        restarts = re.search(r"Restarts=(\d+)", res.stdout)
        return (m.group(1) if m else "UNKNOWN"), int(restarts.group(1)) if restarts else 0

    def wait_for(self, job, done, timeout=400):
        """Polls until done(state, restarts) or the timeout; returns the last (state, restarts)."""
        deadline = time.time() + timeout
        state = ("UNKNOWN", 0)
        while time.time() < deadline:
            state = self.job_state(job)
            if done(*state):
                return state
            time.sleep(0.5)
        self.fail(f"job {job} still {state} after {timeout} s\n" + self.slurm.logs())

    @staticmethod
    def text(path):
        with open(path) as f:
            return f.read()


class SlurmTemplates(SlurmJobs):

    def test_run_sbatch_completes(self):
        # sbatch --wait returns when the job has ended, with its exit code.
        out = os.path.join(self.tmp, "run_once")
        job, log = self.sbatch("run.sbatch", "run_once", {
            "DECK": DECK, "OUT": out,
            "EXTRA": "--quiet --set time.steps=60 --set output.write_final=true"},
            "--wait", "--ntasks-per-node=2", "--cpus-per-task=1")
        self.assertEqual(self.job_state(job)[0], "COMPLETED", self.text(log))
        self.assertIn("the run is complete (part 0)", self.text(log))
        u, step = field(os.path.join(out, "snapshot_final.h5"))
        self.assertEqual(step, 60)
        self.assertEqual(read_json(os.path.join(out, "report-0.json"))["ranks"], 2)

    def test_wall_time_signal_checkpoint_requeue_and_continue(self):
        steps = 20000
        out = os.path.join(self.tmp, "requeued")
        job, log = self.sbatch("run.sbatch", "requeued", {
            "DECK": DECK, "OUT": out,
            "EXTRA": f"--set time.steps={steps} --set output.progress_every=50 --set output.write_final=true"},
            "--ntasks-per-node=2", "--cpus-per-task=1")
        # Once the steps are under way, what the template's --signal=USR1@120 does near the limit:
        # USR1 to the job's tasks.
        deadline = time.time() + 120
        while time.time() < deadline and not (os.path.exists(log) and re.search(r"^step ", self.text(log), re.M)):
            time.sleep(0.2)
        res = self.slurm.run("scancel", "--signal=USR1", job)
        self.assertEqual(res.returncode, 0, res.stderr)
        state, restarts = self.wait_for(job, lambda s, r: r >= 1 and s in ("COMPLETED", "FAILED", "CANCELLED"))
        text = self.text(log)
        self.assertEqual(state, "COMPLETED", text)
        self.assertEqual(restarts, 1, text)
        self.assertIn("stopped with a checkpoint; requeueing to continue", text)
        stopped = int(re.search(r"stopped at step (\d+)", text).group(1))
        self.assertLess(stopped, steps)
        self.assertIn("the run is complete (part 1)", text)
        self.assertIn(f"--restart {out}/checkpoint.h5", text)

        # The same run without a stop, as one srun job step: the same final field, bitwise.
        whole = os.path.join(self.tmp, "whole")
        res = self.slurm.run("srun", "-n", "2", GRIDSIM, "run", DECK, "--quiet", "--set", f"time.steps={steps}",
                             "--set", "output.write_final=true", "--set", f'output.dir="{whole}"')
        self.assertEqual(res.returncode, 0, res.stderr)
        a, step_a = field(os.path.join(out, "snapshot_final.h5"))
        b, step_b = field(os.path.join(whole, "snapshot_final.h5"))
        self.assertEqual((step_a, step_b), (steps, steps))
        self.assertEqual(a.tobytes(), b.tobytes())

    def study(self, kind, extra_env):
        out = os.path.join(self.tmp, kind)
        job, log = self.sbatch(f"{kind}.sbatch", kind, {
            "DECK": os.path.join(ROOT, "inputs", "scaling_cpu.toml"), "OUT": out, "RANKS": "1 2 4",
            "REPEAT": "1", "EXPECT_BACKEND": "cpu", **extra_env},
            "--nodes=1", "--ntasks-per-node=4", "--cpus-per-task=1", "--gpus-per-node=4")
        state, _ = self.wait_for(job, lambda s, r: s in ("COMPLETED", "FAILED", "CANCELLED"))
        text = self.text(log)
        self.assertEqual(state, "COMPLETED", text)
        self.assertEqual(len(glob.glob(os.path.join(out, "runs", "*.json"))), 3, text)
        report = self.text(os.path.join(out, "report.md"))
        self.assertIn("| 4 |", report)
        self.assertIn("Trusting", text)  # scaling.py model ran after the report
        return out

    def test_strong_template_runs_a_cpu_study(self):
        self.study("strong", {"EXTRA": "--set grid.cells=[24,20,16] --set time.steps=8"})

    def test_weak_template_runs_a_cpu_study(self):
        out = self.study("weak", {"PER_RANK_CELLS": "12 12 12", "EXTRA": "--set time.steps=8"})
        cells = [read_json(p)["config"]["grid"]["cells"] for p in sorted(glob.glob(out + "/runs/*.json"))]
        self.assertEqual(len({tuple(c) for c in cells}), 3)  # the problem grew with N

    def test_reframe_checks_run_through_slurm(self):
        # scripts/reframe/settings.py's `slurm` system: sbatch, srun, squeue.
        try:
            reframe_env.reframe()
        except reframe_env.Unavailable as err:
            self.skipTest(str(err))
        prefix = os.path.join(self.tmp, "reframe")
        os.makedirs(prefix)
        res = reframe_env.run_checks("slurm", prefix, {**self.slurm.env, "GRIDSIM": GRIDSIM})
        out = res.stdout + res.stderr
        self.assertEqual(res.returncode, 0, out + self.slurm.logs())
        self.assertIn("Ran 5/5 test case(s) from 5 check(s) (0 failure(s)", out)
        self.assertIn("@slurm:default", out)
        check_reports(self, prefix, out)

    def test_srun_starts_four_ranks(self):
        res = self.slurm.run("srun", "-n", "4", GRIDSIM, "run", DECK, "--quiet", "--set", "time.steps=5",
                             "--set", f'output.dir="{self.tmp}/srun4"')
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("4 rank(s) on process grid", res.stdout)


if __name__ == "__main__":
    unittest.main()
