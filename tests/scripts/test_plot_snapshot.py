"""scripts/plot_snapshot.py: the slice it draws (on arrays whose values encode their indices),
its argument checks, and the PNG it writes from a gridsim-format file crafted here."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)
import plot_snapshot as ps  # noqa: E402


def indexed(nx, ny, nz):
    """u[k][j][i] = 10000 k + 100 j + i: a plane's values name the plane."""
    k, j, i = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    return 10000.0 * k + 100.0 * j + i


class Slices(unittest.TestCase):
    def test_each_axis_cuts_at_the_nearest_grid_plane(self):
        u = indexed(5, 7, 9)  # nx 5, ny 7, nz 9
        plane, index, axes = ps.take_slice(u, 2, 0.5)  # z: 0.5 * 8 = 4
        self.assertEqual((index, axes, plane.shape), (4, (0, 1), (7, 5)))
        np.testing.assert_array_equal(plane, 40000 + 100 * np.arange(7)[:, None] + np.arange(5))
        plane, index, axes = ps.take_slice(u, 1, 0.26)  # y: 0.26 * 6 = 1.56 -> 2
        self.assertEqual((index, axes, plane.shape), (2, (0, 2), (9, 5)))
        np.testing.assert_array_equal(plane, 10000 * np.arange(9)[:, None] + 200 + np.arange(5))
        plane, index, axes = ps.take_slice(u, 0, 1.0)  # x: the last plane
        self.assertEqual((index, axes, plane.shape), (4, (1, 2), (9, 7)))
        np.testing.assert_array_equal(plane, 10000 * np.arange(9)[:, None] + 100 * np.arange(7) + 4)

    def test_a_2d_field_is_drawn_whole(self):
        u = indexed(4, 3, 1)[0]
        plane, index, axes = ps.take_slice(u, 2, 0.5)
        self.assertIsNone(index)
        self.assertEqual(axes, (0, 1))
        np.testing.assert_array_equal(plane, u)

    def test_bad_slices(self):
        for text in ("w=0.5", "z", "z=half", "z=1.5", "y=-0.1"):
            with self.assertRaises(ps.UsageError, msg=text):
                ps.parse_slice(text)
        self.assertEqual(ps.parse_slice("y=0.25"), (1, 0.25))


class CommandLine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gridsim_plot_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def make(self, name, u, fmt="gridsim"):
        path = os.path.join(self.tmp, name)
        with h5py.File(path, "w") as f:
            f.attrs["format"] = fmt
            f.attrs["problem"] = "heat"
            f.attrs["step"] = 12
            f.attrs["time"] = 0.25
            g = f.create_group("grid")
            g.attrs["spacing"] = [0.1] * u.ndim
            g.attrs["origin"] = [0.0] * u.ndim
            f.create_group("fields").create_dataset("u", data=u)
        return path

    def run_script(self, *args):
        return subprocess.run([sys.executable, os.path.join(SCRIPTS, "plot_snapshot.py"), *args],
                              capture_output=True, text=True, check=False)

    def test_writes_a_png_next_to_the_file(self):
        path = self.make("s.h5", np.sin(indexed(6, 5, 4)))
        res = self.run_script(path, "--slice", "y=0.5")
        self.assertEqual(res.returncode, 0, res.stderr)
        png = os.path.join(self.tmp, "s.png")
        self.assertEqual(res.stdout.strip(), png)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_bad_input_exits_2_with_one_line(self):
        good = self.make("g.h5", indexed(4, 4, 1)[0])
        other = self.make("o.h5", indexed(4, 4, 1)[0], fmt="other")
        text = os.path.join(self.tmp, "t.h5")
        with open(text, "w") as f:
            f.write("not hdf5")
        cases = [([other], "not a gridsim file"), ([text], "not an HDF5 file"),
                 ([good, "--field", "v"], "no field 'v'"),
                 ([os.path.join(self.tmp, "none.h5")], "no such file"),
                 ([good, "--slice", "q=1"], "--slice q=1")]
        for args, message in cases:
            res = self.run_script(*args)
            self.assertEqual(res.returncode, 2, args)
            self.assertIn(message, res.stderr)
            self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "o.png")))


if __name__ == "__main__":
    unittest.main()
