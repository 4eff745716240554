"""Where a levels pass's instructions go, from ncu's per-instruction counts (`ncu -i REP --page
source --csv --print-source sass`, gzipped here): python3 analyse.py FILE.csv.gz POINT_LEVELS
[split]. Prints the warp instructions per opcode as thread instructions per updated point and
level (x 32 / POINT_LEVELS); with `split` (the summing kernel, whose step body runs more often than
any other instruction) also the instructions by how often they ran: once per warp and step in
every warp of a block (the most frequent count), in the summing warps only (0.6-0.8 of it), and
the rest."""
import collections
import csv
import gzip
import sys

rows = list(csv.reader(gzip.open(sys.argv[1], "rt")))
head, data = rows[1], rows[2:]
si, ei = head.index("Source"), head.index("Instructions Executed")
point_levels = float(sys.argv[2])
counts = [(r[si].strip(), int(r[ei]) if r[ei].isdigit() else 0) for r in data]
total = sum(n for _, n in counts)
per = 32.0 / point_levels
ops = collections.Counter()
for src, n in counts:
    words = src.split()
    op = words[1] if words[0].startswith("@") else words[0]
    ops[op.split(".")[0]] += n
print(f"warp instructions {total:,}; per point and level {total * per:.1f} thread instructions")
for op, n in ops.most_common(24):
    print(f"  {op:9s} {n * per:6.2f}  {100.0 * n / total:5.1f}%")
if sys.argv[3:] != ["split"]:
    sys.exit(0)
top = max(n for _, n in counts)
classes = collections.Counter()
for _, n in counts:
    f = n / top
    classes["every warp, every step" if f >= 0.8 else "summing warps" if f >= 0.6 else "rest"] += n
for c, n in classes.items():
    print(f"{c:24s} {n * per:6.2f} per point and level ({100.0 * n / total:4.1f}%)")
