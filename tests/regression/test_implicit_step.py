"""The implicit heat step (README, "Deck keys": backward Euler, (I - alpha dt Lap_h) u' = u at the
updated points, Dirichlet points holding their values, periodic axes wrapping), re-implemented in
NumPy as a dense solve, against gridsim's CG with every preconditioner (none, jacobi,
chebyshev, multigrid) at 1, 2 and 4 ranks (CPU, or GRIDSIM_TEST_BACKEND=cuda): odd sizes, mixed boundaries, a non-zero Dirichlet value, float
and double. The bound is derived from the stopping rule: each solve leaves ||b - A x||_2 <=
tol ||b||_2, A's eigenvalues are >= 1, so a step adds at most tol ||b||_2 to the 2-norm of the
error and no step amplifies it; over the steps the bound is tol times the sum of the reference's
||b||_2, plus rounding. Needs GRIDSIM and MPIEXEC in the environment."""
import json
import os
import subprocess
import unittest

import h5py
import numpy as np

from deck_case import GRIDSIM, TempDirCase, launch

STEPS = 3
CFL = 200.0
# The backend under test: cpu here; GRIDSIM_TEST_BACKEND=cuda on a GPU host (ranks sharing it).
BACKEND = os.environ.get("GRIDSIM_TEST_BACKEND", "cpu")

# name: (cells x-first, boundary lines, precision, tolerance)
CASES = {
    "3d_x_periodic": ([13, 11, 9], 'kind = "dirichlet"\nx = "periodic"\nvalue = 0.0\n', "double",
                      1e-10),
    "2d_dirichlet_value": ([33, 27], 'kind = "dirichlet"\nvalue = 0.25\n', "double", 1e-10),
    "3d_float": ([11, 9, 13], 'kind = "dirichlet"\ny = "periodic"\nvalue = 0.0\n', "float", 1e-5),
}
PRECONDITIONERS = ("none", "jacobi", "chebyshev", "multigrid")


def deck(cells, boundary, precision, tol):
    return (f'[problem]\nname = "heat"\nscheme = "implicit"\nprecision = "{precision}"\n'
            f"[grid]\ncells = {cells}\nlength = {[1.0] * len(cells)}\n"
            f"[boundary]\n{boundary}"
            f'[initial]\nkind = "hotspot"\ncenter = {[0.3, 0.6, 0.5][:len(cells)]}\nradius = 0.3\n'
            f"amplitude = 1.0\nvalue = 0.0\n[time]\ncfl = {CFL}\nsteps = {STEPS}\n"
            f"cg_tolerance = {tol}\ncg_lanczos_steps = 8\n")


def boundary_axes(text, dims):
    periodic = ["periodic" in text.split("\n")[0]] * dims
    for d, axis in enumerate("xyz"[:dims]):
        if f'{axis} = "periodic"' in text:
            periodic[d] = True
    value = float(text.split("value = ")[1].split("\n")[0])
    return periodic, value


def initial_field(cells, periodic, value):
    """The hot spot (README): 1 within radius 0.3 x the shortest length of the centre
    (0.3, 0.6, 0.5) x the lengths, 0 elsewhere; Dirichlet points hold `value`; h = L / (N - 1).
    Axes slowest first."""
    dims = len(cells)
    h = [1.0 / (n - 1) for n in cells]
    coords = [np.arange(n) * h[d] for d, n in enumerate(cells)]
    centre = [0.3, 0.6, 0.5][:dims]
    grids = np.meshgrid(*coords[::-1], indexing="ij")  # z, y, x
    dist2 = sum((grids[dims - 1 - d] - centre[d]) ** 2 for d in range(dims))
    u = np.where(dist2 <= 0.3 * 0.3, 1.0, 0.0)
    return u, h, dirichlet_mask(u.shape, periodic), value


def dirichlet_mask(shape, periodic):
    dims = len(shape)
    fixed = np.zeros(shape, dtype=bool)
    for d in range(dims):
        if periodic[d]:
            continue
        idx = [slice(None)] * dims
        for end in (0, -1):
            idx[dims - 1 - d] = end
            fixed[tuple(idx)] = True
    return fixed


