"""The header `gridsim run` prints once on rank 0 before the first step (docs/output.md):
every line a batch log needs, with values checked against what the deck and rank count imply;
none with --quiet. Needs GRIDSIM and MPIEXEC in the environment."""
import json
import os
import re
import subprocess
import unittest

from deck_case import GRIDSIM, MPIEXEC, DeckCase


class RunHeader(DeckCase):
    DECK = ("[grid]\ncells = [40, 24, 18]\n[time]\nsteps = 4\n[parallel]\nbackend = \"cpu\"\n"
            "process_grid = [2, 1, 1]\n[output]\nwrite_final = true\ncheckpoint_every = 2\n")
    PREFIX = "gridsim_header_"

    def run_gridsim(self, *args):
        cmd = [MPIEXEC, "-np", "2", "--oversubscribe", GRIDSIM, "run", self.deck,
               "--set", f'output.dir="{self.tmp}/out"', *args]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        return res.stdout

    def test_header_names_the_run(self):
        out = self.run_gridsim()
        head = out[:out.index("step 4/4")]
        self.assertEqual(out.count("memory per rank"), 1)  # rank 0 only, once
        self.assertRegex(head, r"^gridsim \S+: heat 3D, double\n")
        self.assertIn("grid            40x24x18 points, length 1 x 1 x 1, h 0.02564 x 0.04348 x "
                      "0.05882", head)
        self.assertIn("x dirichlet, y dirichlet, z dirichlet; initial sine", head)
        self.assertIn("ranks           2 on process grid 2x1x1 (parallel.process_grid)", head)
        self.assertIn("backend         cpu on 2 x cpu", head)
        self.assertRegex(head, r"transport       staged, overlap auto")
        self.assertIn("kernel          ", head)
        # docs/architecture.md, "Field layout": a 20x24x18 block, one halo layer per side, rows
        # of lead + 20 + 2 points rounded up to a cache line (8 doubles on the CPU, lead 7),
        # one cache line of slack; two fields.
        row = -(-(7 + 20 + 2) // 8) * 8
        expect = 2 * 8 * (row * 26 * 20 + 8) / 2**20
        mib = re.search(r"memory per rank (\S+) MiB", head).group(1)
        self.assertEqual(mib, f"{expect:.3g}")
        # The checkpoints during the run are staged through one host buffer of one field.
        self.assertIn(f"output staging  one buffer of {expect / 2:.3g} MiB per rank", head)
        self.assertIn(f"checkpoint every 2 to {self.tmp}/out/checkpoint.h5", head)
        self.assertIn(f"final snapshot, checkpoint every 2", head)

    def test_jacobi_splits_rows_at_every_residual_cadence(self):
        # The jacobi benchmark on 2 ranks: the cost model splits rows (an x split's single face
        # is packed and unpacked, dearer than the y split's second face), whatever the residual
        # cadence, so the residuals' bits do not depend on it; the deck's own grid still wins.
        # Both grids sum a residual every sweep inside passes.
        jacobi = ("--set", 'problem.name="jacobi"', "--set", 'boundary.kind="benchmark"',
                  "--set", "grid.cells=[64,48]", "--set", "time.steps=6",
                  "--set", "parallel.time_block=3")
        for every in (1, 10):
            out = self.run_gridsim(*jacobi, "--set", "parallel.process_grid=[0,0]",
                                   "--set", f"time.norm_every={every}")
            self.assertIn("ranks           2 on process grid 1x2 (lowest modelled cost per sweep)",
                          out)
            self.assertEqual("every sweep's residual summed inside the passes" in out, every == 1)
            out = self.run_gridsim(*jacobi, "--set", "parallel.process_grid=[2,1]",
                                   "--set", f"time.norm_every={every}")
            self.assertIn("ranks           2 on process grid 2x1 (parallel.process_grid)", out)
            self.assertNotIn("note ", out)
            self.assertEqual("every sweep's residual summed inside the passes" in out, every == 1)

    def test_check_gives_the_memory_per_rank(self):
        # No process grid in the deck: gridsim chooses one for 3 ranks; the largest block takes
        # the remainder points (ceil), one halo layer per side, two double fields.
        deck = os.path.join(self.tmp, "free.toml")
        with open(deck, "w") as f:
            f.write("[grid]\ncells = [40, 25, 19]\n")
        res = subprocess.run([GRIDSIM, "check", deck, "--ranks", "3", "--json"],
                             capture_output=True, text=True, check=True, timeout=60)
        doc = json.loads(res.stdout)
        grid = doc["process_grid_for_ranks"]["grid"]
        block = [-(-n // p) for n, p in zip((40, 25, 19), grid)]
        expect = 2 * 8 * (block[0] + 2) * (block[1] + 2) * (block[2] + 2)
        self.assertEqual(doc["field_bytes_per_rank"], {"ranks": 3, "bytes": expect})
        text = subprocess.run([GRIDSIM, "check", deck, "--ranks", "3"], capture_output=True,
                              text=True, check=True, timeout=60).stdout
        self.assertIn(f"# memory per rank at 3 rank(s): {expect / 2**30:.3g} GiB (2 fields", text)
        # The implicit scheme holds CG's four work vectors as well: six fields.
        doc = json.loads(subprocess.run([GRIDSIM, "check", deck, "--ranks", "3", "--json", "--set",
                                         'problem.scheme="implicit"'], capture_output=True,
                                        text=True, check=True, timeout=60).stdout)
        self.assertEqual(doc["field_bytes_per_rank"]["bytes"], 3 * expect)

    def test_verbose_prints_the_placement_map_and_the_report_holds_it(self):
        report = os.path.join(self.tmp, "r.json")
        out = self.run_gridsim("--verbose", "--report", report)
        self.assertEqual(len(re.findall(r"^    rank [01] +host ", out, re.M)), 2, out)
        self.assertNotIn("    rank 0    host", self.run_gridsim())  # only with --verbose
        with open(report) as f:
            placement = json.load(f)["placement"]
        self.assertEqual([p["rank"] for p in placement], [0, 1])
        for p in placement:
            # A CPU rank's NUMA node is always known: memory bound there, and the pages of a
            # buffer allocated afterwards are there (read back from the OS, not from the decision).
            self.assertNotEqual(p["numa_node"], "unknown", p)
            self.assertEqual(p["mem_nodes"], p["numa_node"], p)
            self.assertEqual(p["host_pages_numa"], p["numa_node"], p)
            self.assertIn("bound to NUMA node", p["bind_note"])
            self.assertNotIn("gpu", p)

    def test_the_report_says_how_phases_were_timed(self):
        # The CPU times every pass by default; parallel.phase_every = 3 times passes 2 and 5 of 6
        # (every 3rd from the second) and scales them to all six. Graphs are a CUDA matter.
        for every, timed in ((0, 6), (3, 2)):
            report = os.path.join(self.tmp, f"r{every}.json")
            self.run_gridsim("--quiet", "--report", report, "--set", "time.steps=6",
                             "--set", f"parallel.phase_every={every}")
            with open(report) as f:
                d = json.load(f)
            self.assertEqual(d["phase_timing"], {"every": max(every, 1), "passes": 6,
                                                 "timed_passes": timed})
            self.assertFalse(d["graphs"])
            self.assertGreater(d["phases"]["interior"]["mean"], 0.0)

    def test_restart_is_named_and_quiet_prints_none(self):
        self.run_gridsim("--quiet")
        out = self.run_gridsim("--restart", f"{self.tmp}/out/checkpoint.h5",
                               "--set", "time.steps=6")
        self.assertIn(f"restart         from {self.tmp}/out/checkpoint.h5 at step 4", out)
        quiet = self.run_gridsim("--quiet")
        self.assertNotIn("memory per rank", quiet)
        self.assertNotIn("ranks           ", quiet)


if __name__ == "__main__":
    unittest.main()
