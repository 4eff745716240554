"""The multigrid preconditioner (README, "Implicit"): its iterations per step stay nearly flat as
the grid is refined at one dt and as the time step grows (plain CG's grow with both, run
beside it as the contrast), and a rerun on 4 ranks gives the same bits. The answer itself is
held against a dense NumPy solve and hypre by test_implicit_step.py and test_hypre_reference.py.
Needs GRIDSIM and MPIEXEC in the environment."""
import json
import os
import subprocess
import unittest

import h5py
import numpy as np

from deck_case import GRIDSIM, TempDirCase, launch

DECK = ('[problem]\nname = "heat"\nscheme = "implicit"\n[grid]\ncells = {cells}\n'
        '[initial]\nkind = "hotspot"\nradius = 0.2\n[time]\nsteps = 2\ncg_tolerance = 1e-8\n'
        '{step}\n')


class Multigrid(TempDirCase):
    PREFIX = "gridsim_mg_"

    def run_deck(self, cells, step, pre, ranks=1, name="case", extra=()):
        """Max iterations per step and the report of one run; the field file when `extra` asks."""
        path = os.path.join(self.tmp, name + ".toml")
        with open(path, "w") as f:
            f.write(DECK.format(cells=cells, step=step))
        report = os.path.join(self.tmp, name + ".json")
        res = subprocess.run(
            [*launch(ranks), GRIDSIM, "run", path, "--quiet", "--report", report, "--set",
             "parallel.backend=cpu", "--set", f'time.cg_preconditioner="{pre}"', *extra],
            capture_output=True, text=True, timeout=300, check=False)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        with open(report) as f:
            doc = json.load(f)
        return doc["cg"]["iterations_per_step"]["max"], doc

    def test_iterations_flat_under_refinement_at_one_dt(self):
        counts = {}
        for pre in ("multigrid", "none"):
            counts[pre] = [self.run_deck([n, n, n], "dt = 0.01", pre)[0] for n in (17, 33, 65)]
        mg, plain = counts["multigrid"], counts["none"]
        self.assertLessEqual(max(mg), 1.3 * min(mg), counts)
        self.assertGreater(plain[-1], 2.5 * plain[0], counts)  # the contrast: plain CG grows
        self.assertLess(mg[-1], plain[-1] / 5, counts)

    def test_iterations_flat_as_the_time_step_grows(self):
        counts = {}
        for pre in ("multigrid", "none"):
            counts[pre] = [self.run_deck([48, 40, 33], f"cfl = {cfl}", pre)[0]
                           for cfl in (50, 1000)]
        mg, plain = counts["multigrid"], counts["none"]
        self.assertLessEqual(mg[1], 1.5 * mg[0], counts)
        self.assertGreater(plain[1], 1.5 * plain[0], counts)  # plain CG grows

    def test_coarse_levels_gathered_onto_rank_zero(self):
        # 33^3 halves to 17, 9, 5, 3 on one rank; on 8 ranks (blocks of 4 or 5 along one axis)
        # that axis stops at 17 points, a level the ranks would solve in 11 Chebyshev
        # applications, so rank 0 gathers it and halves it on alone. On 2 and 4 ranks the
        # ranks' coarsest level (3x3x5, 3x5x5) takes a few and stays shared.
        one, doc = self.run_deck([33, 33, 33], "cfl = 200", "multigrid", name="gather1")
        self.assertIsNone(doc["cg"]["multigrid"]["gathered_level"])
        self.assertEqual(doc["cg"]["multigrid"]["levels"][-1], [3, 3, 3])
        for ranks in (2, 4, 8):
            its, doc = self.run_deck([33, 33, 33], "cfl = 200", "multigrid", ranks=ranks,
                                     name=f"gather{ranks}")
            mg = doc["cg"]["multigrid"]
            self.assertLessEqual(abs(its - one), 1, (ranks, its, one))
            g = mg["gathered_level"]
            if ranks < 8:
                self.assertIsNone(g, ranks)
                self.assertLessEqual(mg["coarse_degree"], 8)
                continue
            self.assertIsNotNone(g)
            self.assertEqual(mg["levels"][g], mg["levels"][g - 1])  # the same grid, whole
            self.assertEqual(sorted(mg["levels"][g]), [3, 3, 17])
            self.assertEqual(mg["levels"][-1], [3, 3, 3])

    def test_rerun_on_four_ranks_gives_the_same_bits(self):
        fields = []
        for run in range(2):
            out = os.path.join(self.tmp, f"out{run}")
            _, doc = self.run_deck([37, 30, 21], "cfl = 200", "multigrid", ranks=4,
                                   name=f"rerun{run}",
                                   extra=("--set", "output.write_final=true", "--set",
                                          f'output.dir="{out}"'))
            self.assertGreaterEqual(len(doc["cg"]["multigrid"]["levels"]), 3)
            with h5py.File(os.path.join(out, "snapshot_final.h5")) as f:
                fields.append(np.array(f["fields/u"]))
        self.assertEqual(fields[0].tobytes(), fields[1].tobytes())


if __name__ == "__main__":
    unittest.main()
