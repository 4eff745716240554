#!/usr/bin/env python3
"""shared_file_probe.py DIR MIB: how fast DIR's file system takes a file written by several
processes, against a file each (what separates a snapshot's write rate from the per-rank
`gridsim bench --io` ceiling). Each case writes MIB MiB in all, in 16 MiB pwrite()s, and is
timed until the data is on disk; twice each:
  - N processes, a file each, each fsync()s its own;
  - N processes, one file (each its slice), then one fsync() (as a snapshot's rank 0 does);
  - N processes, one file, each flushing its own slice (sync_file_range, waiting), then one fsync.
Standard library only (sync_file_range through ctypes, Linux)."""
import ctypes
import multiprocessing as mp
import os
import sys
import time

LIBC = ctypes.CDLL("libc.so.6", use_errno=True)
WAIT_BEFORE, WRITE, WAIT_AFTER = 1, 2, 4
BLOCK = 16 << 20


def flush_range(fd, offset, nbytes):
    if LIBC.sync_file_range(fd, ctypes.c_longlong(offset), ctypes.c_longlong(nbytes),
                            ctypes.c_uint(WAIT_BEFORE | WRITE | WAIT_AFTER)) != 0:
        raise OSError(ctypes.get_errno(), "sync_file_range")


def write_slice(path, lo, hi, how, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    for off in range(lo, hi, BLOCK):
        os.pwrite(fd, data[:min(BLOCK, hi - off)], off)
    if how == "flush own slice":
        flush_range(fd, lo, hi - lo)
    elif how == "fsync own file":
        os.fsync(fd)
    os.close(fd)


def case(directory, total, nproc, how, data):
    separate = how == "fsync own file"
    paths = [os.path.join(directory, f"probe{i}" if separate else "probe") for i in range(nproc)]
    per = total // nproc
    start = time.time()
    procs = [mp.Process(target=write_slice,
                        args=(paths[i], 0 if separate else i * per, per if separate else (i + 1) * per,
                              how, data)) for i in range(nproc)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if not separate:
        fd = os.open(paths[0], os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
    took = time.time() - start
    for p in set(paths):
        os.unlink(p)
    what = "a file each, fsync each" if separate else f"one file, {how}"
    print(f"{nproc} processes, {what:40s} {total / took / 1e9:6.2f} GB/s", flush=True)


def main(argv):
    if len(argv) != 2:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    directory, total = argv[0], int(argv[1]) << 20
    data = os.urandom(BLOCK)
    for _ in range(2):
        for nproc in (2, 4):
            for how in ("fsync own file", "then one fsync", "flush own slice"):
                case(directory, total, nproc, how, data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
