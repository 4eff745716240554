"""hypre as an independent reference for the implicit heat step: tests/hypre/hypre_step (hypre's
Struct PCG preconditioned by PFMG, to a relative residual of 1e-12; gridsim does not link hypre)
takes the same backward-Euler steps as the cases of test_implicit_step.py, and gridsim's steps
with every preconditioner (none, jacobi, chebyshev, multigrid) at 1, 2 and 4 ranks agree with it within
the bound derived there from the tolerances (each solve adds at most tol ||b||_2 to the error,
no step amplifies it), hypre's own tolerance added. hypre also agrees with the dense NumPy solve,
which shows the two references pose one problem. Needs GRIDSIM, MPIEXEC and HYPRE_STEP in the
environment."""
import os
import subprocess
import unittest

import numpy as np

from deck_case import TempDirCase
from test_implicit_step import (CASES, PRECONDITIONERS, STEPS, backward_euler, boundary_axes, deck,
                                run_gridsim, start)

HYPRE_STEP = os.environ["HYPRE_STEP"]
HYPRE_TOL = 1e-12


def hypre_steps(tmp, u, h, dt, periodic_axes):
    """STEPS backward-Euler steps of field `u` (axes slowest first) by hypre_step."""
    dims = u.ndim
    n = list(u.shape[::-1]) + [1] * (3 - dims)
    r = [dt / (h[d] * h[d]) for d in range(dims)] + [0.0] * (3 - dims)
    periodic = [int(p) for p in periodic_axes] + [0] * (3 - dims)
    src, dst = os.path.join(tmp, "u0.bin"), os.path.join(tmp, "u.bin")
    u.astype(np.float64).tofile(src)
    res = subprocess.run([HYPRE_STEP, *map(str, n), *map(str, periodic),
                          *(f"{x:.17g}" for x in r), str(STEPS), str(HYPRE_TOL), src, dst],
                         capture_output=True, text=True, timeout=300, check=False)
    if res.returncode != 0:
        raise AssertionError(f"hypre_step: exit {res.returncode}\n{res.stdout}{res.stderr}")
    return np.fromfile(dst, dtype=np.float64).reshape(u.shape)


class ImplicitStepAgainstHypre(TempDirCase):
    PREFIX = "gridsim_hypre_"

    def test_every_preconditioner_at_one_two_four_ranks(self):
        for name, (cells, boundary, precision, tol) in CASES.items():
            u0, h, fixed, dt = start(cells, boundary)
            periodic, _ = boundary_axes(boundary, len(cells))
            reference = hypre_steps(self.tmp, u0, h, dt, periodic)
            dense, norms = u0, 0.0
            for _ in range(STEPS):
                dense, b_norm = backward_euler(dense, h, fixed, dt)
                norms += b_norm
            np.testing.assert_allclose(reference, dense, rtol=0, atol=10 * HYPRE_TOL * norms)
            rounding = (1e-13 if precision == "double" else 2e-6) * STEPS
            bound = (tol + HYPRE_TOL) * norms + rounding
            for pre in PRECONDITIONERS:
                for ranks in (1, 2, 4):
                    with self.subTest(case=name, preconditioner=pre, ranks=ranks):
                        got, _ = run_gridsim(self.tmp, deck(cells, boundary, precision, tol),
                                             ranks, pre, f"{name}_{pre}_{ranks}")
                        self.assertLessEqual(np.abs(got - reference).max(), bound)


if __name__ == "__main__":
    unittest.main()
