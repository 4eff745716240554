out=$1; mkdir -p $out
for rep in 1; do
 for n in 2048 4096 8192 16384; do
  s=$((20000000000 / (n * n))); ((s > 20000)) && s=20000; ((s < 200)) && s=200
  for p in float double; do
   for k in 1 2 3 4 6 8; do
    for b in gridsim gridsim-before-sum; do
     [ $k = 1 ] && [ $b != gridsim ] && continue
     f=$out/$b-$n-$p-k$k.json
     $b run inputs/bench_jacobi2d.toml --quiet --set grid.cells=[$n,$n] --set time.steps=$s --set time.norm_every=1 --set problem.precision=\"$p\" --set parallel.time_block=$k --report $f >/dev/null 2>&1 || echo FAILED $f
    done
   done
  done
 done
done
python3 - $out <<'PY'
import glob,json,os,sys,collections
t=collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
    r=json.load(open(f)); n=os.path.basename(f)[:-5]
    b='before' if 'before' in n else 'now'
    case=n.split('-',2)[-1] if b=='now' else n.split('-',3)[-1]
    t[case][b]=f"{1e6*r['loop_seconds']/r['steps']:.2f} ({r['bandwidth_ratio']:.3f})"
print('| case | now us (x copy) | before |'); print('| --- | --- | --- |')
for c,v in t.items(): print(f"| {c} | {v.get('now','')} | {v.get('before','-')} |")
PY
