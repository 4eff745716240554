source .gpu-host/env.sh; export NCCL_NVLS_ENABLE=0
cd $OUT
timeout 400 gpu_backend_test --gtest_color=no --gtest_filter='*Overlap*:*TimeBlocks*:*GraphReplay*:*AgreesWithTheCpu*:GpuStaging*:GpuResidual*' > tests1.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" tests1.log | head
cd - >/dev/null
one() { gridsim run "$@" --quiet --report /tmp/r.json >/dev/null 2>&1 || echo FAILED; python3 -c "import json;d=json.load(open('/tmp/r.json'));print(f\"{d['time_block']:>2} {d['time_per_step_s']*1e6:8.2f} us {d['bandwidth_ratio']:.3f}\")"; }
for rep in 1 2; do
for s in 64 96 128 160 192 256 512; do steps=$(( 10000000000 / (s*s*s) )); steps=$(( steps < 200 ? 200 : steps > 40000 ? 40000 : steps ))
  for ov in true '"auto"'; do echo "heat3d $s overlap $ov: $(one inputs/bench_heat3d.toml --set grid.cells=[$s,$s,$s] --set time.steps=$steps --set parallel.overlap=$ov)"; done; done
for s in 1024 2048 4096 16384; do steps=$(( 10000000000 / (s*s) )); steps=$(( steps < 200 ? 200 : steps > 40000 ? 40000 : steps ))
  for ne in 1 100; do for ov in true '"auto"'; do echo "jacobi2d $s norm $ne overlap $ov: $(one inputs/bench_jacobi2d.toml --set grid.cells=[$s,$s] --set time.steps=$steps --set time.norm_every=$ne --set parallel.overlap=$ov)"; done; done; done
done 2>&1 | tee $OUT/overlap_auto.txt
