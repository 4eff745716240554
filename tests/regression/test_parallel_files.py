"""Files on parallel file systems (docs/output.md): output.mpi_hints are recorded in every file's
/provenance; the batch job's id and step (from the scheduler's environment; Flux only in the unit test: Open MPI's
launcher takes a Flux job's variables as its own) are in the report
and the files, with the report's schema_version; and a failure on a non-zero rank after its part
of a checkpoint is written, before the rename, leaves the previous checkpoint whole, no temporary
file, and ends every rank with one line. Needs GRIDSIM and MPIEXEC in the environment."""
import json
import os
import subprocess
import unittest

import h5py

from deck_case import GRIDSIM, MPIEXEC, DeckCase

DECK = ("[grid]\ncells = [40, 24]\n[time]\nsteps = 4\n[parallel]\nbackend = \"cpu\"\n"
        "[output]\nwrite_final = true\ncheckpoint_every = 2\n"
        "[output.mpi_hints]\nromio_cb_write = \"enable\"\ncb_buffer_size = 1048576\n")
SCHEDULERS = ("SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID",
              "PBS_JOBID", "LSB_JOBID", "LSB_JOBINDEX", "FLUX_JOB_ID")


class ParallelFiles(DeckCase):
    DECK = DECK
    PREFIX = "gridsim_pfs_"

    def run_gridsim(self, ranks, env, *sets):
        clean = {k: v for k, v in os.environ.items() if k not in SCHEDULERS}
        clean.update(env)
        cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", GRIDSIM, "run", self.deck,
               "--quiet", "--report", f"{self.tmp}/report.json",
               "--set", f'output.dir="{self.tmp}/out"', *sets]
        return subprocess.run(cmd, capture_output=True, text=True, env=clean, timeout=300,
                              check=False)

    def test_hints_and_job_in_files_and_report(self):
        jobs = [({"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "3"}, ("slurm", "4242", "3")),
                ({"SLURM_JOB_ID": "9", "SLURM_ARRAY_JOB_ID": "100", "SLURM_ARRAY_TASK_ID": "7",
                  "SLURM_STEP_ID": "0"}, ("slurm", "100_7", "0")),
                ({"PBS_JOBID": "31.pbs01"}, ("pbs", "31.pbs01", "")),
                ({"LSB_JOBID": "55", "LSB_JOBINDEX": "2"}, ("lsf", "55_2", "")),
                ({}, ("", "", ""))]
        for env, (scheduler, job_id, step) in jobs:
            with self.subTest(env=env):
                res = self.run_gridsim(2, env)
                self.assertEqual(res.returncode, 0, res.stderr)
                with open(f"{self.tmp}/report.json") as f:
                    doc = json.load(f)
                self.assertEqual(doc["schema_version"], 1)
                self.assertEqual(doc["job"], {"scheduler": scheduler, "id": job_id, "step": step})
                self.assertEqual(doc["config"]["output"]["mpi_hints"],
                                 {"romio_cb_write": "enable", "cb_buffer_size": 1048576})
                for name in ("snapshot_final.h5", "checkpoint.h5"):
                    with h5py.File(f"{self.tmp}/out/{name}", "r") as h5:
                        prov = h5["provenance"].attrs
                        self.assertEqual(prov["mpi_hints"].decode(),
                                         "romio_cb_write=enable, cb_buffer_size=1048576")
                        self.assertEqual(prov["job_scheduler"].decode(), scheduler)
                        self.assertEqual(prov["job_id"].decode(), job_id)
                        self.assertEqual(prov["job_step"].decode(), step)

    def test_failure_before_rename_keeps_previous_checkpoint(self):
        for ranks in (2, 4):
            with self.subTest(ranks=ranks):
                res = self.run_gridsim(ranks, {})
                self.assertEqual(res.returncode, 0, res.stderr)
                checkpoint = f"{self.tmp}/out/checkpoint.h5"
                with open(checkpoint, "rb") as f:
                    before = f.read()
                # The rerun's first checkpoint (step 2) fails on the last rank after its write.
                res = self.run_gridsim(ranks, {"GRIDSIM_TEST_FAIL_SYNC_RANK": str(ranks - 1)},
                                       "--set", "output.overwrite=true")
                self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
                errors = [ln for ln in res.stderr.splitlines() if "error" in ln]
                self.assertEqual(len(errors), 1, res.stderr)
                self.assertIn(f"cannot sync {checkpoint}.tmp on rank {ranks - 1}", errors[0])
                self.assertIn(f"{checkpoint} left as it was", errors[0])
                self.assertNotIn("MPI_ABORT", res.stderr)
                with open(checkpoint, "rb") as f:
                    self.assertEqual(f.read(), before)
                with h5py.File(checkpoint, "r") as h5:
                    self.assertEqual(int(h5.attrs["step"][0]), 4)
                self.assertFalse(os.path.exists(checkpoint + ".tmp"))


if __name__ == "__main__":
    unittest.main()
