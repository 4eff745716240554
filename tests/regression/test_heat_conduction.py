"""Heat with density conductivity (problem.conductivity = "density"), re-implemented here in
NumPy from README.md's words alone ("Heat"): the density field of initial.density and
[[initial.regions]] (later regions over earlier), each face conducting with the mean of its two
points' densities, the explicit step and its stability limit, and the implicit step solved
directly (a dense solve, not a CG). gridsim runs on 1, 2 and 4 CPU ranks, on odd sizes, with
periodic and Dirichlet axes mixed, in float and double; bad decks exit 2 with one line.
Needs GRIDSIM and MPIEXEC in the environment."""
import os
import subprocess
import unittest

import numpy as np

from deck_case import GRIDSIM, launch
from heat_reference import (HeatRunCase, coordinates, explicit_step, hotspot_field,
                            implicit_step)

ALPHA = 0.7


def density_field(cells, length, background, regions):
    """README: the background density, then each region over the points it holds: a box holds
    lo_d L_d <= x_d <= hi_d L_d on every axis; a sphere |x - c L|^2 <= (radius x the shortest
    length)^2."""
    x, _ = coordinates(cells, length)
    rho = np.full(x[0].shape, background, dtype=float)
    for g in regions:
        if g["shape"] == "box":
            inside = np.ones(x[0].shape, dtype=bool)
            for d in range(len(cells)):
                inside &= (x[d] >= g["lo"][d] * length[d]) & (x[d] <= g["hi"][d] * length[d])
        else:
            dist2 = sum((x[d] - g["center"][d] * length[d]) ** 2 for d in range(len(cells)))
            inside = dist2 <= (g["radius"] * min(length)) ** 2
        rho[inside] = g["density"]
    return rho


def shifted(a, axis, o, periodic):
    """a[i + o] along `axis` (wrapping on a periodic axis; the end points repeat otherwise,
    where only the fixed Dirichlet points read them)."""
    if periodic:
        return np.roll(a, -o, axis=axis)
    idx = np.clip(np.arange(a.shape[axis]) + o, 0, a.shape[axis] - 1)
    return np.take(a, idx, axis=axis)


def operator(u, rho, h, periodic):
    """L u = sum_d (k+ (u[+e_d] - u) - k- (u - u[-e_d])) / h_d^2, k+- the mean of the two
    densities of each face."""
    out = np.zeros_like(u)
    for d in range(u.ndim):
        axis = u.ndim - 1 - d
        kp = 0.5 * (rho + shifted(rho, axis, 1, periodic[d]))
        km = 0.5 * (rho + shifted(rho, axis, -1, periodic[d]))
        out += (kp * (shifted(u, axis, 1, periodic[d]) - u) -
                km * (u - shifted(u, axis, -1, periodic[d]))) / (h[d] * h[d])
    return out


def regions_toml(regions):
    out = ""
    for g in regions:
        out += f'[[initial.regions]]\nshape = "{g["shape"]}"\n'
        for key in ("lo", "hi", "center", "radius", "density"):
            if key in g:
                out += f"{key} = {g[key]}\n"
    return out


def deck_text(cells, periodic, scheme, precision, steps, cfl, regions, background):
    length = [1.0, 0.8, 1.2][:len(cells)]
    faces = [0.3, -0.2, 0.1, 0.0, -0.4, 0.25][:2 * len(cells)]
    center = [0.4, 0.35, 0.6][:len(cells)]
    bc = "".join(f'{"xyz"[d]} = "{"periodic" if periodic[d] else "dirichlet"}"\n'
                 for d in range(len(cells)))
    return (f"[problem]\nname = \"heat\"\nconductivity = \"density\"\nscheme = \"{scheme}\"\n"
            f"precision = \"{precision}\"\nalpha = {ALPHA}\n"
            f"[grid]\ncells = {cells}\nlength = {length}\n"
            f"[boundary]\n{bc}face_values = {faces}\n"
            f"[time]\nsteps = {steps}\ncfl = {cfl}\ncg_preconditioner = \"chebyshev\"\n"
            f"cg_tolerance = {1e-6 if precision == 'float' else 1e-13}\n"
            f"[initial]\nkind = \"hotspot\"\ncenter = {center}\nradius = 0.3\n"
            f"amplitude = 1.0\nvalue = 0.5\ndensity = {background}\n"
            + regions_toml(regions)), length, faces, center


