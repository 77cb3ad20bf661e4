"""paper3's claims (issue 30): reproduce/paper3/claims.py's evidence on small synthetic runs
gives the verdicts a hand calculation expects, and each verdict flips when the data are
shifted across its band or threshold (negative controls); the host constants equal their
files; every quote is the paper's words."""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reproduce import claims as C
from reproduce.paper3 import claims as P3
from reproduce.paper3.setup import DEFAULT, QUICK
from reproduce.manycore_data import ROOT

SEEDS = (1, 2, 3, 4, 5, 6)
HERE = "emulated (here)"


def runs_frame(*, serial_epochs=1000.0, ppt_epochs=None, times=None, shares=None, capped=()):
    """A runs frame as reproduce/paper3/report.py's runs_frame builds it: serial runs and
    8-node PPT runs (emulated on `here`) at the given local epochs, one row per seed.
    ``ppt_epochs``/``times``/``shares``: {local epoch: value or per-seed list}; ``capped``:
    (name, local epoch, seed) of runs that hit the cap."""
    ppt_epochs = ppt_epochs or {32: 300.0}
    times = times or {m: 1.0 for m in ppt_epochs}
    shares = shares or {m: 0.2 for m in ppt_epochs}

    def at(v, i):
        return v[i] if isinstance(v, (list, tuple)) else v

    base = dict(study="main", final_mse=0.0, run=0, kind="emulated", profile="here", serial_scale=1.0)
    rows = []
    for i, s in enumerate(SEEDS):
        rows.append({**base, "name": "serial", "nodes": 1, "local_epoch": None, "seed": s, "source": "measured (serial)",
                     "kind": "measured", "profile": "", "converged": ("serial", None, s) not in capped,
                     "epochs": at(serial_epochs, i), "rounds": at(serial_epochs, i), "time_s": 2.0,
                     "comm_share": 0.0})
        for m in ppt_epochs:
            rows.append({**base, "name": "pattern", "nodes": 8, "local_epoch": m, "seed": s, "source": HERE,
                         "converged": ("pattern", m, s) not in capped, "epochs": at(ppt_epochs[m], i),
                         "rounds": at(ppt_epochs[m], i) * 256 / (8 * m), "time_s": at(times[m], i),
                         "comm_share": at(shares[m], i)})
    return pd.DataFrame(rows)


def host(speedups8=(10.0, 10.4, 10.6, 10.8, 11.0, 11.2), share32=0.5, share256=0.3):
    """Six host invocations: serial 1 s, 8-node speed-ups as given, 2 and 4 nodes at 2× and 4×."""
    return [{"invocation": f"i{k}", "serial_s": 1.0,
             "time_s": {(2, 32): 0.5, (4, 32): 0.25, (8, 32): 1.0 / s, (8, 256): 2.0 / s},
             "comm_share": {(8, 32): share32 + 0.01 * k, (8, 256): share256 + 0.005 * k}}
            for k, s in enumerate(speedups8)]


def judged(runs, host_runs, setup=DEFAULT, only=None):
    """The claims table for ``only`` (claim ids; default all), indexed by claim."""
    ev = P3.evidence(runs, setup=setup, here="here", host_runs=host_runs, only=only)
    return C.frame([C.judge("paper3", c, ev[c.id]) for c in P3.CLAIMS if c.id in ev]).set_index("claim")


SPEED = {"significant-speedup", "speedup-8-nodes", "steady-improvement"}


def test_speedup_ratio_and_directions_by_hand_and_shifted():
    # every resample's geometric mean lies within the values' 10.0–11.2, inside 10.6 ± 10 % = 9.54–11.66
    d = judged(runs_frame(), host(), only=SPEED)
    assert d.loc["speedup-8-nodes", "verdict"] == "reproduced"
    assert d.loc["speedup-8-nodes", "n"] == 6 and d.loc["speedup-8-nodes", "host"] == "xeon207x16"
    assert 10.0 <= d.loc["speedup-8-nodes", "ours_low"] <= d.loc["speedup-8-nodes", "ours_high"] <= 11.2
    assert d.loc["speedup-8-nodes", "ours"] == pytest.approx(
        np.exp(np.mean(np.log([10.0, 10.4, 10.6, 10.8, 11.0, 11.2]))))
    # speed-ups 2, 4, ~10.7: all steps (2, 2, ~2.7) above 1, the smallest speed-up 2 above 1
    assert d.loc["steady-improvement", "verdict"] == "reproduced"
    assert d.loc["steady-improvement", "ours"] == pytest.approx(2.0)
    assert d.loc["significant-speedup", "verdict"] == "reproduced"
    assert d.loc["significant-speedup", "ours"] == pytest.approx(2.0)
    # shifted: the 8-node speed-ups divided by 1.6 (6.25–7.0) lie below the band; 8 nodes now
    # slower than 4 at the most (3.5 < 4): the steady step 4 → 8 falls below 1
    d = judged(runs_frame(), host([x / 1.6 for x in (10.0, 10.4, 10.6, 10.8, 11.0, 11.2)]), only={"speedup-8-nodes"})
    assert d.loc["speedup-8-nodes", "verdict"] == "not-reproduced"
    d = judged(runs_frame(), host([3.0, 3.1, 3.2, 3.3, 3.4, 3.5]), only=SPEED)
    assert d.loc["steady-improvement", "verdict"] == "not-reproduced"
    assert d.loc["significant-speedup", "verdict"] == "reproduced"  # still above 1 everywhere


