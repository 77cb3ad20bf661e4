#!/bin/bash
# Second set of commands run on the lent 16-core machine for results/machines/xeon207x16/
# (see its README): paper0 and paper1, default setups, local backend, 16 workers.
# Run from the project root:  bash benchmarks/machines/device_run2.sh PART [BUDGET_S]
#   PART A: paper0 default setup, --workers 16 (network partition P = 2..10 radio, 2..16
#           parsing; sequence partition P = 2..16), into its own fresh folder;
#   PART B: paper1 default setup, --workers 16, into its own fresh folder;
#   PART R: resume PART A's folder from its task cache (same machine, still warm), then B.
# Needs, in ignored paths that travel with `carry: [".whl"]`:
#   .whl/*.whl       the wheels of device_run.sh (installed into /tmp/site);
#   .whl/nettalk/    a copy of ../shared/data/nettalk (nettalk.data, nettalk.list): paper0's
#                    corpus, passed with --nettalk-file (without it paper0 falls back to CMUdict).
# Every step runs under `timeout`, within an overall deadline, logs the load average before
# and after, and is tarred into $OUT (task cache left out) as soon as it ends.
set -x
PART=${1:-A}
BUDGET=${2:-570}  # seconds for the whole part
T0=$(date +%s)
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
OUT=${OUT:-/tmp/out}; W=/tmp/res; mkdir -p "$OUT" "$W"
exec > >(tee -a "$OUT/run$PART.log") 2>&1

if [ ! -d /tmp/site/greenlet ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD
NT=$PWD/.whl/nettalk
ls -la "$NT" || echo "NO NETTALK COPY: paper0 would use CMUdict"

step() {  # step NAME LIMIT_S CMD...: runs CMD in $W/NAME (logs there), then tars $W/NAME to $OUT
  local name=$1 lim=$2; shift 2
  local left=$(( T0 + BUDGET - $(date +%s) ))
  (( lim > left )) && lim=$left
  mkdir -p "$W/$name"
  if (( lim < 15 )); then echo "=== $name SKIPPED: ${left}s left of the budget"; echo skipped > "$W/$name/SKIPPED"; return; fi
  echo "=== $name start $(date -u +%FT%TZ) limit ${lim}s loadavg: $(cat /proc/loadavg)" | tee -a "$W/$name/log.txt"
  local s=$(date +%s)
  timeout -k 10 "$lim" "$@" 2>&1 | tee -a "$W/$name/log.txt"
  local rc=${PIPESTATUS[0]}
  echo "=== $name end rc=$rc $(( $(date +%s) - s ))s loadavg: $(cat /proc/loadavg)" | tee -a "$W/$name/log.txt"
  tar czf "$OUT/$name.tgz" --exclude=.cache -C "$W" "$name"
}

date -u; uptime; lscpu | head -20; free -g; which python3; python3 -V
git rev-parse HEAD 2>/dev/null; git status --short 2>/dev/null | head
timeout 60 python3 -c "
import numpy, scipy, pandas, threadpoolctl, multiprocess, os
import engine, datasets, reproduce, engine.comm.local
from datasets import nettalk
print('numpy', numpy.__version__, 'scipy', scipy.__version__, 'pandas', pandas.__version__,
      'cpus', os.cpu_count(), 'affinity', len(os.sched_getaffinity(0)), 'nettalk', nettalk.data_dir('$NT'))
print(threadpoolctl.threadpool_info())
" || { echo IMPORT CHECK FAILED; exit 1; }

P0="python3 -m reproduce paper0 --workers 16 --no-progress --nettalk-file $NT --out $W/paper0_default_local16"
P1="python3 -m reproduce paper1 --workers 16 --no-progress --out $W/paper1_default_local16"
case "$PART" in
  A) step paper0_default_local16 550 $P0 ;;
  B) step paper1_default_local16 550 $P1 ;;
  R) step paper0_default_local16 550 $P0; step paper1_default_local16 550 $P1 ;;
esac
echo "=== part $PART done in $(( $(date +%s) - T0 ))s; loadavg: $(cat /proc/loadavg)"; uptime
