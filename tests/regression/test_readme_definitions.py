"""The problem definitions in README.md ("Deck keys") and docs/output.md,
re-implemented here in NumPy from the README's words alone and held against what gridsim writes:
the benchmark boundary's mirror rows and corners, which face wins where Dirichlet faces meet,
the hot spot's edge and its behaviour at a periodic seam, the time.cfl expression, the analytic
error on a periodic sine deck, and which datasets do not depend on the decomposition.
Needs GRIDSIM and MPIEXEC in the environment."""
import json
import math
import os
import shutil
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

GRIDSIM = os.environ["GRIDSIM"]
MPIEXEC = os.environ.get("MPIEXEC", "mpirun")


def ftcs_step(u, alpha, dt, h, periodic):
    """One explicit heat step on a full array (axes slowest first, h and periodic x-first):
    u + alpha dt sum_d (u[+1] - 2u + u[-1]) / h_d^2 at every point that is not on a Dirichlet
    face; a periodic axis of N points wraps point N-1 onto point 0."""
    nd = u.ndim
    lap = np.zeros_like(u)
    for d in range(nd):
        axis = nd - 1 - d  # x is the last array axis
        lap += (np.roll(u, 1, axis) - 2 * u + np.roll(u, -1, axis)) / (h[d] * h[d])
    new = u + alpha * dt * lap
    fixed = np.zeros(u.shape, dtype=bool)
    for d in range(nd):
        if periodic[d]:
            continue
        axis = nd - 1 - d
        idx = [slice(None)] * nd
        for end in (0, -1):
            idx[axis] = end
            fixed[tuple(idx)] = True
    new[fixed] = u[fixed]
    return new


def cfl_dt(cfl, alpha, h):
    """README, time.cfl: cfl * (1 / (2 * alpha * (1/h_x^2 + 1/h_y^2 (+ 1/h_z^2))))."""
    s = 0.0
    for hd in h:
        s += 1.0 / (hd * hd)
    return cfl * (1.0 / (2.0 * alpha * s))


