"""Temporal blocking (parallel.time_block) through the command line: a run stopped inside a time
block (checkpoint), restarted with another block size, ends bitwise where an unblocked run ends
(/fields of the final snapshots); progress lines, checkpoints and the blow-up check land on
their steps however the blocks fall; the header and the report name the block and overlap
"auto"'s trial of the exchanging pass. Needs GRIDSIM and MPIEXEC in the environment."""
import json
import os
import re
import subprocess
import unittest

import h5py
import numpy as np

from deck_case import GRIDSIM, DeckCase, launch


class TimeBlockRuns(DeckCase):
    DECK = ("[grid]\ncells = [26, 22, 19]\n[initial]\nkind = \"hotspot\"\nradius = 0.3\n"
            "[time]\nsteps = 47\n[parallel]\nbackend = \"cpu\"\n[output]\nwrite_final = true\n")
    PREFIX = "gridsim_tb_"

    def run_ok(self, ranks, name, *args):
        out = os.path.join(self.tmp, name)
        report = out + ".json"
        res = subprocess.run([*launch(ranks), GRIDSIM, "run", self.deck, "--set",
                              f'output.dir="{out}"', "--report", report, *args],
                             capture_output=True, text=True, timeout=300, check=False)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        with open(report) as f:
            return out, json.load(f), res.stdout

    @staticmethod
    def fields(path):
        with h5py.File(path, "r") as f:
            return np.array(f["fields/u"])

    def test_restart_inside_a_block_with_another_block_size(self):
        for ranks in (1, 2, 4):
            with self.subTest(ranks=ranks):
                plain, _, _ = self.run_ok(ranks, f"plain{ranks}", "--quiet",
                                          "--set", "parallel.time_block=1")
                # Checkpoints at 17 and 34: neither a multiple of 3 nor of 5.
                first, rep, _ = self.run_ok(ranks, f"first{ranks}", "--quiet",
                                            "--set", "parallel.time_block=3",
                                            "--set", "output.checkpoint_every=17",
                                            "--set", "time.steps=40")
                self.assertEqual(rep["steps"], 40)
                ckpt = os.path.join(first, "checkpoint.h5")
                with h5py.File(ckpt, "r") as f:
                    self.assertEqual(int(f.attrs["step"]), 34)
                second, rep, _ = self.run_ok(ranks, f"second{ranks}", "--quiet",
                                             "--set", "parallel.time_block=5",
                                             "--restart", ckpt)
                self.assertEqual((rep["start_step"], rep["steps"], rep["time_block"]), (34, 47, 5))
                a = self.fields(os.path.join(plain, "snapshot_final.h5"))
                b = self.fields(os.path.join(second, "snapshot_final.h5"))
                self.assertEqual(a.shape, b.shape)
                self.assertTrue(np.array_equal(a, b), "restarted time-blocked run differs")

    def test_host_steps_land_on_their_steps(self):
        _, rep, out = self.run_ok(2, "progress", "--set", "parallel.time_block=4",
                                  "--set", "output.progress_every=7",
                                  "--set", "output.snapshot_every=9")
        steps = [int(m) for m in re.findall(r"^step (\d+)/47", out, re.M)]
        self.assertEqual(steps, [7, 14, 21, 28, 35, 42, 47])
        self.assertRegex(out, r"time blocking +4 sweeps per halo exchange \(4-deep halos")
        snaps = sorted(n for n in os.listdir(os.path.join(self.tmp, "progress"))
                       if re.match(r"snapshot_\d+\.h5$", n))
        self.assertEqual(snaps, [f"snapshot_{s:08d}.h5" for s in (9, 18, 27, 36, 45)])
        self.assertEqual(rep["time_block"], 4)
        # The CPU backend sweeps one level per pass over memory.
        self.assertAlmostEqual(rep["sweeps_per_pass"], 1.0)
        self.assertAlmostEqual(rep["modelled_dram_bytes_per_update"], 16.0)
        # Plain heat reads no coefficient field: its floor is the copy's traffic.
        self.assertEqual(rep["coefficient_fields"], 0)
        self.assertEqual(rep["floor_ratio"], rep["bandwidth_ratio"])
        self.assertNotRegex(out, r"\n  floor ")

    def test_exchange_trial_is_reported_and_changes_no_bits(self):
        # Two ranks with time blocks: overlap "auto" times the exchanging pass split and fused at
        # start-up; whichever it takes, and "fused" or true forced, the final field is the same.
        finals = {}
        for overlap in ('"auto"', '"fused"', "true"):
            out, rep, text = self.run_ok(2, f"trial_{overlap.strip(chr(34))}",
                                         "--set", "parallel.time_block=4",
                                         "--set", f"parallel.overlap={overlap}")
            finals[overlap] = self.fields(os.path.join(out, "snapshot_final.h5"))
            trial = rep["exchange_trial"]
            if overlap != '"auto"':
                self.assertIsNone(trial)
                self.assertNotIn("exchange trial", text)
                continue
            split, fused = trial["split_seconds_per_sweep"], trial["fused_seconds_per_sweep"]
            self.assertGreater(split, 0.0)
            self.assertGreater(fused, 0.0)
            self.assertEqual(trial["taken"], "fused" if fused < split else "split")
            # A time_block the deck fixes is timed at its own depth only.
            self.assertEqual([d["time_block"] for d in trial["depths"]], [4])
            m = re.search(r"^  exchange trial  split pass ([0-9.]+) us, one launch then the halos "
                          r"([0-9.]+) us per sweep at start-up \(slowest rank\): (split|one launch) "
                          r"taken$", text, re.M)
            self.assertIsNotNone(m, text)
            self.assertAlmostEqual(float(m.group(1)), split * 1e6, delta=0.051)
            self.assertAlmostEqual(float(m.group(2)), fused * 1e6, delta=0.051)
            self.assertEqual(m.group(3), "one launch" if trial["taken"] == "fused" else "split")
        for overlap in ('"fused"', "true"):
            self.assertTrue(np.array_equal(finals['"auto"'], finals[overlap]), overlap)

    def test_residual_every_sweep_in_passes_on_one_rank(self):
        jacobi = ("--set", 'problem.name="jacobi"', "--set", "time.norm_every=1")
        plain, one, _ = self.run_ok(1, "res_plain", "--quiet", *jacobi,
                                    "--set", "parallel.time_block=1")
        blocked, rep, out = self.run_ok(1, "res_blocked", *jacobi,
                                        "--set", "parallel.time_block=4",
                                        "--set", "output.progress_every=7")
        self.assertRegex(out, r"every sweep's residual summed inside the passes")
        self.assertTrue(rep["sums_in_passes"])
        self.assertFalse(one["sums_in_passes"])
        self.assertLess(rep["phase_timing"]["passes"], one["phase_timing"]["passes"])
        # The CPU backend runs a pass's levels one by one: a pass over memory per sweep.
        self.assertAlmostEqual(rep["sweeps_per_pass"], 1.0)
        self.assertEqual(rep["residual_history"], one["residual_history"])
        self.assertEqual(len(rep["residual_history"]), 47)
        a = self.fields(os.path.join(plain, "snapshot_final.h5"))
        b = self.fields(os.path.join(blocked, "snapshot_final.h5"))
        self.assertTrue(np.array_equal(a, b), "summing passes changed the field")
        # A checkpoint inside a block (17), restarted with another block size.
        first, _, _ = self.run_ok(1, "res_first", "--quiet", *jacobi,
                                  "--set", "parallel.time_block=5",
                                  "--set", "output.checkpoint_every=17", "--set", "time.steps=20")
        second, rep, _ = self.run_ok(1, "res_second", "--quiet", *jacobi,
                                     "--set", "parallel.time_block=3",
                                     "--restart", os.path.join(first, "checkpoint.h5"))
        self.assertEqual((rep["start_step"], rep["steps"]), (17, 47))
        self.assertEqual(rep["residual_history"], one["residual_history"])
        c = self.fields(os.path.join(second, "snapshot_final.h5"))
        self.assertTrue(np.array_equal(a, c), "the restarted summing passes changed the field")

    def test_too_thin_for_the_block_is_one_line_and_exit_2(self):
        res = subprocess.run([*launch(4), GRIDSIM, "run", self.deck, "--quiet",
                              "--set", "parallel.process_grid=[4,1,1]",
                              "--set", "parallel.time_block=8",
                              "--set", f'output.dir="{self.tmp}/thin"'],
                             capture_output=True, text=True, timeout=300, check=False)
        self.assertEqual(res.returncode, 2, res.stderr)
        lines = [l for l in res.stderr.splitlines() if l.startswith("gridsim: error:")]
        self.assertEqual(len(lines), 1, res.stderr)
        self.assertIn("parallel.time_block", lines[0])
        self.assertIn("6 per rank is fewer than the halo width 8", lines[0])
        self.assertFalse(os.path.exists(f"{self.tmp}/thin/snapshot_final.h5"))


if __name__ == "__main__":
    unittest.main()
