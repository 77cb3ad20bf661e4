#!/bin/bash
# Issue 14 on a lent 16-core machine: the local backend's collectives (before: flat
# allreduce + copy allgather; after: reduce-scatter/allgather + single-copy allgather)
# against Open MPI at P = 2, 4, 8, 16, interleaved in one invocation, then paper3's
# PPT with the local backend and with Open MPI, both at 8 workers, in the same invocation.
# Run from the project root:  bash benchmarks/machines/device_run3.sh PART [BUDGET_S]
#   PART 1: before (flat + copy) and forced after (rsag + cma) against Open MPI, twice,
#           then paper3 --quick --runs 3 at 8 workers, local and Open MPI;
#   PART 2: the final choice (auto, workers bound to cores) against before and Open MPI,
#           twice, then paper3 as in PART 1, local bound, local unbound, Open MPI;
#   PART 3: PART 2's probes again (after the P = 2 single-copy allreduce and broadcast),
#           then benchmarks/targets.py --only 2 --only 5 --only 6 (torch is on that host);
#   PART 4: benchmarks/targets.py --only 6 alone, on the final code.
# Needs .whl/*.whl (the wheels of device_run.sh) carried along (`carry: [".whl"]`).
set -x
PART=${1:-1}
BUDGET=${2:-570}
T0=$(date +%s)
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
OUT=${OUT:-/tmp/out}; W=/tmp/res; mkdir -p "$OUT" "$W"
exec > >(tee -a "$OUT/run3_$PART.log") 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
MPIRUN="mpirun --allow-run-as-root"
left() { echo $(( T0 + BUDGET - $(date +%s) )); }

date -u; uptime; nproc; $MPIRUN --version | head -1; python3 -V
git rev-parse HEAD 2>/dev/null; git status --short 2>/dev/null | head
python3 -c "
import numpy, mpi4py, multiprocess; from engine.comm import cma
print('numpy', numpy.__version__, 'mpi4py', mpi4py.__version__, 'cma available', cma.available())
cat = lambda p: open(p).read().strip() if __import__('os').path.exists(p) else 'absent'
print('yama ptrace_scope', cat('/proc/sys/kernel/yama/ptrace_scope'))" || exit 1

mkdir -p $W/probe
probe_local() {  # probe_local TAG ALLREDUCE ALLGATHER [BIND]: "before" runs unbound, as the old code
  echo "--- local $1 loadavg: $(cat /proc/loadavg)"
  ENGINE_LOCAL_BIND=${4:-1} timeout -k 5 90 python3 benchmarks/machines/probe.py --backend local --workers 2,4,8,16 --skip work,jitter,alone \
    --allreduce $2 --allgather $3 --out $W/probe/coll_local_$1.json
}
probe_mpi() {  # probe_mpi ROUND
  for P in 2 4 8 16; do echo "--- mpi P=$P round $1 loadavg: $(cat /proc/loadavg)"
    timeout -k 5 60 $MPIRUN -n $P python3 benchmarks/machines/probe.py --backend mpi --skip work,jitter,alone \
      --out $W/probe/coll_mpi_${P}_r$1.json
  done
}
if [ "$PART" = 4 ]; then
  BENCH_MPIEXEC="$MPIRUN" timeout -k 10 $(( $(left) - 10 )) python3 benchmarks/targets.py --only 6 --rounds 3 2>&1 | tee $OUT/targets.txt
  echo "=== done in $(( $(date +%s) - T0 ))s; loadavg: $(cat /proc/loadavg)"; exit 0
elif [ "$PART" = 3 ]; then
  probe_local auto_r1 auto auto; probe_mpi 1; probe_local before_r1 flat copy 0
  probe_local before_r2 flat copy 0; probe_mpi 2; probe_local auto_r2 auto auto
  tar czf $OUT/probe.tgz -C $W probe
  BENCH_MPIEXEC="$MPIRUN" timeout -k 10 $(( $(left) - 10 )) python3 benchmarks/targets.py --only 2 --only 5 --only 6 --rounds 2 2>&1 | tee $OUT/targets.txt
  echo "=== done in $(( $(date +%s) - T0 ))s; loadavg: $(cat /proc/loadavg)"; exit 0
elif [ "$PART" = 1 ]; then
  probe_local before_r1 flat copy; probe_local after_r1 rsag cma; probe_mpi 1
  probe_local after_r2 rsag cma; probe_local before_r2 flat copy; probe_mpi 2
else
  probe_local auto_r1 auto auto; probe_mpi 1; probe_local before_r1 flat copy 0
  probe_local before_r2 flat copy 0; probe_mpi 2; probe_local auto_r2 auto auto
fi
tar czf $OUT/probe.tgz -C $W probe
echo "=== probes done $(( $(date +%s) - T0 ))s, $(left)s left"

step() {  # step NAME LIMIT_S CMD...
  local name=$1 lim=$2; shift 2; local l=$(left); (( lim > l )) && lim=$l
  mkdir -p "$W/$name"
  if (( lim < 30 )); then echo "=== $name SKIPPED"; return; fi
  echo "=== $name start $(date -u +%FT%TZ) limit ${lim}s loadavg: $(cat /proc/loadavg)" | tee -a "$W/$name/log.txt"
  local s=$(date +%s)
  timeout -k 10 "$lim" "$@" 2>&1 | tee -a "$W/$name/log.txt"
  echo "=== $name end rc=${PIPESTATUS[0]} $(( $(date +%s) - s ))s loadavg: $(cat /proc/loadavg)" | tee -a "$W/$name/log.txt"
  tar czf "$OUT/$name.tgz" --exclude=.cache -C "$W" "$name"
}
P3="python3 -m reproduce paper3 --quick --runs 3 --workers 8 --no-progress"
step p3_quick_runs3_local8 200 $P3 --out "$W/p3_quick_runs3_local8"
[ "$PART" = 2 ] && step p3_quick_runs3_local8_unbound 200 env ENGINE_LOCAL_BIND=0 $P3 --out "$W/p3_quick_runs3_local8_unbound"
step p3_quick_runs3_openmpi8 200 $MPIRUN -n 8 python3 -m reproduce paper3 --quick --runs 3 --backend mpi --workers 8 --no-progress --out "$W/p3_quick_runs3_openmpi8"
echo "=== done in $(( $(date +%s) - T0 ))s; loadavg: $(cat /proc/loadavg)"
