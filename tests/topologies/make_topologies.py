#!/usr/bin/env python3
"""Writes the synthetic hwloc XML topologies the binding tests decide on (run from anywhere;
the files land next to this script). Each machine is a list of sockets; each socket a list of
NUMA nodes; each node a CPU count and the PCI bus ids of the GPUs attached to it. GPUs listed
under `machine_gpus` hang off the machine itself: hwloc then knows no NUMA node for them (what
a kernel reporting sysfs numa_node -1 looks like)."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

MACHINES = {
    # Two sockets, one NUMA node each, two GPUs per socket.
    "two_sockets_four_gpus": dict(sockets=[[(8, ["0000:01:00.0", "0000:02:00.0"])],
                                           [(8, ["0000:81:00.0", "0000:82:00.0"])]]),
    # Two sockets of two NUMA nodes each (sub-NUMA clustering), two GPUs per NUMA node.
    "eight_gpus_two_sockets": dict(sockets=[
        [(8, ["0000:01:00.0", "0000:02:00.0"]), (8, ["0000:41:00.0", "0000:42:00.0"])],
        [(8, ["0000:81:00.0", "0000:82:00.0"]), (8, ["0000:c1:00.0", "0000:c2:00.0"])]]),
    # Every GPU on the first socket.
    "gpus_on_one_socket": dict(sockets=[[(8, ["0000:01:00.0", "0000:02:00.0", "0000:03:00.0",
                                              "0000:04:00.0"])], [(8, [])]]),
    # Two sockets, GPUs on the machine: locality unknown.
    "unknown_locality": dict(sockets=[[(8, [])], [(8, [])]],
                             machine_gpus=["0000:18:00.0", "0000:3b:00.0"]),
    # One NUMA node, GPUs reporting no node (the lent GPU hosts).
    "one_numa_node": dict(sockets=[[(16, [])]], machine_gpus=["0000:18:00.0", "0000:2a:00.0"]),
    # Two sockets and no I/O discovery at all.
    "no_pci": dict(sockets=[[(8, [])], [(8, [])]]),
}


def mask(bits):
    """hwloc's bitmap syntax: 32-bit hex words, most significant first."""
    value = sum(1 << b for b in bits)
    words = []
    while True:
        words.append(f"0x{value & 0xffffffff:08x}")
        value >>= 32
        if value == 0:
            break
    return ",".join(reversed(words))


class Writer:
    def __init__(self):
        self.lines = []
        self.gp = 0

    def gp_index(self):
        self.gp += 1
        return self.gp

    def sets(self, cpus, nodes):
        return (f'cpuset="{mask(cpus)}" complete_cpuset="{mask(cpus)}" '
                f'nodeset="{mask(nodes)}" complete_nodeset="{mask(nodes)}"')

    def open(self, depth, text):
        self.lines.append("  " * depth + f"<object {text} gp_index=\"{self.gp_index()}\">")

    def close(self, depth):
        self.lines.append("  " * depth + "</object>")

    def gpu(self, depth, bus_id):
        domain, bus = bus_id.split(":")[0], bus_id.split(":")[1]
        self.open(depth, f'type="Bridge" bridge_type="0-1" depth="0" '
                         f'bridge_pci="{domain}:[{bus}-{bus}]"')
        self.lines.append("  " * (depth + 1) + f'<object type="PCIDev" gp_index="{self.gp_index()}" '
                          f'pci_busid="{bus_id}" pci_type="0302 [10de:2335] [10de:18be] a1" '
                          'pci_link_speed="31.507692"/>')
        self.close(depth)


def machine_xml(spec):
    w = Writer()
    cpu = 0
    node = 0
    sockets = []
    for socket in spec["sockets"]:
        nodes = []
        for count, gpus in socket:
            nodes.append((list(range(cpu, cpu + count)), node, gpus))
            cpu += count
            node += 1
        sockets.append(nodes)
    all_cpus = list(range(cpu))
    all_nodes = list(range(node))
    w.lines += ['<?xml version="1.0" encoding="UTF-8"?>', '<!DOCTYPE topology SYSTEM "hwloc2.dtd">',
                '<topology version="2.0">']
    w.open(1, f'type="Machine" os_index="0" {w.sets(all_cpus, all_nodes)} '
              f'allowed_cpuset="{mask(all_cpus)}" allowed_nodeset="{mask(all_nodes)}"')
    for s, nodes in enumerate(sockets):
        cpus = [c for n in nodes for c in n[0]]
        w.open(2, f'type="Package" os_index="{s}" {w.sets(cpus, [n[1] for n in nodes])}')
        for ncpus, n, gpus in nodes:
            # Several NUMA nodes in a socket each sit in a Group, with their CPUs and GPUs.
            depth = 3
            if len(nodes) > 1:
                w.open(3, f'type="Group" {w.sets(ncpus, [n])}')
                depth = 4
            w.open(depth, f'type="NUMANode" os_index="{n}" {w.sets(ncpus, [n])} '
                          'local_memory="68719476736"')
            w.lines.append("  " * (depth + 1) + '<page_type size="4096" count="16777216"/>')
            w.close(depth)
            for c in ncpus:
                w.open(depth, f'type="Core" os_index="{c}" {w.sets([c], [n])}')
                w.lines.append("  " * (depth + 1) + f'<object type="PU" os_index="{c}" '
                               f'{w.sets([c], [n])} gp_index="{w.gp_index()}"/>')
                w.close(depth)
            for bus_id in gpus:
                w.gpu(depth, bus_id)
            if len(nodes) > 1:
                w.close(3)
        w.close(2)
    for bus_id in spec.get("machine_gpus", []):
        w.gpu(2, bus_id)
    w.close(1)
    w.lines += ['  <support name="discovery.pu"/>', '  <support name="discovery.numa"/>',
                "</topology>", ""]
    return "\n".join(w.lines)


if __name__ == "__main__":
    for name, spec in MACHINES.items():
        with open(os.path.join(HERE, name + ".xml"), "w") as f:
            f.write(machine_xml(spec))