class ReadmeDefinitions(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gridsim_readme_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_deck(self, deck, ranks, *sets, name="run"):
        """Runs the deck text on `ranks` ranks; returns (final snapshot path, report dict)."""
        path = os.path.join(self.tmp, name + ".toml")
        with open(path, "w") as f:
            f.write(deck)
        out_dir = os.path.join(self.tmp, name)
        report = os.path.join(self.tmp, name + ".json")
        cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", GRIDSIM, "run", path, "--quiet",
               "--report", report, "--set", "output.write_final=true",
               "--set", f'output.dir="{out_dir}"', "--set", "parallel.backend=\"cpu\""]
        for s in sets:
            cmd += ["--set", s]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=240)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        with open(report) as f:
            return os.path.join(out_dir, "snapshot_final.h5"), json.load(f)

    def test_benchmark_mirror_rows_copy_whole_rows_and_corners(self):
        nx, ny = 10, 9
        deck = ("[problem]\nname = \"jacobi\"\n[grid]\ncells = [10, 9]\n"
                "[boundary]\nkind = \"benchmark\"\n[time]\nsteps = 1\nnorm_every = 1\n")
        # README: columns 0 and nx-1 of rows 1..ny-2 hold sin(2 pi iy/(ny-1)), the interior starts
        # at 0 (jacobi's constant initial value), rows 0 and ny-1 are whole-row copies of rows
        # ny-2 and 1; float is jacobi's default precision.
        u = np.zeros((ny, nx), dtype=np.float32)
        for iy in range(1, ny - 1):
            u[iy, 0] = u[iy, nx - 1] = np.float32(math.sin(2 * math.pi * iy / (ny - 1)))
        u[0, :], u[ny - 1, :] = u[ny - 2, :], u[1, :]
        new = u.copy()
        q = np.float32(0.25)
        new[1:-1, 1:-1] = q * (u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1])
        new[0, :], new[ny - 1, :] = new[ny - 2, :], new[1, :]
        for ranks in (1, 4):
            path, _ = self.run_deck(deck, ranks, name=f"bench{ranks}")
            with h5py.File(path) as f:
                got = f["/fields/u"][...]
            self.assertEqual(got.shape, (ny, nx))
            corner = np.float32(math.sin(2 * math.pi * (ny - 2) / (ny - 1)))
            self.assertEqual(got[0, 0], corner)
            self.assertEqual(got[0, nx - 1], corner)
            self.assertEqual(got[ny - 1, 0], np.float32(math.sin(2 * math.pi / (ny - 1))))
            np.testing.assert_array_equal(got[0, :], got[ny - 2, :])
            np.testing.assert_array_equal(got[ny - 1, :], got[1, :])
            np.testing.assert_allclose(got, new, rtol=0, atol=1e-6)

    def test_dirichlet_faces_meet_x_wins_then_y_and_dt_from_cfl(self):
        nx, ny, nz = 6, 5, 4
        faces = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
        length, cfl, alpha = [1.0, 0.7, 1.3], 0.37, 0.9
        deck = (f"[problem]\nalpha = {alpha}\n[grid]\ncells = [{nx}, {ny}, {nz}]\n"
                f"length = {length}\n[boundary]\nface_values = {faces}\n"
                f"[initial]\nkind = \"constant\"\n[time]\nsteps = 1\ncfl = {cfl}\n")
        h = [length[d] / (n - 1) for d, n in enumerate((nx, ny, nz))]
        dt = cfl_dt(cfl, alpha, h)
        u = np.zeros((nz, ny, nx))
        # The faces in reverse order of precedence, so x's value is the one left standing.
        u[0, :, :], u[-1, :, :] = faces[4], faces[5]
        u[:, 0, :], u[:, -1, :] = faces[2], faces[3]
        u[:, :, 0], u[:, :, -1] = faces[0], faces[1]
        expect = ftcs_step(u, alpha, dt, h, [False] * 3)
        path, _ = self.run_deck(deck, 2)
        with h5py.File(path) as f:
            got = f["/fields/u"][...]
            self.assertEqual(f.attrs["dt"], dt)  # the README's expression, bit for bit
        self.assertEqual(got[0, 0, 0], faces[0])    # x_lo over y_lo and z_lo
        self.assertEqual(got[-1, -1, -1], faces[1])  # x_hi over y_hi and z_hi
        self.assertEqual(got[0, 0, 2], faces[2])    # y_lo over z_lo
        self.assertEqual(got[-1, -1, 2], faces[3])  # y_hi over z_hi
        self.assertEqual(got[0, 2, 2], faces[4])
        np.testing.assert_allclose(got, expect, rtol=0, atol=1e-13)

    def test_hotspot_includes_its_sphere_and_is_cut_at_a_periodic_seam(self):
        n = 11  # h = 0.1: the point (0.2, 0.5) lies exactly on the sphere around (0, 0.5)
        deck = (f"[grid]\ncells = [{n}, {n}]\n[boundary]\nkind = \"periodic\"\n"
                "[initial]\nkind = \"hotspot\"\ncenter = [0.0, 0.5]\nradius = 0.2\n"
                "amplitude = 1.0\nvalue = 0.0\n[time]\nsteps = 1\n")
        h = [1.0 / (n - 1)] * 2
        x = np.arange(n) * h[0]
        dist2 = (x[None, :] - 0.0) ** 2 + (x[:, None] - 0.5) ** 2
        u = np.where(dist2 <= 0.2 * 0.2, 1.0, 0.0)  # no wrap: x = 0.9, 1.0 stay outside
        self.assertEqual(u[5, 2], 1.0)
        self.assertEqual(u[5, n - 1], 0.0)
        expect = ftcs_step(u, 1.0, cfl_dt(0.5, 1.0, h), h, [True, True])
        wrapped = u.copy()
        wrapped[5, n - 1] = 1.0  # what a ball continued across the seam would hold (in part)
        wrong = ftcs_step(wrapped, 1.0, cfl_dt(0.5, 1.0, h), h, [True, True])
        for ranks in (1, 4):
            path, _ = self.run_deck(deck, ranks, name=f"hot{ranks}")
            with h5py.File(path) as f:
                got = f["/fields/u"][...]
            np.testing.assert_allclose(got, expect, rtol=0, atol=1e-14)
            self.assertGreater(np.abs(got - wrong).max(), 0.1)

    def test_analytic_error_on_a_periodic_sine_deck(self):
        nx, ny, steps, kx, ky = 16, 12, 20, 2, 1
        deck = (f"[grid]\ncells = [{nx}, {ny}]\n[boundary]\nx = \"periodic\"\n"
                f"[initial]\nkind = \"sine\"\nmodes = [{kx}, {ky}]\namplitude = 2.0\n"
                f"[time]\nsteps = {steps}\n")
        h = [1.0 / (nx - 1), 1.0 / (ny - 1)]
        dt = cfl_dt(0.5, 1.0, h)
        # README: cos(2 pi k x/(N h)) on a periodic axis of N points, sin(k pi x/L) otherwise.
        kappa = [2 * math.pi * kx / (nx * h[0]), ky * math.pi / 1.0]
        x, y = np.arange(nx) * h[0], np.arange(ny) * h[1]
        shape = 2.0 * np.cos(kappa[0] * x)[None, :] * np.sin(kappa[1] * y)[:, None]
        u = shape.copy()
        for _ in range(steps):
            u = ftcs_step(u, 1.0, dt, h, [True, False])
        continuous = shape * math.exp(-(kappa[0] ** 2 + kappa[1] ** 2) * steps * dt)
        path, report = self.run_deck(deck, 2)
        with h5py.File(path) as f:
            got = f["/fields/u"][...]
        np.testing.assert_allclose(got, u, rtol=0, atol=1e-13)
        err = report["error_vs_analytic"]
        self.assertLess(err["discrete"]["max_abs"], 1e-13)
        self.assertAlmostEqual(err["continuous"]["max_abs"] / np.abs(got - continuous).max(), 1.0,
                               places=9)
        # A non-zero Dirichlet face has no analytic solution: the report says nothing.
        _, report = self.run_deck(deck, 1, "boundary.face_values=[0.0, 0.0, 0.0, 1.0]",
                                  name="nonzero_face")
        self.assertNotIn("error_vs_analytic", report)

    def test_datasets_independent_of_the_decomposition(self):
        deck = "[grid]\ncells = [12, 10, 9]\n[time]\nsteps = 7\n"
        files = {n: self.run_deck(deck, n, name=f"dec{n}")[0] for n in (1, 4)}
        with h5py.File(files[1]) as a, h5py.File(files[4]) as b:
            np.testing.assert_array_equal(a["/fields/u"][...], b["/fields/u"][...])
            self.assertEqual(sorted(a.attrs), sorted(b.attrs))
            for key in a.attrs:
                np.testing.assert_array_equal(a.attrs[key], b.attrs[key], err_msg=key)
            for key in ("global_cells", "length", "spacing", "origin"):
                np.testing.assert_array_equal(a["/grid"].attrs[key], b["/grid"].attrs[key])
            self.assertEqual(list(a["/grid"].attrs["process_grid"]), [1, 1, 1])
            self.assertEqual(int(np.prod(b["/grid"].attrs["process_grid"])), 4)
            self.assertIn("/provenance", a)
            self.assertIn("/provenance", b)

    def test_sine_with_the_benchmark_boundary_is_refused(self):
        path = os.path.join(self.tmp, "bad.toml")
        with open(path, "w") as f:
            f.write("[problem]\nname = \"jacobi\"\n[grid]\ncells = [8, 8]\n"
                    "[boundary]\nkind = \"benchmark\"\n[initial]\nkind = \"sine\"\n")
        res = subprocess.run([MPIEXEC, "-np", "1", GRIDSIM, "check", path], capture_output=True,
                             text=True, check=False)
        self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
        self.assertIn("initial.kind", res.stderr)


if __name__ == "__main__":
    unittest.main()
