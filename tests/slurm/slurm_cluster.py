"""A one-node Slurm cluster on this machine, for the tests of the batch templates.

OneNodeSlurm().start() runs munged (a key made here, its own socket), slurmctld and slurmd on
localhost with everything under one temporary directory (configuration, state, spool, logs),
on two free ports, and waits until `sinfo` shows the node idle; stop() shuts them down and
removes the directory, and runs at interpreter exit too, so a failing test leaves no daemon
behind. The node offers 4 CPUs whatever the machine has (SlurmdParameters=config_overrides),
4 GPUs as a generic resource whose device files are plain files (so the templates'
--gpus-per-node lines are accepted; CUDA sees no device and gridsim runs on the
CPU), PMIx as the MPI plugin, and no cgroups (proctrack/linuxproc, task/none).

OneNodeSlurm(nodes=["fake0", "fake1"]) makes a cluster of fake nodes instead: one slurmd per
node, each in a UTS namespace named after its node (so Slurm, its tasks and MPI take it for
another machine) and a mount namespace whose PMIx directory is its own (the nodes share /tmp),
on ports of their own, the CPUs and GPUs split between them; one slurmctld.
"""
import atexit
import os
import shutil
import socket
import subprocess
import tempfile
import time

PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "sinfo", "scontrol", "scancel")
CPUS = 4


def missing_programs():
    """The Slurm and munge programs this machine lacks (Debian: slurm-wlm, munge)."""
    found = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin" + os.pathsep + "/sbin"
    return [p for p in PROGRAMS if shutil.which(p, path=found) is None]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unshare_problem():
    """'' where a process can take a UTS and a mount namespace of its own here, else why not."""
    res = subprocess.run(["unshare", "--uts", "--mount", "--", "hostname", "fake-probe"],
                         capture_output=True, text=True, timeout=30, check=False)
    return "" if res.returncode == 0 else "unshare --uts --mount is not permitted here: " + (
        res.stderr.strip() or f"exit status {res.returncode}")


class OneNodeSlurm:
    def __init__(self, nodes=None):
        self.dir = None
        self.env = None
        self.fake = nodes is not None
        self.host = socket.gethostname().split(".")[0]  # the controller's
        self.nodes = nodes or [self.host]
        self.node = self.nodes[0]

    def _path(self, *parts):
        return os.path.join(self.dir, *parts)

    def _write(self, name, text):
        with open(self._path(name), "w") as f:
            f.write(text)

    def _configure(self):
        for sub in ("state", "spool", "log", "munge", "dev", "pmix"):
            os.makedirs(self._path(sub))
        for node in self.nodes:
            os.makedirs(self._path("spool", node))
            os.makedirs(self._path("pmix", node))
        with open(self._path("munge", "munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(self._path("munge", "munge.key"), 0o600)
        for i in range(4):
            open(self._path("dev", f"gpu{i}"), "w").close()
        d = self.dir
        per = CPUS // len(self.nodes)  # CPUs and GPUs of each node
        self._write("gres.conf", "AutoDetect=off\n" + "".join(
            f"NodeName={n} Name=gpu File={d}/dev/gpu[0-{per - 1}]\n" for n in self.nodes))
        # The PMIx plugin's client directories: one per node (a bind mount in its namespace).
        self._write("mpi.conf", f"PMIxCliTmpDirBase={d}/pmix/base\n")
        os.makedirs(self._path("pmix", "base"))
        ports = [free_port() for _ in self.nodes]
        node_lines = "".join(
            f"NodeName={n} NodeAddr=127.0.0.1 Port={p} CPUs={per} Gres=gpu:{per} State=UNKNOWN\n"
            for n, p in zip(self.nodes, ports))
        self._write("slurm.conf", f"""ClusterName=gridsimtest
SlurmctldHost={self.host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={ports[0]}
AuthType=auth/munge
AuthInfo=socket={d}/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd-%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=pmix
GresTypes=gpu
MinJobAge=600
{node_lines}PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
""")

    def start(self, timeout=60):
        self.dir = tempfile.mkdtemp(prefix="gridsim_slurm_")
        atexit.register(self.stop)
        self._configure()
        self.env = dict(os.environ, SLURM_CONF=self._path("slurm.conf"),
                        PATH=os.environ.get("PATH", "") + os.pathsep + "/usr/sbin")
        # Root runs the daemons in CI; munged refuses that unless forced.
        subprocess.run(["munged", "--force", f"--key-file={self._path('munge', 'munge.key')}",
                        f"--socket={self._path('munge', 'munge.socket')}",
                        f"--pid-file={self._path('munge', 'munged.pid')}",
                        f"--log-file={self._path('munge', 'munged.log')}",
                        f"--seed-file={self._path('munge', 'munged.seed')}"],
                       env=self.env, check=True, capture_output=True, timeout=30)
        conf = self._path("slurm.conf")
        subprocess.run(["slurmctld", "-c", "-f", conf], env=self.env, check=True, capture_output=True, timeout=30)
        for node in self.nodes:
            slurmd = ["slurmd", "-f", conf]
            if self.fake:
                pmix = self._path("pmix")
                slurmd = ["unshare", "--uts", "--mount", "--", "sh", "-c",
                          f'hostname {node} && mount --bind {pmix}/{node} {pmix}/base && exec "$@"',
                          "slurmd", *slurmd]
            subprocess.run(slurmd, env=self.env, check=True, capture_output=True, timeout=30)
        deadline = time.time() + timeout
        while time.time() < deadline:
            state = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=self.env, capture_output=True,
                                   text=True, check=False, timeout=30).stdout.split()
            if state == ["idle"] * len(self.nodes):
                return self
            time.sleep(0.5)
        raise RuntimeError(f"the Slurm node never became idle (last state '{state}'):\n" + self.logs())

    def logs(self):
        out = []
        for name in ["slurmctld.log"] + [f"slurmd-{n}.log" for n in self.nodes]:
            path = self._path("log", name)
            if os.path.exists(path):
                with open(path) as f:
                    out.append(f"--- {name}\n" + "".join(f.readlines()[-20:]))
        return "\n".join(out)

    def stop(self):
        if self.dir is None:
            return
        subprocess.run(["scontrol", "shutdown"], env=self.env, capture_output=True, timeout=30, check=False)
        pidfiles = [f"slurmd-{n}.pid" for n in self.nodes] + ["slurmctld.pid", os.path.join("munge", "munged.pid")]
        for pidfile in pidfiles:
            self._kill(self._path(pidfile))
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    @staticmethod
    def _kill(pidfile, wait=10.0):
        """Ends the daemon named in pidfile (SIGTERM, then SIGKILL after `wait` s)."""
        try:
            with open(pidfile) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return
        for sig, grace in ((15, wait), (9, 1.0)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return
            deadline = time.time() + grace
            while time.time() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    return
                time.sleep(0.1)

    def run(self, *cmd, timeout=300, **kw):
        return subprocess.run(list(cmd), env={**self.env, **kw.pop("env", {})}, capture_output=True, text=True,
                              timeout=timeout, check=False, **kw)
