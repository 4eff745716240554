"""Warp stall samples of a kernel by reason, from ncu's per-instruction source page
(`ncu -i REP --page source --csv --print-source sass`, gzipped; profile.sh writes it):
python3 stalls.py FILE.csv.gz. Prints each reason's share of all samples and the opcodes that
took most of them (a sample is charged to the instruction the warp waits to issue)."""
import collections
import csv
import gzip
import sys

rows = list(csv.reader(gzip.open(sys.argv[1], "rt")))
head, data = rows[1], rows[2:]
si = head.index("Source")
cols = [i for i, h in enumerate(head) if h.startswith("stall_") and "Not Issued" not in h]
total = collections.Counter()
by_op = collections.defaultdict(collections.Counter)
for r in data:
    words = r[si].split()
    op = (words[1] if words and words[0].startswith("@") else (words[0] if words else "")).split(".")[0]
    for i in cols:
        v = int(r[i]) if r[i].isdigit() else 0
        total[head[i]] += v
        by_op[head[i]][op] += v
n = sum(total.values())
print(f"samples {n}")
for reason, v in total.most_common(10):
    ops = ", ".join(f"{o} {c}" for o, c in by_op[reason].most_common(3))
    print(f"  {reason:24s} {100.0 * v / n:5.1f}%  ({ops})")
