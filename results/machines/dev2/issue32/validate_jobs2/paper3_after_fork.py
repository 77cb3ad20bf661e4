"""Does an emulated paper3 run in this process book more compute after a local run forked
workers from it? 8 nodes, local epoch 32, seed 6 (never converges), 3,000 epochs' rounds."""
import resource, time, sys
import numpy as np
from datasets.parity import parity
from engine.perfmodel import FREE
from reproduce.paper3.ppt import PPTConfig, train_pattern_parallel
X, T = parity(8, activation="symmetric_sigmoid")
kw = dict(sizes=(8, 100, 1), activation="symmetric_sigmoid", seed=6)
cfg = PPTConfig(local_epoch=32, max_epochs=3000, threshold=0.0)
def emu(label):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt; t0 = time.perf_counter()
    rec = train_pattern_parallel(X, T, cfg=cfg, workers=8, backend="emulated", profile=FREE, **kw)
    w = time.perf_counter() - t0; f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    print(f"{label}: compute booked {rec.compute_s.sum():.3f} s, wall {w:.3f} s, minor faults {f1 - f0}", flush=True)
emu("warm-up")
for _ in range(3): emu("fresh")
train_pattern_parallel(X, T, cfg=PPTConfig(local_epoch=32, max_epochs=200, threshold=0.0), workers=2, backend="local", **kw)
for _ in range(3): emu("after a local run")
