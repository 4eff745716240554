"""A file system that fills up during a run (a small tmpfs the test mounts itself; skipped, saying
why, where it cannot mount one): at 2 and 4 ranks, with asynchronous output on and off, for
snapshots and for checkpoints, every rank ends within seconds with exit code 1, stderr holds one
line naming the file and the cause, no temporary file is left, and the files written before are
whole. Needs GRIDSIM and MPIEXEC in the environment."""
import os
import subprocess
import tempfile
import time
import unittest

import h5py

from deck_case import GRIDSIM, MPIEXEC, DeckCase

DECK = ("[grid]\ncells = [40, 40]\n[initial]\nkind = \"hotspot\"\n[time]\nsteps = 200\n"
        "[parallel]\nbackend = \"cpu\"\n")


def can_mount():
    """'' where this process can mount a tmpfs, else why not."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    with tempfile.TemporaryDirectory() as d:
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0:
            return "cannot mount a tmpfs here: " + (res.stderr.strip() or "mount failed")
        subprocess.run(["umount", d], check=False)
    return ""


WHY_NOT = can_mount()


@unittest.skipIf(WHY_NOT, WHY_NOT)
class FullDisk(DeckCase):
    DECK = DECK
    PREFIX = "gridsim_full_"

    def setUp(self):
        super().setUp()
        self.disk = os.path.join(self.tmp, "disk")
        os.makedirs(self.disk)
        self.mounted = False

    def tearDown(self):
        if self.mounted:
            subprocess.run(["umount", self.disk], check=False)
        super().tearDown()

    def mount(self, kib):
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", self.disk],
                       check=True)
        self.mounted = True

    def run_until_full(self, ranks, kib, asynchronous, *sets):
        """Runs the deck on a fresh tmpfs of `kib` KiB; returns (rc, stderr, output dir)."""
        if self.mounted:
            subprocess.run(["umount", self.disk], check=True)
        self.mount(kib)
        out = os.path.join(self.disk, "o")
        cmd = [MPIEXEC, "--quiet", "-np", str(ranks), "--oversubscribe", GRIDSIM, "run",
               self.deck, "--quiet", "--set", f'output.dir="{out}"', "--set",
               f'output.async="{"on" if asynchronous else "off"}"']
        for s in sets:
            cmd += ["--set", s]
        began = time.monotonic()
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        self.assertLess(time.monotonic() - began, 30, res.stderr)
        return res.returncode, res.stderr, out

    def assert_failed_cleanly(self, rc, stderr, out, file_pattern):
        self.assertEqual(rc, 1, stderr)
        lines = stderr.splitlines()
        self.assertEqual(len(lines), 1, stderr)
        self.assertRegex(lines[0], r"^gridsim: error: .*" + file_pattern)
        self.assertIn("No space left on device", lines[0])
        self.assertEqual([n for n in os.listdir(out) if n.endswith(".tmp")], [], os.listdir(out))

    def each_run_until_full(self, kib, setting, file_pattern, check_earlier_files):
        """At 2 and 4 ranks, async off and on, each a subTest: a run on a fresh `kib` KiB tmpfs
        fails cleanly (assert_failed_cleanly), then check_earlier_files(output directory)."""
        for ranks in (2, 4):
            for asynchronous in (False, True):
                with self.subTest(ranks=ranks, asynchronous=asynchronous):
                    rc, stderr, out = self.run_until_full(ranks, kib, asynchronous, setting)
                    self.assert_failed_cleanly(rc, stderr, out, file_pattern)
                    check_earlier_files(out)

    def test_snapshots(self):
        def whole_in_step_order(out):
            written = sorted(n for n in os.listdir(out) if n.endswith(".h5"))
            self.assertGreater(len(written), 0, os.listdir(out))
            for name in written:
                with h5py.File(os.path.join(out, name)) as f:
                    self.assertEqual(int(f.attrs["step"][0]), int(name[9:17]))
                    self.assertEqual(f["/fields/u"].shape, (40, 40))

        # A snapshot and its sidecar take about 24 KiB: the disk holds a few before it is full.
        self.each_run_until_full(128, "output.snapshot_every=5", r"snapshot_\d{8}\.h5",
                                 whole_in_step_order)

    def test_checkpoints(self):
        def restarts(out):
            path = os.path.join(out, "checkpoint.h5")
            self.assertTrue(os.path.exists(path), os.listdir(out))
            with h5py.File(path) as f:
                step = int(f.attrs["step"][0])
                self.assertEqual(step % 5, 0)
                self.assertEqual(f["/fields/u"].shape, (40, 40))
            # The earlier checkpoint is whole: a run continues from it.
            res = subprocess.run(
                [GRIDSIM, "run", self.deck, "--quiet", "--restart", path, "--set",
                 f"time.steps={step + 5}", "--set",
                 f'output.dir="{os.path.join(self.tmp, "again")}"'],
                capture_output=True, text=True, timeout=120, check=False)
            self.assertEqual(res.returncode, 0, res.stderr)

        # A checkpoint takes about 20 KiB on disk: the second finds no room beside the first.
        self.each_run_until_full(48, "output.checkpoint_every=5", r"checkpoint\.h5", restarts)


if __name__ == "__main__":
    unittest.main()
