"""Runs over fake nodes (fake_nodes.py; skipped, saying why, where `unshare` is not permitted):
every golden deck at 4 ranks over 2 nodes and at 6 over 3, bitwise equal to the same ranks on one
node; a checkpoint written over 2 nodes restarted over 3 and on 1 node, bitwise equal to the run
without a restart; a node whose output directory is full, and a rank killed on one node, ending
every rank; `gridsim info`, the header and the report naming the nodes, also where MPI's view of
which ranks share a node differs between ranks. Needs GRIDSIM and
MPIEXEC in the environment."""
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import h5py
import numpy as np

from fake_nodes import FakeNodes, MPIEXEC, why_not

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "regression"))
from test_golden import CASES, GOLDEN, INPUTS, run_case  # noqa: E402

GRIDSIM = os.environ["GRIDSIM"]
WHY_NOT = why_not()


def one_node(ranks):
    return [MPIEXEC, "-np", str(ranks), "--oversubscribe"]


@unittest.skipIf(WHY_NOT, WHY_NOT)
class FakeNodeRuns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gridsim_nodes_")
        cls.two = FakeNodes(cls.tmp, 2, 2)
        cls.three = FakeNodes(cls.tmp, 3, 2)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def gridsim(self, launch, *args, timeout=600, env=None):
        res = subprocess.run([*launch, GRIDSIM, *args], capture_output=True, text=True,
                             timeout=timeout, check=False, env=env)
        return res

    def run_case(self, name, launch, tag):
        return run_case(name, 0, self.tmp, prefix=launch, tag=tag)

    def test_golden_decks_over_two_and_three_nodes_equal_one_node(self):
        with open(GOLDEN) as f:
            golden = json.load(f)["runs"]
        for name in CASES:
            with self.subTest(case=name):
                two, doc = self.run_case(name, self.two.launch(4), "2x2")
                self.assertEqual([n["ranks"] for n in doc["nodes"]], [[0, 1], [2, 3]])
                self.assertEqual(two, golden[name]["4"], "4 ranks over 2 nodes against one node")
                three, doc = self.run_case(name, self.three.launch(6), "3x2")
                self.assertEqual(doc["ranks_per_node"], 2)
                alone, _ = self.run_case(name, one_node(6), "1x6")
                self.assertEqual(three, alone, "6 ranks over 3 nodes against one node")

    def test_a_round_robin_launcher_gives_the_nodes_boxes_and_the_same_bits(self):
        # Ranks dealt out node by node (0 and 2 on node0): the nodes take boxes of blocks in
        # another order than the launcher's, and every sum over the ranks still goes in the
        # order of the blocks, so the runs are the one-node runs' bits, the CG's too.
        with open(GOLDEN) as f:
            golden = json.load(f)["runs"]
        reordered = 0
        for name in ("default", "bench_heat3d", "bench_heat3d_implicit", "bench_jacobi3d",
                     "jacobi2d_benchmark_blocks"):
            with self.subTest(case=name):
                hashes, doc = self.run_case(name, self.two.launch(4, "node"), "dealt")
                self.assertEqual([n["world_ranks"] for n in doc["nodes"]], [[0, 2], [1, 3]])
                # The run's ranks follow the blocks: the launcher's numbers where no box is taken.
                boxes = doc["node_tile"] != [0, 0, 0]
                self.assertEqual([n["ranks"] for n in doc["nodes"]],
                                 [[0, 1], [2, 3]] if boxes else [[0, 2], [1, 3]])
                self.assertEqual(hashes, golden[name]["4"])
                reordered += boxes
        self.assertGreater(reordered, 0, "no run took boxes of blocks: the test proves nothing")

    def test_a_study_over_nodes_names_them_and_the_model_goes_further(self):
        scaling = os.path.join(HERE, "..", "..", "scripts", "scaling.py")
        out = os.path.join(self.tmp, "study")
        launcher = " ".join(self.two.launch(1)).replace("-np 1", "-np {n}")
        res = subprocess.run([sys.executable, scaling, "run", "strong", "--deck",
                              os.path.join(INPUTS, "scaling_cpu.toml"), "--ranks", "1", "2", "4",
                              "--launcher", launcher, "--out", out, "--gridsim", GRIDSIM,
                              "--set", "grid.cells=[24,20,16]", "--set", "time.steps=8"],
                             capture_output=True, text=True, timeout=600, check=False)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        res = subprocess.run([sys.executable, scaling, "report", out], capture_output=True,
                             text=True, timeout=300, check=False)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        with open(os.path.join(out, "scaling.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([r["nodes"] for r in rows], ["1 x 1", "1 x 2", "2 x 2"])
        res = subprocess.run([sys.executable, scaling, "model", out, "--predict", "8", "--nodes",
                              "1", "2", "4", "--gpus-per-node", "2", "--gridsim", GRIDSIM],
                             capture_output=True, text=True, timeout=300, check=False)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("A model, not a measurement: 2 GPUs per node", res.stdout)
        with open(os.path.join(out, "nodes_model.csv")) as f:
            model = list(csv.DictReader(f))
        self.assertEqual([(r["nodes"], r["ranks"]) for r in model], [("1", "2"), ("2", "4"),
                                                                    ("4", "8")])
        self.assertTrue(all(float(r["modelled_s_per_step"]) > 0 for r in model))

    def test_checkpoint_over_two_nodes_restarts_over_three_and_on_one(self):
        deck = os.path.join(INPUTS, "default.toml")
        base = ["--quiet", "--set", "parallel.backend=cpu", "--set", "output.write_final=true"]
        ckpt_dir = os.path.join(self.tmp, "ckpt")
        res = self.gridsim(self.two.launch(4), "run", deck, *base, "--set", "time.steps=20",
                           "--set", "output.checkpoint_every=20",
                           "--set", f'output.dir="{ckpt_dir}"')
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        ckpt = os.path.join(ckpt_dir, "checkpoint.h5")
        finals = {}
        for tag, launch in (("straight", one_node(1)), ("three_nodes", self.three.launch(6)),
                            ("one_node", one_node(2))):
            out = os.path.join(self.tmp, "restart_" + tag)
            restart = [] if tag == "straight" else ["--restart", ckpt]
            res = self.gridsim(launch, "run", deck, *base, "--set", "time.steps=40",
                               "--set", f'output.dir="{out}"', *restart)
            self.assertEqual(res.returncode, 0, tag + "\n" + res.stdout + res.stderr)
            with h5py.File(os.path.join(out, "snapshot_final.h5"), "r") as f:
                finals[tag] = np.array(f["fields/u"])
        for tag in ("three_nodes", "one_node"):
            self.assertTrue(np.array_equal(finals[tag], finals["straight"]), tag)

    def test_full_output_directory_on_one_node_ends_every_rank(self):
        out = os.path.join(self.tmp, "full")
        os.makedirs(out)
        env = {**os.environ, "FAKE_NODE_FULL": f"node1:{out}"}
        began = time.monotonic()
        res = self.gridsim(self.two.launch(4), "run", os.path.join(INPUTS, "default.toml"),
                           "--quiet", "--set", "parallel.backend=cpu", "--set", "time.steps=4",
                           "--set", "output.checkpoint_every=2", "--set",
                           "grid.cells=[96,96,96]", "--set", f'output.dir="{out}"',
                           timeout=300, env=env)
        self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
        self.assertLess(time.monotonic() - began, 120)
        errors = [ln for ln in res.stderr.splitlines() if ln.startswith("gridsim")]
        self.assertEqual(len(errors), 1, res.stderr)
        self.assertNotIn("MPI_ABORT", res.stderr)
        self.assertEqual(os.listdir(out), [])  # nothing half-written left behind

    def test_a_rank_killed_on_one_node_ends_every_rank(self):
        out = os.path.join(self.tmp, "kill")
        tag = f"kill-{os.getpid()}"
        proc = subprocess.Popen(
            [*self.two.launch(4), GRIDSIM, "run", os.path.join(INPUTS, "default.toml"),
             "--set", "parallel.backend=cpu", "--set", "output.progress_every=1",
             "--set", "grid.cells=[120,120,120]", "--set", "time.steps=100000",
             "--set", f'output.dir="{out}"'],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "FAKE_NODE_TAG": tag})
        try:
            for line in proc.stdout:  # the ranks are stepping
                if re.match(r"step \d+/", line):
                    break
            ranks = rank_pids(tag)
            self.assertEqual(sorted(ranks), [0, 1, 2, 3], ranks)
            os.kill(ranks[3], signal.SIGKILL)  # on node1
            killed = time.monotonic()
            proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        self.assertNotEqual(proc.returncode, 0)
        self.assertLess(time.monotonic() - killed, 30)  # every other rank ended too
        self.assertEqual(rank_pids(tag), {}, "ranks left running")

    def test_info_header_and_report_name_the_nodes(self):
        res = self.gridsim(self.three.launch(6), "info")
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("nodes         3 nodes: node0 (ranks 0-1), node1 (ranks 2-3), "
                      "node2 (ranks 4-5)", res.stdout)
        for r in range(6):
            self.assertRegex(res.stdout, rf"rank {r} +host node{r // 2},")
        res = self.gridsim(self.two.launch(4), "bench", "--size-mib", "4", "--reps", "2")
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertRegex(res.stdout, r"ping-pong to another node \(rank 2\), 8 B +[0-9.]+ us")
        self.assertRegex(res.stdout, r"ping-pong to another node \(rank 2\), 8 MiB +[0-9.]+ GB/s")
        report = os.path.join(self.tmp, "named.json")
        res = self.gridsim(self.two.launch(4), "run", os.path.join(INPUTS, "default.toml"),
                           "--set", "parallel.backend=cpu", "--set", "time.steps=2",
                           "--report", report, "--set",
                           f'output.dir="{os.path.join(self.tmp, "named")}"')
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("nodes           2 nodes: node0 (ranks 0-1), node1 (ranks 2-3)", res.stdout)
        with open(report) as f:
            doc = json.load(f)
        self.assertEqual(doc["nodes"], [{"name": "node0", "ranks": [0, 1], "world_ranks": [0, 1]},
                                        {"name": "node1", "ranks": [2, 3], "world_ranks": [2, 3]}])
        self.assertEqual([p["host"] for p in doc["placement"]], ["node0"] * 2 + ["node1"] * 2)
        # A process grid the deck fixes runs as given, and the header says what it costs here.
        res = self.gridsim(self.two.launch(4), "run", os.path.join(INPUTS, "default.toml"),
                           "--set", "parallel.backend=cpu", "--set", "time.steps=2", "--set",
                           "parallel.process_grid=[4,1,1]", "--set",
                           f'output.dir="{os.path.join(self.tmp, "fixed")}"')
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("ranks           4 on process grid 4x1x1 (parallel.process_grid)", res.stdout)
        self.assertRegex(res.stdout, r"note            the process grid the deck gives, 4x1x1, "
                                     r"models [0-9.]+ us per sweep on its busiest rank on these "
                                     r"nodes, against [0-9.]+ us for 1x2x2")

    def test_locality_that_differs_between_ranks_still_gives_the_nodes(self):
        # Under PMIx's hash store Open MPI's shared-memory groups over fake nodes differ from
        # rank to rank (rank 0 counts rank 1 on its node, rank 1 counts itself alone): the node
        # map must not wait on such a group, and the host names give the nodes.
        env = {**os.environ, "PMIX_MCA_gds": "hash"}
        res = self.gridsim(self.two.launch(4), "run", os.path.join(INPUTS, "default.toml"),
                           "--set", "parallel.backend=cpu", "--set", "time.steps=2", "--set",
                           f'output.dir="{os.path.join(self.tmp, "hash")}"', timeout=120, env=env)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("nodes           2 nodes: node0 (ranks 0-1), node1 (ranks 2-3)", res.stdout)


def environ(pid):
    """The environment of process `pid` ({} where it is gone or not ours to read)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            entries = f.read().split(b"\0")
    except OSError:
        return {}
    return dict(e.decode(errors="replace").split("=", 1) for e in entries if b"=" in e)


def rank_pids(tag):
    """{world rank: PID} of the gridsim processes started with FAKE_NODE_TAG=tag."""
    out = subprocess.run(["pgrep", "-x", "gridsim"], capture_output=True, text=True,
                         check=False).stdout.split()
    ranks = {}
    for pid in map(int, out):
        env = environ(pid)
        if env.get("FAKE_NODE_TAG") == tag and "OMPI_COMM_WORLD_RANK" in env:
            ranks[int(env["OMPI_COMM_WORLD_RANK"])] = pid
    return ranks


if __name__ == "__main__":
    unittest.main()