# A box and a sphere of other densities, the sphere over the box.
REGIONS_2D = [{"shape": "box", "lo": [0.1, 0.2], "hi": [0.55, 0.7], "density": 4.0},
              {"shape": "sphere", "center": [0.6, 0.5], "radius": 0.25, "density": 0.25}]
REGIONS_3D = [{"shape": "box", "lo": [0.0, 0.3, 0.2], "hi": [0.6, 1.0, 0.7], "density": 3.0},
              {"shape": "sphere", "center": [0.7, 0.4, 0.5], "radius": 0.3, "density": 0.5}]


class HeatConduction(HeatRunCase):
    PREFIX = "gridsim_conduction_"

    def reference(self, cells, periodic, scheme, steps, cfl, regions, background):
        length = [1.0, 0.8, 1.2][:len(cells)]
        faces = [0.3, -0.2, 0.1, 0.0, -0.4, 0.25][:2 * len(cells)]
        center = [0.4, 0.35, 0.6][:len(cells)]
        u, h = hotspot_field(cells, length, faces, periodic, center, 0.3, 1.0, 0.5)
        rho = density_field(cells, length, background, regions)
        # README: f = 2 x the largest density; dt = cfl / (f alpha sum_d 1/h_d^2).
        largest = max([background] + [g["density"] for g in regions])
        dt = cfl / (2.0 * largest * ALPHA * sum(1.0 / (hd * hd) for hd in h))
        for _ in range(steps):
            step = explicit_step if scheme == "explicit" else implicit_step
            u = step(u, lambda e: operator(e, rho, h, periodic), ALPHA * dt, periodic)
        return u, dt

    def check(self, cells, periodic, scheme, precision, ranks, regions, background=1.0, steps=8,
              cfl=0.9, time_block=1):
        deck = deck_text(cells, periodic, scheme, precision, steps, cfl, regions, background)[0]
        deck = deck.replace("[grid]", f"[parallel]\ntime_block = {time_block}\n[grid]")
        expect, dt = self.reference(cells, periodic, scheme, steps, cfl, regions, background)
        # The densities matter: the same run with uniform conductivity lands elsewhere.
        uniform, _ = self.reference(cells, periodic, scheme, steps, cfl, [], 1.0)
        self.assertGreater(np.abs(expect - uniform).max(), 1e-3)
        atol = 2e-5 if precision == "float" else (1e-10 if scheme == "implicit" else 1e-13)
        for n in ranks:
            got, report = self.run_deck(deck, n, name=f"c{scheme}{precision}{n}")
            self.assertEqual(got.shape, expect.shape)
            self.assertAlmostEqual(report["config"]["time"]["dt"] / dt, 1.0, places=12)
            self.assertEqual(report["time_block"], time_block)
            np.testing.assert_allclose(got, expect, rtol=0, atol=atol,
                                       err_msg=f"{scheme} {precision} {n} ranks")
        return got

    def test_explicit_2d_mixed_double(self):
        self.check([17, 13], [False, True], "explicit", "double", (1, 2, 4), REGIONS_2D)

    def test_explicit_3d_dirichlet_float(self):
        self.check([11, 9, 13], [False, False, False], "explicit", "float", (1, 4), REGIONS_3D,
                   background=2.0)

    def test_explicit_3d_periodic_z_double(self):
        self.check([9, 11, 10], [False, False, True], "explicit", "double", (1, 2, 4),
                   REGIONS_3D)

    def test_time_blocks_3d_mixed_double(self):
        """Three sweeps per halo exchange (3-deep halos of the field and of the densities):
        the reference's field, and bitwise the run of one sweep per exchange."""
        case = ([9, 11, 10], [True, False, False], "explicit", "double")
        blocked = self.check(*case, (1, 2, 4), REGIONS_3D, steps=7, time_block=3)
        single = self.check(*case, (4,), REGIONS_3D, steps=7, time_block=1)
        np.testing.assert_array_equal(blocked, single)

    def test_time_blocks_2d_float(self):
        self.check([17, 13], [False, True], "explicit", "float", (1, 4), REGIONS_2D,
                   time_block=2)

    def test_implicit_2d_double(self):
        self.check([13, 11], [False, True], "implicit", "double", (1, 2), REGIONS_2D, steps=2,
                   cfl=6.0)

    def test_implicit_3d_mixed_double(self):
        self.check([9, 8, 7], [True, False, False], "implicit", "double", (1, 4), REGIONS_3D,
                   steps=2, cfl=6.0)

    def test_implicit_3d_float(self):
        self.check([9, 9, 8], [False, True, False], "implicit", "float", (2,), REGIONS_3D,
                   steps=2, cfl=4.0)

    def test_report_counts_the_density_in_its_floor(self):
        """The report's floor (docs/output.md): per point and sweep the field read and written
        and the density read, 3 values, at the copy bandwidth measured in the run; the summary
        line says so."""
        deck = deck_text([17, 13], [False, True], "explicit", "float", 40, 0.9, REGIONS_2D,
                         1.0)[0]
        _, rep = self.run_deck(deck, 2, name="floor")
        self.assertEqual(rep["coefficient_fields"], 1)
        values = rep["updated_points_per_step"] * (rep["steps"] - rep["start_step"])
        floor_s = 3 * 4 * values / rep["ranks"] / (rep["copy_bandwidth_GBps"] * 1e9)
        self.assertAlmostEqual(rep["floor_ratio"] / (floor_s / rep["loop_seconds"]), 1.0,
                               places=9)
        self.assertAlmostEqual(rep["floor_ratio"] / rep["bandwidth_ratio"], 1.5, places=9)
        self.assertAlmostEqual(rep["modelled_dram_bytes_per_update"],
                               3 * 4 / rep["sweeps_per_pass"])
        path = os.path.join(self.tmp, "floor.toml")
        res = subprocess.run(launch(1) + [GRIDSIM, "run", path, "--set",
                                          f'output.dir="{os.path.join(self.tmp, "floor1")}"'],
                             capture_output=True, text=True, timeout=300, check=False)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertRegex(res.stdout, r"\n  floor +[0-9.]+% of the copy bandwidth, counting 1 "
                                     r"coefficient field read\(s\) per point and sweep too\n")

    def test_stability_limit(self):
        """time.dt just above 1 / (2 rho_max alpha sum_d 1/h_d^2) is refused, just below runs."""
        deck, length, _, _ = deck_text([15, 13], [False, False], "explicit", "double", 3, 0.5,
                                       REGIONS_2D, 1.0)
        h = [length[d] / ([15, 13][d] - 1) for d in range(2)]
        limit = 1.0 / (2.0 * 4.0 * ALPHA * sum(1.0 / (hd * hd) for hd in h))
        above = deck.replace("cfl = 0.5\n", f"dt = {limit * 1.001!r}\n")
        err = self.run_deck(above, 1, name="above", expect_rc=2)
        self.assertIn("time.dt", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        below = deck.replace("cfl = 0.5\n", f"dt = {limit * 0.999!r}\n")
        self.run_deck(below, 1, name="below")

    def test_refusals(self):
        deck = deck_text([15, 13], [False, False], "explicit", "double", 3, 0.5, REGIONS_2D,
                         1.0)[0]
        bad = {
            "order": (deck.replace("conductivity = \"density\"\n",
                                   "conductivity = \"density\"\norder = 4\n"),
                      "problem.conductivity"),
            "jacobi": (deck.replace("scheme = \"explicit\"", "scheme = \"implicit\"")
                       .replace("\"chebyshev\"", "\"jacobi\""), "time.cg_preconditioner"),
            "uniform": (deck.replace("conductivity = \"density\"\n", ""), "initial.regions"),
            "zero_density": (deck.replace("density = 4.0", "density = 0.0"),
                             "initial.regions[1].density"),
            "no_density": (deck.replace("density = 0.25\n", ""), "initial.regions[2].density"),
            "lo_above_hi": (deck.replace("hi = [0.55, 0.7]", "hi = [0.05, 0.7]"),
                            "initial.regions[1].hi"),
            "unknown_key": (deck.replace("radius = 0.25\n", "radius = 0.25\nheight = 1\n"),
                            "initial.regions[2].height"),
            "box_with_radius": (deck.replace("hi = [0.55, 0.7]\n", "hi = [0.55, 0.7]\nradius = 1\n"),
                                "initial.regions[1].radius"),
            "background": (deck.replace("density = 1.0\n", "density = -1.0\n"),
                           "initial.density"),
        }
        for name, (text, key) in bad.items():
            err = self.run_deck(text, 1, name=name, expect_rc=2)
            self.assertIn(key, err, name)
            self.assertEqual(len(err.strip().splitlines()), 1, name + ": " + err)


if __name__ == "__main__":
    unittest.main()
