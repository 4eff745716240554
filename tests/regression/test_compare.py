"""`gridsim compare` on files crafted here with h5py: equal, within and outside tolerance, NaN,
shape and precision mismatch, missing dataset, a group or a dangling external link where the
dataset should be, truncated and non-HDF5 files, each with its exit
code (0 pass, 1 differ, 2 error). Needs GRIDSIM and MPIEXEC in the environment."""
import os
import shutil
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

GRIDSIM = os.environ["GRIDSIM"]
MPIEXEC = os.environ.get("MPIEXEC", "mpirun")


def make(path, u, name="u"):
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "gridsim"
        f.create_group("fields").create_dataset(name, data=u)


class Compare(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gridsim_compare_")
        rng = np.random.default_rng(5)
        self.u = rng.uniform(-1, 1, size=(6, 7, 9))
        self.ref = self.path("ref.h5")
        make(self.ref, self.u)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def compare(self, a, *args, ranks=1):
        cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", GRIDSIM, "compare", a, self.ref, *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=False)

    def test_equal_files_pass_with_zero_tolerance_on_several_ranks(self):
        make(self.path("a.h5"), self.u.copy())
        for ranks in (1, 2, 4):
            out = self.compare(self.path("a.h5"), ranks=ranks)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            self.assertIn("max |a-b| 0.000000e+00", out.stdout)

    def test_within_and_outside_tolerance(self):
        a = self.u.copy()
        a[2, 3, 4] += 1e-9
        make(self.path("a.h5"), a)
        out = self.compare(self.path("a.h5"), "--atol", "1e-8", ranks=2)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        out = self.compare(self.path("a.h5"), "--atol", "1e-10", ranks=2)
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        self.assertIn("1 of 378 points outside", out.stdout)
        # The relative tolerance scales with |b|: 1e-9 / |b| < 1e-6 here.
        out = self.compare(self.path("a.h5"), "--rtol", "1e-6")
        self.assertEqual(out.returncode, 0 if abs(self.u[2, 3, 4]) > 1e-3 else 1, out.stdout)

    def test_field_option_names_the_missing_dataset(self):
        make(self.path("other.h5"), self.u, name="v")
        out = self.compare(self.path("other.h5"), "--field", "u")
        self.assertEqual(out.returncode, 2)
        self.assertIn("other.h5: no dataset /fields/u", out.stderr)

    def test_nan_fails_whatever_the_tolerance(self):
        a = self.u.copy()
        a[0, 0, 0] = np.nan
        make(self.path("a.h5"), a)
        out = self.compare(self.path("a.h5"), "--atol", "1e30")
        self.assertEqual(out.returncode, 1)
        self.assertIn("1 non-finite", out.stdout)

    def test_errors_exit_two(self):
        make(self.path("shape.h5"), self.u[:, :, :8])
        make(self.path("single.h5"), self.u.astype(np.float32))
        make(self.path("other.h5"), self.u, name="v")
        with open(self.ref, "rb") as f:
            head = f.read(2048)
        with open(self.path("truncated.h5"), "wb") as f:
            f.write(head)
        with open(self.path("text.h5"), "w") as f:
            f.write("not hdf5\n")
        cases = [("shape.h5", "shape 6x7x8"), ("single.h5", "precision mismatch"), ("other.h5", "ref.h5: no dataset /fields/v"),
                 ("truncated.h5", "not an HDF5 file"), ("text.h5", "not an HDF5 file"), ("missing.h5", "no such file")]
        with h5py.File(self.path("group.h5"), "w") as f:
            f.create_group("fields/u")
        with h5py.File(self.path("link.h5"), "w") as f:
            f.create_group("fields")["u"] = h5py.ExternalLink("gone.h5", "/data")
        cases += [("group.h5", "group.h5: /fields/u is a group, not a dataset"),
                  ("link.h5", "link.h5: /fields/u is an external link to gone.h5:/data, which "
                              "cannot be opened")]
        for name, message in cases:
            out = self.compare(self.path(name), ranks=2)
            self.assertEqual(out.returncode, 2, f"{name}: {out.stdout}{out.stderr}")
            self.assertIn(message, out.stderr, name)
            self.assertEqual(out.stderr.count("gridsim: error:"), 1, name)


if __name__ == "__main__":
    unittest.main()
