"""Asynchronous snapshots (output.async, docs/output.md): the files are the same as synchronous
ones, bit for bit, at 1, 2 and 4 ranks; a slow writer makes the loop wait and never drops or
reorders a snapshot; a disk that fills up during a background write ends every rank with one
line and exit 1, earlier files intact; SIGTERM while a write is in flight lets it finish, writes
the checkpoint and exits 3; SIGKILL leaves no file under a final name damaged. Needs GRIDSIM and
MPIEXEC in the environment."""
import json
import os
import re
import signal
import subprocess
import time
import unittest
import xml.etree.ElementTree as ET

import h5py
import numpy as np

from deck_case import GRIDSIM, MPIEXEC, DeckCase, launch


class AsyncOutput(DeckCase):
    DECK = ("[grid]\ncells = [48, 40, 36]\n[time]\nsteps = 60\n[parallel]\nbackend = \"cpu\"\n"
            "[output]\nsnapshot_every = 10\nwrite_final = true\ncheckpoint_every = 30\n"
            "precision = \"float\"\n")
    PREFIX = "gridsim_async_"

    def command(self, ranks, out, *args, quiet=True):
        return [*launch(ranks), GRIDSIM, "run", self.deck, *(["--quiet"] if quiet else []),
                "--set", f'output.dir="{out}"', *args]

    def run_ok(self, ranks, out, *args, env=None):
        report = out + ".json"
        res = subprocess.run(self.command(ranks, out, "--report", report, *args),
                             capture_output=True, text=True, timeout=300, check=False,
                             env={**os.environ, **(env or {})})
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        with open(report) as f:
            return json.load(f), res.stdout

    def assert_same_files(self, a, b):
        """Every file of a is in b with the same /fields, attributes and XDMF text; only the
        write date and the deck's output.async, output.dir and output.report may differ."""
        self.assertEqual(sorted(os.listdir(a)), sorted(os.listdir(b)))
        for name in sorted(os.listdir(a)):
            pa, pb = os.path.join(a, name), os.path.join(b, name)
            if name.endswith(".xmf"):
                with open(pa) as fa, open(pb) as fb:
                    self.assertEqual(fa.read(), fb.read(), name)
                continue
            with h5py.File(pa) as fa, h5py.File(pb) as fb:
                ua, ub = fa["/fields/u"][...], fb["/fields/u"][...]
                self.assertEqual(ua.dtype, ub.dtype, name)
                self.assertEqual(ua.tobytes(), ub.tobytes(), name)
                for group in ("/", "/grid", "/provenance"):
                    attrs_a, attrs_b = dict(fa[group].attrs), dict(fb[group].attrs)
                    self.assertEqual(sorted(attrs_a), sorted(attrs_b), name + group)
                    for key in attrs_a:
                        va, vb = attrs_a[key], attrs_b[key]
                        if key == "date":
                            continue
                        if key == "deck":  # the runs differ in these three keys only
                            va, vb = (re.sub(r"(?m)^(async|dir|report) = .*\n", "",
                                             v.decode() if isinstance(v, bytes) else str(v))
                                      for v in (va, vb))
                            self.assertIn("snapshot_every = 10", va)
                        np.testing.assert_array_equal(va, vb, err_msg=f"{name}{group} {key}")
                if "restart_residual_history" in fa:
                    np.testing.assert_array_equal(fa["/restart_residual_history"][...],
                                                  fb["/restart_residual_history"][...])

    def test_async_files_equal_synchronous_ones(self):
        for ranks in (1, 2, 4):
            with self.subTest(ranks=ranks):
                sync = os.path.join(self.tmp, f"sync{ranks}")
                doc_s, _ = self.run_ok(ranks, sync, "--set", 'output.async="off"')
                back = os.path.join(self.tmp, f"async{ranks}")
                doc_a, _ = self.run_ok(ranks, back, "--set", 'output.async="on"')
                self.assertFalse(doc_s["output"]["async"])
                self.assertTrue(doc_a["output"]["async"])
                self.assertEqual(doc_a["output"]["files"], 9)  # 6 snapshots, final, 2 checkpoints
                self.assert_same_files(sync, back)

    def test_a_slow_writer_makes_the_loop_wait_and_keeps_every_snapshot(self):
        # One staging buffer and a writer slowed to 300 ms per file: each snapshot after the
        # first waits for the one before; none is dropped or reordered.
        out = os.path.join(self.tmp, "slow")
        doc, _ = self.run_ok(1, out, "--set", 'output.async="on"', "--set",
                             "output.async_buffers=1", "--set", "output.checkpoint_every=0",
                             "--set", "output.write_final=false",
                             env={"GRIDSIM_TEST_WRITE_DELAY_MS": "300"})
        self.assertGreater(doc["output"]["waited_s"], 5 * 0.3 * 0.9)
        self.assertGreater(doc["output"]["writing_s"], 6 * 0.3 * 0.9)
        series = ET.parse(os.path.join(out, "snapshot.xmf"))
        items = [e.text for e in series.iter("DataItem") if e.get("Format") == "HDF"]
        self.assertEqual(items, [f"snapshot_{s:08d}.h5:/fields/u" for s in range(10, 61, 10)])
        for s in range(10, 61, 10):
            with h5py.File(os.path.join(out, f"snapshot_{s:08d}.h5")) as f:
                self.assertEqual(int(f.attrs["step"][0]), s)

    def test_full_disk_during_a_background_write(self):
        # Float snapshots of 64^3 (1 MiB) fit under a 1500 KiB file-size limit per rank; the
        # double checkpoint does not, and the fourth snapshot is still being written then.
        for ranks in (1, 4):
            with self.subTest(ranks=ranks):
                out = os.path.join(self.tmp, f"full{ranks}")
                inner = " ".join(["exec", GRIDSIM, "run", self.deck, "--quiet", "--set",
                                  f"'output.dir=\"{out}\"'", "--set", "grid.cells=[64,64,64]",
                                  "--set", "output.checkpoint_every=0", "--set",
                                  "output.write_final=false", "--set", "'output.async=\"on\"'",
                                  "--set", "output.precision=\"'double'\"", "--set",
                                  "time.steps=40"])
                cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", "--mca", "btl", "self,tcp",
                       "bash", "-c", f"trap '' XFSZ; ulimit -f 1500; {inner}"]
                began = time.monotonic()
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                                     check=False)
                self.assertLess(time.monotonic() - began, 60)
                self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
                errors = [l for l in res.stderr.splitlines() if "error:" in l]
                self.assertEqual(len(errors), 1, res.stderr)
                self.assertTrue(errors[0].startswith("gridsim: error: "), res.stderr)
                self.assertIn("File too large", errors[0])
                self.assertNotIn("MPI_ABORT", res.stderr)
                self.assertEqual([n for n in os.listdir(out) if n.endswith(".tmp")], [])

    def test_bench_io_measures_a_directory_and_leaves_nothing(self):
        probe = os.path.join(self.tmp, "probe")
        os.makedirs(probe)
        res = subprocess.run([MPIEXEC, "-np", "2", "--oversubscribe", GRIDSIM, "bench", "--io",
                              probe, "--size-mib", "8", "--reps", "2"], capture_output=True,
                             text=True, timeout=120, check=False)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        m = re.search(r"2 rank\(s\), 8 MiB each.*\n.*file write ceiling \(all ranks\) +([0-9.]+) MB/s"
                      r"\n +one shared file, rank 0 fsyncs +([0-9.]+) MB/s", res.stdout)
        self.assertIsNotNone(m, res.stdout)
        self.assertGreater(float(m.group(1)), 0.0)
        self.assertGreater(float(m.group(2)), 0.0)
        self.assertEqual(os.listdir(probe), [])
        res = subprocess.run([GRIDSIM, "bench", "--io", os.path.join(self.tmp, "missing")],
                             capture_output=True, text=True, timeout=120, check=False)
        self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
        self.assertEqual(len(res.stderr.splitlines()), 1, res.stderr)
        self.assertIn("cannot create", res.stderr)

    def test_a_blow_up_keeps_the_snapshots_written_before_it(self):
        # Float, 3e38: the stencil overflows at once; the check at step 4 ends every rank. The
        # snapshot of step 2 was still waiting for its sync and rename in the background.
        for ranks in (1, 4):
            with self.subTest(ranks=ranks):
                out = os.path.join(self.tmp, f"blow{ranks}")
                res = subprocess.run(
                    self.command(ranks, out, "--set", 'output.async="on"', "--set",
                                 "problem.precision=\"float\"", "--set",
                                 "initial.amplitude=3e38", "--set", "output.check_every=4",
                                 "--set", "output.snapshot_every=2", "--set",
                                 "output.checkpoint_every=0", "--set",
                                 "output.write_final=false"),
                    capture_output=True, text=True, timeout=120, check=False)
                self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
                self.assertIn("blew up", res.stderr)
                with h5py.File(os.path.join(out, "snapshot_00000002.h5")) as f:
                    self.assertEqual(int(f.attrs["step"][0]), 2)
                self.assertTrue(os.path.exists(os.path.join(out, "snapshot_00000002.xmf")))
                self.assertEqual([n for n in os.listdir(out) if n.endswith(".tmp")], [])

    def start(self, out, *args, env=None):
        proc = subprocess.Popen(self.command(1, out, "--set", "time.steps=1000000", "--set",
                                             "output.progress_every=5", *args, quiet=False),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, **(env or {})})
        self.wait_for_step(proc, 12)  # past the first snapshot (step 10)
        return proc

    def wait_for_step(self, proc, step):
        for line in proc.stdout:
            m = re.match(r"step (\d+)/", line)
            if m and int(m.group(1)) >= step:
                return
        self.fail(f"no progress past step {step}: {proc.stderr.read()}")

    def test_sigterm_while_a_write_is_in_flight(self):
        # The writer takes 3 s per snapshot: the signal comes while step 10's is in flight.
        out = os.path.join(self.tmp, "term")
        proc = self.start(out, "--set", 'output.async="on"', "--set",
                          "output.checkpoint_every=0", "--set", "output.write_final=false",
                          env={"GRIDSIM_TEST_WRITE_DELAY_MS": "3000"})
        self.assertFalse(os.path.exists(os.path.join(out, "snapshot_00000010.h5")))
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 3, stdout + stderr)
        with h5py.File(os.path.join(out, "snapshot_00000010.h5")) as f:
            self.assertEqual(int(f.attrs["step"][0]), 10)
        with h5py.File(os.path.join(out, "checkpoint.h5")) as f:
            stopped = int(f.attrs["step"][0])
        self.assertIn(f"stopped at step {stopped}", stdout)
        self.assertGreaterEqual(stopped, 12)

    def test_sigkill_while_a_write_is_in_flight(self):
        out = os.path.join(self.tmp, "kill")
        proc = self.start(out, "--set", 'output.async="on"', "--set", "output.snapshot_every=5",
                          "--set", "output.checkpoint_every=0", "--set", "output.write_final=false")
        self.wait_for_step(proc, 40)
        proc.kill()
        proc.communicate(timeout=60)
        finals = [n for n in os.listdir(out) if n.endswith(".h5")]
        self.assertGreater(len(finals), 0)
        for name in finals:  # whatever was under a final name opens whole
            with h5py.File(os.path.join(out, name)) as f:
                self.assertEqual(f["/fields/u"].shape, (36, 40, 48))
                self.assertTrue(np.isfinite(f["/fields/u"][...]).all())


if __name__ == "__main__":
    unittest.main()