def test_comm_share_direction_and_its_control():
    # 0.5 + 0.01k against 0.3 + 0.005k: every difference 0.2–0.225 > 0
    d = judged(runs_frame(), host(share32=0.5, share256=0.3), only={"comm-share-falls-with-local-epoch"})
    assert d.loc["comm-share-falls-with-local-epoch", "verdict"] == "reproduced"
    assert d.loc["comm-share-falls-with-local-epoch", "ours"] == pytest.approx(0.2 + 0.005 * 2.5)
    d = judged(runs_frame(), host(share32=0.3, share256=0.5), only={"comm-share-falls-with-local-epoch"})  # swapped: every difference < 0
    assert d.loc["comm-share-falls-with-local-epoch", "verdict"] == "not-reproduced"


def test_fewer_epochs_paired_by_seed_with_a_capped_run_left_out():
    ppt = [300.0, 310.0, 290.0, 305.0, 295.0, 300.0]
    d = judged(runs_frame(ppt_epochs={32: ppt}, capped={("pattern", 32, 6)}), host(), only={"fewer-epochs"})
    r = d.loc["fewer-epochs"]
    assert r.verdict == "reproduced" and r.n == 5  # seed 6's PPT run hit the cap: left out
    assert r.ours == pytest.approx(np.exp(np.mean(np.log(np.array(ppt[:5]) / 1000.0))))
    assert "1 seeds left out" in r.reason
    d = judged(runs_frame(ppt_epochs={32: [10 * x for x in ppt]}), host(), only={"fewer-epochs"})  # 3× more epochs than serial
    assert d.loc["fewer-epochs", "verdict"] == "not-reproduced"


def test_epochs_grow_with_local_epoch_and_its_control():
    grow = {32: [100, 110, 90, 100, 105, 95], 64: 250.0, 128: 600.0, 256: 1300.0}
    d = judged(runs_frame(ppt_epochs=grow), host(), only={"epochs-grow-with-local-epoch"})
    r = d.loc["epochs-grow-with-local-epoch"]
    assert r.verdict == "reproduced" and r.n == 6 and r.ours > 2.0  # steps ≥ 250/110, 2.4, 2.17
    shrink = {**grow, 256: 500.0}  # 128 → 256 now a fall (500/600)
    assert judged(runs_frame(ppt_epochs=shrink), host(), only={"epochs-grow-with-local-epoch"}).loc["epochs-grow-with-local-epoch", "verdict"] \
        == "not-reproduced"


def test_best_local_epoch_choice_at_the_interval_level():
    jitter = [0.0, 0.01, -0.01, 0.02, -0.02, 0.0]
    t = {32: [1.0 + j for j in jitter], 64: [2.0 + j for j in jitter], 128: 3.0, 256: 4.0}
    ep = {m: 100.0 * m / 32 for m in t}
    d = judged(runs_frame(ppt_epochs=ep, times=t), host(), only={"best-local-epoch-4", "best-local-epoch-8"})
    r = d.loc["best-local-epoch-8"]
    assert r.verdict == "reproduced" and r.best == 32 and r.ours == 0 and r.kind == "emulated"
    assert r.tolerance.endswith(": 32")  # every other option is told apart (differences ≥ 1 s)
    # the paper's 64 at 4 nodes was not run there: no PPT rows at 4 nodes at all → inconclusive
    assert d.loc["best-local-epoch-4", "verdict"] == "inconclusive"
    # control: 32 made the slowest → told apart from the best (64) → not reproduced
    t2 = {**t, 32: 5.0}
    assert judged(runs_frame(ppt_epochs=ep, times=t2), host(), only={"best-local-epoch-4", "best-local-epoch-8"}).loc["best-local-epoch-8", "verdict"] \
        == "not-reproduced"
    # the paper's option not run at all → inconclusive, whatever the others say
    t3 = {m: v for m, v in t.items() if m != 32}
    r = judged(runs_frame(ppt_epochs={m: ep[m] for m in t3}, times=t3), host(), only={"best-local-epoch-4", "best-local-epoch-8"}).loc["best-local-epoch-8"]
    assert r.verdict == "inconclusive" and "was not run" in r.reason


def test_host_runs_speak_only_for_their_own_problem():
    from dataclasses import replace

    d = judged(runs_frame(), host(), setup=replace(DEFAULT, hidden=6), only={"speedup-8-nodes"})
    assert d.loc["speedup-8-nodes", "verdict"] == "inconclusive" and d.loc["speedup-8-nodes", "n"] == 0
    assert P3.host_applies(QUICK) and P3.host_applies(DEFAULT)


def test_absolute_times_are_not_comparable_and_every_claim_is_judged():
    d = C.evaluate("paper3", P3.CLAIMS, P3.evidence(runs_frame(), setup=DEFAULT, here="here",
                                                  host_runs=host())).set_index("claim")
    assert d.loc["absolute-times", "verdict"] == "not-comparable"
    assert list(d.index) == [c.id for c in P3.CLAIMS] and 4 <= len(d) <= 10


def test_host_constants_equal_their_files():
    if not (ROOT / P3.HOST_FOLDER).is_dir():
        pytest.skip("the host's folder is not in this checkout")
    assert P3.extract_host() == P3.HOST_RUNS


def test_quotes_are_the_papers_words():
    f = Path(ROOT).parent / "shared" / "papers" / "paper3-dahl-2008-pattern-parallel-training.txt"
    if not f.is_file():
        pytest.skip("the paper's text is not here")
    text = re.sub(r"\s+", " ", f.read_text())
    for c in P3.CLAIMS:
        for piece in c.quote.split(" … "):
            assert re.sub(r"\s+", " ", piece) in text, (c.id, piece)
    assert "a speed-up of 12 on eight nodes" not in text  # the check can fail
