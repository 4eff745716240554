"""The batch templates over two nodes: a Slurm cluster of two fake nodes started here (two slurmd,
each in UTS and mount namespaces of its own, named fake0 and fake1, with its own port; one
slurmctld; slurm_cluster.py), 2 CPUs and 2 GPU resources each. `srun --nodes=2` runs gridsim
with its ranks on both nodes, as the header and report say, and the same bits as one node;
run.sbatch with --nodes=2 completes; strong.sbatch with --nodes=2 runs each point on the fewest
nodes that hold it (1 and 2 ranks on one node, 4 on two), and the study names them. Skips, saying
why, where Slurm is missing or namespaces are not permitted. Needs GRIDSIM in the environment."""
import csv
import os
import subprocess
import unittest

from slurm_cluster import unshare_problem
from test_slurm_cluster import DECK, GRIDSIM, ROOT, SlurmJobs, field, read_json

WHY_NOT = unshare_problem()


@unittest.skipIf(WHY_NOT, WHY_NOT)
class TwoNodeTemplates(SlurmJobs):
    NODES = ["fake0", "fake1"]

    def test_srun_over_two_nodes(self):
        out = os.path.join(self.tmp, "srun2")
        report = out + ".json"
        res = self.slurm.run("srun", "--nodes=2", "--ntasks-per-node=2", GRIDSIM, "run", DECK,
                             "--set", "time.steps=20", "--set", "output.write_final=true",
                             "--set", f'output.dir="{out}"', "--report", report)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr + self.slurm.logs())
        self.assertIn("nodes           2 nodes: fake0 (ranks 0-1), fake1 (ranks 2-3)", res.stdout)
        doc = read_json(report)
        self.assertEqual([n["name"] for n in doc["nodes"]], ["fake0", "fake1"])
        self.assertEqual(doc["job"]["scheduler"], "slurm")
        # The same 4 ranks on one node (mpirun outside Slurm: a fake node has 2 CPUs).
        alone = os.path.join(self.tmp, "one_node")
        res = subprocess.run([os.environ.get("MPIEXEC", "mpirun"), "-np", "4", "--oversubscribe",
                              GRIDSIM, "run", DECK, "--quiet", "--set", "time.steps=20", "--set",
                              "output.write_final=true", "--set", f'output.dir="{alone}"'],
                             capture_output=True, text=True, timeout=300, check=False)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        a, _ = field(os.path.join(out, "snapshot_final.h5"))
        b, _ = field(os.path.join(alone, "snapshot_final.h5"))
        self.assertEqual(a.tobytes(), b.tobytes())

    def test_run_template_over_two_nodes(self):
        out = os.path.join(self.tmp, "run2")
        job, log = self.sbatch("run.sbatch", "run2", {
            "DECK": DECK, "OUT": out,
            "EXTRA": "--quiet --set time.steps=20 --set output.write_final=true"},
            "--wait", "--nodes=2", "--ntasks-per-node=2", "--cpus-per-task=1", "--gpus-per-node=2")
        self.assertEqual(self.job_state(job)[0], "COMPLETED", self.text(log))
        doc = read_json(os.path.join(out, "report-0.json"))
        self.assertEqual((len(doc["nodes"]), doc["ranks_per_node"]), (2, 2))

    def test_strong_template_places_each_point_on_the_fewest_nodes(self):
        out = os.path.join(self.tmp, "strong2")
        job, log = self.sbatch("strong.sbatch", "strong2", {
            "DECK": os.path.join(ROOT, "inputs", "scaling_cpu.toml"), "OUT": out,
            "RANKS": "1 2 4", "REPEAT": "1", "EXPECT_BACKEND": "cpu",
            "EXTRA": "--set grid.cells=[24,20,16] --set time.steps=8"},
            "--nodes=2", "--ntasks-per-node=2", "--cpus-per-task=1", "--gpus-per-node=2")
        state, _ = self.wait_for(job, lambda s, r: s in ("COMPLETED", "FAILED", "CANCELLED"))
        self.assertEqual(state, "COMPLETED", self.text(log))
        with open(os.path.join(out, "scaling.csv")) as f:
            self.assertEqual([r["nodes"] for r in csv.DictReader(f)], ["1 x 1", "1 x 2", "2 x 2"])
        study = read_json(os.path.join(out, "study.json"))
        self.assertIn("--nodes={nodes} --ntasks-per-node={per_node}", study["launcher"])


if __name__ == "__main__":
    unittest.main()
