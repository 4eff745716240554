"""A run on fewer ranks than were launched (parallel.ranks_used, docs/running.md, "Ranks used"):
the ranks that run write the files and the report of a run on that many ranks, bit for bit; the
ranks that wait end with the run's exit code, whether it ends normally, fails, stops on a signal
or refuses its input. Needs GRIDSIM and MPIEXEC in the environment."""
import json
import os
import signal
import subprocess
import time
import unittest

import h5py
import numpy as np

from deck_case import GRIDSIM, DeckCase, launch


class RanksUsed(DeckCase):
    DECK = ("[problem]\nname = \"jacobi\"\n[grid]\ncells = [48, 40]\n[time]\nsteps = 30\n"
            "norm_every = 1\n[parallel]\nbackend = \"cpu\"\n[output]\nwrite_final = true\n")
    PREFIX = "gridsim_ranks_used_"

    def command(self, ranks, name, *args):
        return launch(ranks) + [GRIDSIM, "run", self.deck, "--set",
                                f'output.dir="{self.tmp}/{name}"', "--report",
                                f"{self.tmp}/{name}.json", *args]

    def run_gridsim(self, ranks, name, *args, code=0):
        start = time.monotonic()
        res = subprocess.run(self.command(ranks, name, *args), capture_output=True, text=True,
                             check=False, timeout=120)
        self.assertEqual(res.returncode, code, res.stdout + res.stderr)
        return res, time.monotonic() - start

    def fields_and_report(self, name):
        with h5py.File(f"{self.tmp}/{name}/snapshot_final.h5", "r") as f:
            u = np.array(f["/fields/u"])
        with open(f"{self.tmp}/{name}.json") as f:
            return u, json.load(f)

    def test_waiting_ranks_leave_the_bits_of_the_ranks_that_ran(self):
        for used, launched in ((1, 3), (2, 3)):
            self.run_gridsim(used, f"alone{used}")
            res, _ = self.run_gridsim(launched, f"of{used}",
                                      "--set", f"parallel.ranks_used={used}")
            self.assertIn(f"ranks           {used} of {launched} on process grid", res.stdout)
            self.assertIn(f"{used} rank(s) of {launched} launched on process grid", res.stdout)
            self.assertNotIn("wait idle", res.stdout)  # the deck chose the count
            u_alone, alone = self.fields_and_report(f"alone{used}")
            u_part, part = self.fields_and_report(f"of{used}")
            self.assertTrue(np.array_equal(u_alone, u_part))
            self.assertEqual(part["ranks"], used)
            self.assertEqual(part["ranks_launched"], launched)
            self.assertEqual(part["process_grid"], alone["process_grid"])
            self.assertEqual(part["residual_history"], alone["residual_history"])

    def test_a_failure_of_the_running_ranks_ends_the_waiting_ones(self):
        # A blow-up on the running ranks: exit 1 on every rank with one error line, at once.
        res, seconds = self.run_gridsim(3, "blow", "--set", "parallel.ranks_used=2",
                                        "--set", 'problem.name="heat"', "--set",
                                        "output.max_abs=0.5", "--set", "output.check_every=1",
                                        code=1)
        self.assertEqual(res.stderr.count("gridsim: error: step 1: the solution blew up"), 1)
        self.assertLess(seconds, 30)
        self.assertFalse(os.path.exists(f"{self.tmp}/blow.json"))

    def test_a_signal_stops_the_running_ranks_and_the_waiting_ones(self):
        proc = subprocess.Popen(self.command(3, "sig", "--set", "parallel.ranks_used=2",
                                             "--set", "grid.cells=[400,400]", "--set",
                                             "time.steps=100000000", "--set",
                                             "output.progress_every=100"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in proc.stdout:
            if line.startswith("step "):
                break
        proc.send_signal(signal.SIGUSR1)  # mpirun forwards it to every rank, waiting or not
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 3, out + err)
        with h5py.File(f"{self.tmp}/sig/checkpoint.h5", "r") as f:
            self.assertEqual(f["/fields/u"].shape[-2:], (400, 400))

    def test_check_says_how_many_ranks_a_run_on_gpus_uses(self):
        for cells, used in (("[2048, 2048]", 1), ("[4096, 4096]", 4)):
            res = subprocess.run([GRIDSIM, "check", self.deck, "--set", f"grid.cells={cells}",
                                  "--ranks", "4", "--json"], capture_output=True, text=True,
                                 check=True, timeout=60)
            doc = json.loads(res.stdout)["process_grid_for_ranks"]
            self.assertEqual(doc["ranks_used_on_gpus"], used)


if __name__ == "__main__":
    unittest.main()
