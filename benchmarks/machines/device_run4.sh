#!/bin/bash
# Issue 14 on a lent 16-core machine, on the code as it stands (after the fused kernels):
#   PART 1: benchmarks/targets.py, every row, in one run (FANN 2.2 from Debian's .debs, torch
#           from the host's image, Open MPI as the MPI of targets 3 and 6);
#   PART 2: paper3's PPT (--quick --runs 3, 8 workers) with the local backend and under Open MPI,
#           alternating local / MPI / local / MPI, so each backend has two invocations;
#   PART 3: targets 3 and 6 again with 5 rounds (did PART 1's two cells where MPI was faster
#           repeat?), then PART 2's alternation once more (invocations 3 and 4 of each backend);
#   PART 4: target 2 alone, which now also times torch's 5 GEMMs: where does its gap to torch lie?
#   PART 5: paper3 as in PART 2 with the local backend only, workers bound to cores (the default)
#           and unbound (ENGINE_LOCAL_BIND=0), alternating: is binding worth it?
# Run from the project root:  bash benchmarks/machines/device_run4.sh PART [BUDGET_S]
# Needs .whl/*.whl (the wheels of device_run.sh) and .whl/debs/libfann{2,-dev}_2.2.0+ds-8_amd64.deb
# carried along (`carry: [".whl"]`).
set -x
PART=${1:-1}
BUDGET=${2:-570}
T0=$(date +%s)
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
OUT=${OUT:-/tmp/out}; W=/tmp/res; mkdir -p "$OUT" "$W"
exec > >(tee -a "$OUT/run4_$PART.log") 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
MPIRUN="mpirun --allow-run-as-root"
left() { echo $(( T0 + BUDGET - $(date +%s) )); }

date -u; uptime; lscpu | grep -E "Model name|^Model:|Stepping|^CPU\(s\)|Thread|Hypervisor"; $MPIRUN --version | head -1; python3 -V
git rev-parse HEAD 2>/dev/null; git status --short 2>/dev/null | head
python3 -c "
import numpy, numba, mpi4py, torch; from engine import kernels
print('numpy', numpy.__version__, 'numba', numba.__version__, 'torch', torch.__version__, 'mpi4py', mpi4py.__version__, 'kernels', kernels.IMPLEMENTATION)" || exit 1

if [ "$PART" = 1 ]; then
  for f in .whl/debs/*.deb; do dpkg -x "$f" /; done; ldconfig; which gcc; ls /usr/include/doublefann.h
  BENCH_MPIEXEC="$MPIRUN" timeout -k 10 $(( $(left) - 10 )) python3 benchmarks/targets.py 2>&1 | tee $OUT/targets.txt
  echo "=== done in $(( $(date +%s) - T0 ))s; loadavg: $(cat /proc/loadavg)"; exit 0
fi

if [ "$PART" = 4 ]; then
  timeout -k 10 $(( $(left) - 10 )) python3 benchmarks/targets.py --only 2 --rounds 3 2>&1 | tee $OUT/targets_2.txt
  echo "=== done in $(( $(date +%s) - T0 ))s; loadavg: $(cat /proc/loadavg)"; exit 0
fi
if [ "$PART" = 3 ]; then
  BENCH_MPIEXEC="$MPIRUN" timeout -k 10 200 python3 benchmarks/targets.py --only 3 --only 6 --rounds 5 2>&1 | tee $OUT/targets_3_6.txt
fi
step() {  # step NAME LIMIT_S CMD...
  local name=$1 lim=$2; shift 2; local l=$(left); (( lim > l )) && lim=$l
  mkdir -p "$W/$name"
  if (( lim < 60 )); then echo "=== $name SKIPPED"; return; fi
  echo "=== $name start $(date -u +%FT%TZ) limit ${lim}s loadavg: $(cat /proc/loadavg)" | tee -a "$W/$name/log.txt"
  local s=$(date +%s)
  timeout -k 10 "$lim" "$@" 2>&1 | tee -a "$W/$name/log.txt"
  echo "=== $name end rc=${PIPESTATUS[0]} $(( $(date +%s) - s ))s loadavg: $(cat /proc/loadavg)" | tee -a "$W/$name/log.txt"
}
P3="python3 -m reproduce paper3 --quick --runs 3 --workers 8 --no-progress"
if [ "$PART" = 5 ]; then
  for i in 1 2; do
    step p3_local8_bound_$i 120 $P3 --out "$W/p3_local8_bound_$i"
    step p3_local8_unbound_$i 120 env ENGINE_LOCAL_BIND=0 $P3 --out "$W/p3_local8_unbound_$i"
  done
  tar czf "$OUT/p3_bind.tgz" --exclude=.cache --exclude='*.png' -C "$W" .
  echo "=== done in $(( $(date +%s) - T0 ))s; loadavg: $(cat /proc/loadavg)"; exit 0
fi
ROUNDS="1 2"; [ "$PART" = 3 ] && ROUNDS="3 4"
for i in $ROUNDS; do
  step p3_local8_$i 150 $P3 --out "$W/p3_local8_$i"
  step p3_openmpi8_$i 150 $MPIRUN -n 8 $P3 --backend mpi --out "$W/p3_openmpi8_$i"
done
tar czf "$OUT/p3.tgz" --exclude=.cache --exclude='*.png' -C "$W" .
echo "=== done in $(( $(date +%s) - T0 ))s; loadavg: $(cat /proc/loadavg)"
