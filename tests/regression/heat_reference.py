"""What the NumPy re-implementations of heat (test_heat_order.py, test_heat_conduction.py) share,
from README.md's words: the Dirichlet points, the hot-spot initial condition with its face values,
the explicit step, the implicit step as one dense linear system, and a run of gridsim on CPU ranks that returns the
final field and the report."""
import json
import os
import subprocess

import h5py
import numpy as np

from deck_case import GRIDSIM, TempDirCase, launch


def dirichlet_mask(shape, periodic):
    """The end points of every Dirichlet axis (arrays z, y, x; `periodic` x first)."""
    fixed = np.zeros(shape, dtype=bool)
    for d in range(len(shape)):
        if periodic[d]:
            continue
        idx = [slice(None)] * len(shape)
        for end in (0, -1):
            idx[len(shape) - 1 - d] = end
            fixed[tuple(idx)] = True
    return fixed


def coordinates(cells, length):
    """x_d = i h_d at every point (arrays z, y, x), and h (x first)."""
    h = [length[d] / (cells[d] - 1) for d in range(len(cells))]
    grids = np.meshgrid(*[np.arange(cells[d]) * h[d] for d in reversed(range(len(cells)))],
                        indexing="ij")
    return [grids[len(cells) - 1 - d] for d in range(len(cells))], h


def hotspot_field(cells, length, faces, periodic, center, radius, amplitude, value):
    """README: `amplitude` where the distance from the centre (`center` x the lengths) is <=
    radius x the shortest length, `value` elsewhere; Dirichlet points hold their face's value,
    x's over y's over z's where faces meet. Returns the field and h."""
    x, h = coordinates(cells, length)
    dist2 = sum((x[d] - center[d] * length[d]) ** 2 for d in range(len(cells)))
    u = np.where(dist2 <= (radius * min(length)) ** 2, amplitude, value).astype(float)
    for d in reversed(range(len(cells))):
        if periodic[d]:
            continue
        idx = [slice(None)] * len(cells)
        for side, end in enumerate((0, -1)):
            idx[len(cells) - 1 - d] = end
            u[tuple(idx)] = faces[2 * d + side]
    return u, h


def explicit_step(u, operator, alpha_dt, periodic):
    """FTCS: u + alpha dt L u off the Dirichlet faces, u on them."""
    new = u + alpha_dt * operator(u)
    fixed = dirichlet_mask(u.shape, periodic)
    new[fixed] = u[fixed]
    return new


def implicit_step(u, operator, alpha_dt, periodic):
    """Backward Euler: (I - alpha dt L) u' = u at every point off the Dirichlet faces, u' = u on
    them, as one dense linear system (L's columns are its images of the unit vectors)."""
    n = u.size
    cols = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = 1.0
        cols[:, j] = operator(e.reshape(u.shape)).ravel()
    a = np.eye(n) - alpha_dt * cols
    fixed = dirichlet_mask(u.shape, periodic).ravel()
    a[fixed, :] = 0.0
    a[fixed, fixed] = 1.0
    return np.linalg.solve(a, u.ravel()).reshape(u.shape)


class HeatRunCase(TempDirCase):
    """run_deck: gridsim on a deck of the test's on CPU ranks."""

    def run_deck(self, deck, ranks, *sets, name="run", expect_rc=0):
        """The final field and the report; with expect_rc != 0 the error text, nothing written."""
        path = os.path.join(self.tmp, name + ".toml")
        with open(path, "w") as f:
            f.write(deck)
        out_dir = os.path.join(self.tmp, name)
        report = os.path.join(self.tmp, name + ".json")
        cmd = launch(ranks) + [GRIDSIM, "run", path, "--quiet", "--report", report,
                               "--set", "output.write_final=true",
                               "--set", f'output.dir="{out_dir}"',
                               "--set", "parallel.backend=\"cpu\""]
        for s in sets:
            cmd += ["--set", s]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300)
        self.assertEqual(res.returncode, expect_rc, res.stdout + res.stderr)
        if expect_rc != 0:
            self.assertFalse(os.path.exists(out_dir), "a refused deck wrote output")
            return res.stderr
        with h5py.File(os.path.join(out_dir, "snapshot_final.h5")) as f:
            got = f["/fields/u"][...]
        with open(report) as f:
            return got, json.load(f)
