#!/bin/bash
# Issue 30 on a lent 16-core machine: paper0's default setup (5 seeds) with 16 local workers,
# so that the claims paper0 judges on the host's measurements rest on 5 seeds of the code as
# it stands, with each seed's figures kept (the earlier host run had 3 seeds and kept only
# their median and range). Keeps the task cache, whose measured netpart/seqpart entries hold
# each seed's serial and parallel seconds per P. Emulated tasks run 8 at a time (--jobs 8):
# the claims use this host's measured rows only, and every measured task still runs alone.
# Run from the project root:  bash benchmarks/machines/device_run6.sh [BUDGET_S] [extra args]
# JOBS (default 8), W (work folder), PY, NO_WHEELS=1 (local test) may be set.
# Needs .whl/*.whl and .whl/nettalk carried along (`carry: [".whl"]`).
set -x
BUDGET=${1:-560}; shift
T0=$(date +%s)
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
OUT=${OUT:-/tmp/out}; W=${W:-results/local/device6}; mkdir -p "$OUT" "$W"
exec > >(tee -a "$OUT/run6.log") 2>&1
if [ -z "$NO_WHEELS" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
PY=${PY:-python3}
date -u; uptime; lscpu | grep -E "Model name|^Model:|Stepping|^CPU\(s\)|Thread|Hypervisor|Flags" | cut -c1-200; $PY -V
git rev-parse HEAD 2>/dev/null; git status --short --untracked-files=no 2>/dev/null | head
$PY -c "
import numpy, scipy, pandas, numba, pydantic; from engine import kernels
print('numpy', numpy.__version__, 'scipy', scipy.__version__, 'pandas', pandas.__version__, 'numba', numba.__version__, 'pydantic', pydantic.__version__, 'kernels', kernels.IMPLEMENTATION)" || exit 1
echo "=== paper0 start $(date -u +%FT%TZ) loadavg: $(cat /proc/loadavg)"
s=$(date +%s)
timeout -k 10 $(( T0 + BUDGET - $(date +%s) - 20 )) $PY -m reproduce paper0 --workers 16 --jobs ${JOBS:-8} --no-progress \
  --nettalk-file .whl/nettalk/nettalk.data --out "$W" "$@"
echo "=== paper0 end rc=$? $(( $(date +%s) - s ))s loadavg: $(cat /proc/loadavg)"
tar czf "$OUT/paper0_default_local16_runs5.tgz" --exclude='*.png' -C "$W" paper0
echo "=== done in $(( $(date +%s) - T0 ))s"
