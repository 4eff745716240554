"""Fake nodes on one machine, for the `nodes` suite: Open MPI started with a hostfile of made-up
node names and tests/nodes/fake_rsh.sh as its remote-shell agent, which runs each node's daemon
in a UTS namespace named after the node. The ranks of each fake node are one node to MPI (their
own MPI_COMM_TYPE_SHARED communicator and host name) and reach the other nodes over TCP on the
loopback (pinned there, so that the runs need no network), as ranks on different machines would. Needs `unshare` (root, or user namespaces)."""
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.join(HERE, "fake_rsh.sh")
MPIEXEC = os.environ.get("MPIEXEC", "mpirun")


def why_not():
    """'' where fake nodes can be started here, else the one-line reason why not."""
    try:
        res = subprocess.run(["unshare", "--uts", "--", "hostname", "fake-node-probe"],
                             capture_output=True, text=True, timeout=30, check=False)
    except OSError as err:
        return f"unshare cannot be run here: {err}"
    if res.returncode != 0:
        return "unshare --uts is not permitted here: " + (res.stderr.strip() or "exit status "
                                                          + str(res.returncode))
    return ""


class FakeNodes:
    """`nodes` fake nodes named node0, node1, ... with `slots` ranks each."""

    def __init__(self, tmp, nodes, slots):
        self.names = [f"node{n}" for n in range(nodes)]
        self.hostfile = os.path.join(tmp, f"hosts_{nodes}x{slots}")
        with open(self.hostfile, "w") as f:
            f.writelines(f"{name} slots={slots}\n" for name in self.names)

    def launch(self, ranks, map_by="slot"):
        """The command prefix that starts `ranks` ranks: filling node0 first (`slot`), or dealt
        out round-robin (`node`: rank r on node r % nodes)."""
        return [MPIEXEC, "--hostfile", self.hostfile, "-np", str(ranks), "--map-by", map_by,
                "--mca", "plm", "rsh", "--mca", "plm_rsh_agent", AGENT,
                "--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo"]
