"""A ReFrame configuration for running gridsim's checks (gridsim_checks.py): `local` runs them
on this machine with mpirun; `slurm` submits them with sbatch and starts the ranks with srun,
polling the queue with squeue (no accounting database needed). Copy it and set your site's
partitions, access options (account, GPUs) and environments; `reframe --system local` or
`--system slurm` picks one."""

site_configuration = {
    "systems": [
        {
            "name": "local",
            "descr": "this machine, ranks started by mpirun",
            "hostnames": [".*"],
            "partitions": [{"name": "default", "scheduler": "local", "launcher": "mpirun",
                            "environs": ["builtin"], "max_jobs": 1}],
        },
        {
            "name": "slurm",
            "descr": "a Slurm cluster, ranks started by srun",
            "hostnames": [".*"],
            "partitions": [{"name": "default", "scheduler": "squeue", "launcher": "srun",
                            "environs": ["builtin"], "max_jobs": 4, "access": []}],
        },
    ],
    "environments": [{"name": "builtin", "cc": "cc", "cxx": "c++"}],
}