def backward_euler(u, h, fixed, dt):
    """u' with (1 + 2 sum r_d) u'_i - sum_d r_d (u'_{i+e_d} + u'_{i-e_d}) = u_i at the updated
    points, by a dense solve; Dirichlet points keep u's values."""
    dims = u.ndim
    r = [dt / (h[d] * h[d]) for d in range(dims)]
    free = np.flatnonzero(~fixed.ravel())
    index = -np.ones(u.size, dtype=np.int64)
    index[free] = np.arange(free.size)
    a = np.zeros((free.size, free.size))
    rhs = u.ravel()[free].copy()
    a[np.arange(free.size), np.arange(free.size)] = 1.0 + 2.0 * sum(r)
    for d in range(dims):
        for step in (1, -1):
            nbr = np.roll(np.arange(u.size).reshape(u.shape), -step, axis=dims - 1 - d).ravel()
            for row, point in enumerate(free):
                j = nbr[point]
                if index[j] >= 0:
                    a[row, index[j]] -= r[d]
                else:
                    rhs[row] += r[d] * u.ravel()[j]
    out = u.ravel().copy()
    out[free] = np.linalg.solve(a, rhs)
    return out.reshape(u.shape), np.linalg.norm(u.ravel()[free])


def run_gridsim(tmp, text, ranks, pre, name):
    """Runs the deck text with preconditioner `pre` on `ranks` ranks in directory `tmp`; returns
    (the final field as float64, the report)."""
    path = os.path.join(tmp, name + ".toml")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(tmp, name)
    report = out + ".json"
    res = subprocess.run(
        [*launch(ranks), GRIDSIM, "run", path, "--quiet", "--report", report, "--set",
         f"parallel.backend={BACKEND}", "--set", "output.write_final=true", "--set",
         f'output.dir="{out}"', "--set", f'time.cg_preconditioner="{pre}"',
         *(["--set", "parallel.share_gpus=true", "--set", f"parallel.ranks_used={ranks}"]
           if BACKEND == "cuda" else [])],
        capture_output=True, text=True, timeout=300, check=False)
    if res.returncode != 0:
        raise AssertionError(f"{name}: exit {res.returncode}\n{res.stdout}{res.stderr}")
    with h5py.File(os.path.join(out, "snapshot_final.h5")) as f:
        got = np.array(f["fields/u"], dtype=np.float64)
    with open(report) as f:
        return got, json.load(f)


def start(cells, boundary):
    """(the initial field with its Dirichlet values, h, the Dirichlet mask, dt) of a case."""
    periodic, value = boundary_axes(boundary, len(cells))
    u, h, fixed, value = initial_field(cells, periodic, value)
    u[fixed] = value
    return u, h, fixed, CFL / (2.0 * sum(1.0 / (hd * hd) for hd in h))


class ImplicitStepAgainstNumpy(TempDirCase):
    PREFIX = "gridsim_implicit_"

    def test_every_preconditioner_at_one_two_four_ranks(self):
        for name, (cells, boundary, precision, tol) in CASES.items():
            u, h, fixed, dt = start(cells, boundary)
            bound = 0.0
            for _ in range(STEPS):
                u, b_norm = backward_euler(u, h, fixed, dt)
                bound += tol * b_norm
            rounding = (1e-13 if precision == "double" else 2e-6) * STEPS
            for pre in PRECONDITIONERS:
                for ranks in (1, 2, 4):
                    with self.subTest(case=name, preconditioner=pre, ranks=ranks):
                        got, doc = run_gridsim(self.tmp, deck(cells, boundary, precision, tol),
                                               ranks, pre, f"{name}_{pre}_{ranks}")
                        self.assertLessEqual(np.abs(got - u).max(), bound + rounding)
                        cg = doc["cg"]
                        if pre == "chebyshev":
                            # The interval was found and used: it lies around A's spectrum,
                            # whose eigenvalues are in [1, 1 + 4 sum_d r_d].
                            top = 1.0 + 4.0 * sum(dt / (hd * hd) for hd in h)
                            self.assertIn("chebyshev", cg)
                            self.assertGreater(cg["chebyshev"]["lo"], 0.0)
                            self.assertLessEqual(cg["chebyshev"]["lo"], 0.95 * top)
                            self.assertGreater(cg["chebyshev"]["hi"], 0.9 * top)
                        if pre == "multigrid":
                            # A V-cycle ran over at least two levels, the first the grid's.
                            self.assertGreaterEqual(len(cg["multigrid"]["levels"]), 2)
                            self.assertEqual(cg["multigrid"]["levels"][0][:len(cells)], cells)


if __name__ == "__main__":
    unittest.main()
