"""Mixed routes on one GPU: 4 ranks sharing it through MPS as 2 fake nodes x 2 ranks
(fake_nodes.py), so that each face inside a node goes by ipc and each face across the nodes by
staged MPI, its sums on the host. Each run is bitwise equal to the same 4 ranks on one node with
every face staged (the field and the residual history: the sums over ranks too), its field to
theirs with every face by ipc, and, for the decks whose field does not depend on the rank count,
to one rank's. Skipped, saying why, without unshare, a CUDA build, a GPU or MPS. Needs GRIDSIM
and MPIEXEC in the environment."""
import os
import subprocess
import sys
import tempfile
import shutil
import unittest

from fake_nodes import FakeNodes, MPIEXEC, why_not

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "regression"))
from test_golden import run_case  # noqa: E402

GRIDSIM = os.environ["GRIDSIM"]
ON_GPU = ["parallel.backend=cuda", "parallel.share_gpus=true"]
FOUR = ON_GPU + ["parallel.ranks_used=4"]
ONE_NODE = [MPIEXEC, "-np", "4", "--oversubscribe"]
# Decks whose final field is the same bits at every rank count (implicit heat's CG sums over
# the ranks, so only the 4-rank runs are compared for it).
ANY_RANKS = ("default", "jacobi2d_benchmark_blocks", "bench_jacobi3d")
SUMS_OVER_RANKS = ("bench_heat3d_implicit",)


def gpu_gap():
    """'' where this build runs on a GPU here, else why not."""
    res = subprocess.run([GRIDSIM, "info"], capture_output=True, text=True, timeout=120,
                         check=False)
    if "cuda" not in res.stdout.split("backends", 1)[-1].split("\n", 1)[0]:
        return "gridsim was built without the CUDA backend"
    if "no GPU" in res.stdout:
        return "no GPU is visible here"
    return ""


WHY_NOT = why_not() or gpu_gap()


@unittest.skipIf(WHY_NOT, WHY_NOT)
class MixedRoutesOnOneGpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gridsim_mixed_")
        cls.two = FakeNodes(cls.tmp, 2, 2)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_on(self, name, launch, tag, sets=FOUR):
        return run_case(name, 0, self.tmp, prefix=launch, tag=tag, sets=sets)

    def ipc_everywhere(self, name):
        hashes, doc = self.run_on(name, ONE_NODE, "ipc")
        if doc["routes"] != {"ipc": sum(doc["routes"].values())}:
            self.skipTest("4 ranks on one shared GPU did not all take ipc (start MPS: "
                          f"nvidia-cuda-mps-control -d): {doc['routes']}, {doc['backend_note']}")
        return hashes

    def staged_everywhere(self, name):
        hashes, doc = self.run_on(name, ONE_NODE, "staged", FOUR + ["parallel.transport=staged"])
        self.assertEqual(list(doc["routes"]), ["staged"])
        return hashes

    def mixed(self, name):
        hashes, doc = self.run_on(name, self.two.launch(4), "two_nodes")
        self.assertEqual([n["ranks"] for n in doc["nodes"]], [[0, 1], [2, 3]])
        self.assertEqual(doc["backend"], "cuda")
        self.assertEqual(sorted(doc["routes"]), ["ipc", "staged"], doc["routes"])
        return hashes

    def test_mixed_routes_equal_single_routes_and_one_rank(self):
        for name in ANY_RANKS + SUMS_OVER_RANKS:
            with self.subTest(case=name):
                ipc = self.ipc_everywhere(name)
                mixed = self.mixed(name)
                self.assertEqual(mixed, self.staged_everywhere(name),
                                 "2 nodes x 2 (ipc and staged) against staged everywhere")
                self.assertEqual(mixed["field"], ipc["field"], "against ipc everywhere")
                if name in ANY_RANKS:
                    alone, _ = self.run_on(name, [MPIEXEC, "-np", "1"], "one_rank", ON_GPU)
                    self.assertEqual(mixed["field"], alone["field"], "4 ranks against 1")


if __name__ == "__main__":
    unittest.main()
