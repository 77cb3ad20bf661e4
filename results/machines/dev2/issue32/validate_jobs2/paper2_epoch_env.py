import time, sys
import numpy as np
from threadpoolctl import threadpool_limits
from reproduce.paper2.setup import DEFAULT as S
from reproduce.paper2 import tasks as T
from reproduce.paper2.bucketed import SeqWorker
from engine.schedule import BUCKETINGS
d, data = T._seq(S)
tr = np.asarray(d.train)
cfg = T.cfg_for(S, Q=6, epochs=1, method="optimal")
with threadpool_limits(1):
    out = []
    for rep in range(3):
        w = SeqWorker(data, T._n_out(), cfg=cfg, seed=1, rank=0, size=1)
        bounds = BUCKETINGS["optimal"](data.lengths[tr], 6)
        rng = np.random.default_rng(rep)
        batches = w.schedule(rng.permutation(tr), bounds, batch_size=cfg.batch_size, rng=rng)
        t = time.perf_counter(); w.train_portion(batches); out.append(time.perf_counter() - t)
print(sys.argv[1], [round(x, 3) for x in out])
