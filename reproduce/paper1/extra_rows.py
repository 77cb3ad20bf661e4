"""paper1's remaining reported numbers as rows: Table 2 as word error (§3.5, decoded by
:mod:`reproduce.paper1.decode`), Table 1's slave waits and raw speeds, §2.1's and §4's
bunch-size statements and §4's 8× / 25× (Färber 1997)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from reproduce.paper1.spert import n_wts, spert_perf, spert_terms
from reproduce import report as R
from reproduce.paper1.perf import N_I, N_O
from reproduce.paper1.setup import (HEADLINE_BOARDS, MULTISPERT_1997, NAME, TABLE1_BUNCH, TABLE2_WER)

# Table 1: the host's wait for each slave (ms) and the raw slave speed it prints beside it.
TABLE1_SYNCH_MS = {(1, 0): 64.0, (2, 0): 17.0, (2, 1): 0.0}  # (slaves, slave) → ms
TABLE1_RAW_MCUPS = {1: 116.0, 2: 115.0}
BUNCH_BEST = (12, 96)  # §2.1: "moderate bunch size values between 12 and 96 to work best"
MODERATE_MAX = 200  # §4: "moderately large bunch sizes of up to 200 have no negative effects"
LARGE_MIN = 5000  # §4: "very large bunches with over 5000 patterns only guarantee similar results
#                     when enough training data is used"
OVER_SINGLE_BOARD, OVER_ULTRASPARC = 8.0, 25.0  # §4


def slave_waits(T_c: float, T_d: float, T_h: float, P: int) -> list[float]:
    """The host's wait at each slave's synch in Table 1's loop (§3.2, Fig. 2): the host
    calls slave 0, then serves slaves 1..P−1 (T_d each) and computes the error (T_h)
    before it synchs slave 0 again, so slave 0's wait is max(0, T_c − (P−1)·T_d − T_h);
    in the slave-bound steady state that wait fills the cycle T_c + T_d and every
    other slave is found finished (0)."""
    return [max(0.0, T_c - (P - 1) * T_d - T_h)] + [0.0] * (P - 1)


def table1_rows(df: pd.DataFrame, *, here_src: str, hidden: int, bunch: int) -> list[dict]:
    rows = []
    for (P, k), ms in TABLE1_SYNCH_MS.items():
        t = spert_terms("NP", P=P, B=TABLE1_BUNCH, N_i=N_I, N_h=1000, N_o=N_O, m=MULTISPERT_1997)
        rows.append(R.row(NAME, "table1", "slave_synch_wait", R.condition(nodes=P, bunch=TABLE1_BUNCH, hidden=1000)
                          + f";slave={k};source=modeled (paper)", "s", reported=ms / 1e3,
                          ours=slave_waits(t["T_c"], t["T_d"], t["T_h"], P)[k], kind="modeled",
                          note="Table 1's loop order with §2.5's T_c, T_d, T_h at the paper's constants"))
        g = df[(df.figure == "fig3") & (df.strategy == "NP") & (df.hidden == hidden) & (df.bunch == bunch)
               & (df.P == P) & (df.source == here_src)]
        if len(g):
            r = g.iloc[0]
            rows.append(R.row(NAME, "table1", "slave_synch_wait", R.condition(nodes=P, bunch=bunch, hidden=hidden)
                              + f";slave={k};source={here_src}", "s", reported=ms / 1e3,
                              ours=slave_waits(r.T_c, r.T_d, r.T_h, P)[k], kind="emulated",
                              note="the same loop with this machine's measured slave compute and host time "
                                   "and the run profile's transfer time"))
    for P, mc in TABLE1_RAW_MCUPS.items():
        t = spert_terms("NP", P=P, B=TABLE1_BUNCH, N_i=N_I, N_h=1000, N_o=N_O, m=MULTISPERT_1997)
        rows.append(R.row(NAME, "table1", "raw_slave_mcups", R.condition(nodes=P, bunch=TABLE1_BUNCH, hidden=1000)
                          + ";source=modeled (paper)", "MCUPS", reported=mc,
                          ours=TABLE1_BUNCH * n_wts(N_I, 1000, N_O) / P / t["T_c"] / 1e6, kind="modeled",
                          note="one slave's share of the bunch over its compute time T_c"))
        g = df[(df.figure == "fig3") & (df.strategy == "NP") & (df.hidden == hidden) & (df.bunch == bunch)
               & (df.P == P) & (df.source == here_src)]
        if len(g):
            rows.append(R.row(NAME, "table1", "raw_slave_mcups", R.condition(nodes=P, bunch=bunch, hidden=hidden)
                              + f";source={here_src}", "MCUPS", reported=mc,
                              ours=bunch * n_wts(N_I, hidden, N_O) / P / g.T_c.iloc[0] / 1e6, kind="emulated",
                              note="one slave's share over its measured compute (one core, numpy float64)"))
    return rows


def headline_rows(df: pd.DataFrame, *, here_src: str) -> list[dict]:
    """§4: five boards 8× the latest single-board version and over 25× the fastest
    Ultra-Sparc. Ours: the best five-slave configuration of our grid over the same
    configuration on one slave."""
    rows = []
    for src, kind in (("modeled (paper)", "modeled"), (here_src, "emulated")):
        g = df[(df.figure == "fig3") & (df.source == src)]
        five = g[g.P == HEADLINE_BOARDS]
        if five.empty:
            continue
        i = five.perf.idxmax()
        s, h, b = five.strategy[i], int(five.hidden[i]), int(five.bunch[i])
        one = g[(g.P == 1) & (g.strategy == s) & (g.hidden == h) & (g.bunch == b)]
        if one.empty:
            continue
        rows.append(R.row(NAME, "headline", "over_single_board", R.condition(nodes=HEADLINE_BOARDS)
                          + f";source={src}", "x", reported=OVER_SINGLE_BOARD,
                          ours=float(five.perf[i] / one.perf.iloc[0]), kind=kind,
                          note=f"best five-slave point of our grid ({s} N_h = {h}, B = {b}) over the same "
                               "configuration on one slave; the paper's single board ran the older sequential "
                               "Quicknet, which our grid does not model"))
    rows.append(R.row(NAME, "headline", "over_ultrasparc", R.condition(nodes=HEADLINE_BOARDS), "x",
                      reported=OVER_ULTRASPARC, ours=None, kind="emulated",
                      note="not measurable here: it compares Spert-II boards with a 1997 Ultra-Sparc "
                           "workstation; our slaves and our 'workstation' are the same CPU core, so the "
                           "ratio would only repeat the five-slave speedup"))
    return rows


def bunch_rows(tf: pd.DataFrame, setup) -> list[dict]:
    """§2.1 and §4's bunch-size statements as ratios of CV frame error (best epoch) of
    the Fig. 6 runs; the paper's statement reads as a ratio of 1 ("no negative
    effects", "similar results")."""
    rows = []
    if tf.empty:
        return rows
    f6 = tf[(tf["mode"] == "sequential") & (tf.hidden == setup.fig6_hidden)]
    err = (100 * (1 - f6.groupby(["bunch", "seed"]).cv_acc.max())).groupby("bunch").median()  # by bunch
    n_train = int(tf.n_train.iloc[0])
    cond = R.condition(hidden=setup.fig6_hidden)
    mod = err[err.index <= MODERATE_MAX]
    best_in = err[(err.index >= BUNCH_BEST[0]) & (err.index <= BUNCH_BEST[1])]
    if len(best_in) and len(err) > 1:
        rows.append(R.row(NAME, "sec2.1", "best_in_12_96_over_best", cond + f";bunches={'/'.join(map(str, err.index))}",
                          "x", reported=1.0, ours=float(best_in.min() / err.min()), kind="measured",
                          note="CV frame error of the best bunch in 12–96 over the best of all tested "
                               f"(bunch with the lowest error: {int(err.idxmin())}); accuracy only: the speed "
                               "half of the claim rests on the Spert-II's 12 vector registers (footnote 2)"))
    if len(mod) > 1:
        rows.append(R.row(NAME, "sec4", "moderate_bunch_error_spread", cond + f";bunches={'/'.join(map(str, mod.index))}",
                          "x", reported=1.0, ours=float(mod.max() / mod.min()), kind="measured",
                          note="worst over best CV frame error among bunches ≤ 200 (paper: no negative effects)"))
    big = err[err.index >= LARGE_MIN]
    if len(big) and len(mod):
        B = int(big.index.min())
        rows.append(R.row(NAME, "sec4", "large_bunch_error_over_moderate",
                          cond + f";bunch={B};updates_per_epoch={math.ceil(n_train / B)}", "x", reported=1.0,
                          ours=float(big.min() / mod.min()), kind="measured",
                          note=f"best CV frame error at B ≥ {LARGE_MIN} over the best moderate bunch; the paper: "
                               "similar only 'when enough training data is used' (numbers95); ours has "
                               f"{n_train:,} training frames, {math.ceil(n_train / B)} updates an epoch at B = {B}, "
                               "η·200/B"))
    return rows


def wer_rows(results, setup) -> list[dict]:
    """Table 2 as word error: the median over seeds of each configuration's test WER."""
    from reproduce.paper1.tasks import is_table2

    got = {}
    for t, r in results:
        if t.name == "train" and r is not None and "wer" in r and is_table2(t.params, setup):
            got.setdefault((t.params["hidden"], t.params["mode"], t.kind), []).append(r["wer"])
    rows, med = [], {}
    for (h, mode, kind), ws in sorted(got.items()):
        v = 100 * np.array([w["test_wer"] for w in ws])
        med[(h, mode)] = float(np.median(v))
        cond = {"sequential": f"bunch={setup.np_bunch}",
                "NP": f"nodes={setup.np_slaves};bunch={setup.np_bunch};pipelined=1",
                "PP": f"nodes={setup.pp_slaves};bunch={setup.pp_bunch}"}[mode]
        w0 = ws[0]
        pen = "/".join(f"{w['penalty']:g}" for w in ws)
        flat = "/".join(f"{100 * w['test_wer_flat_prior']:.1f}" for w in ws)
        rows.append(R.row(NAME, "table2", "word_error_rate", f"{cond};hidden={h};mode={mode}", "%",
                          reported=TABLE2_WER.get((h, mode)), ours=med[(h, mode)], low=float(v.min()),
                          high=float(v.max()), kind=kind, runs=len(v),
                          note=f"hybrid word-loop Viterbi (reproduce/paper1/decode.py), last epoch's weights; "
                               f"{w0['n_test_utts']} test utterances ({w0['n_test_words']} words) of unseen "
                               f"speakers; insertion penalty {pen} chosen on "
                               f"{w0['n_dev_utts']} dev utterances of other CV speakers; flat priors instead: "
                               f"{flat} %"))
    for (h, mode), v in med.items():
        base = med.get((h, "sequential"))
        if mode == "sequential" or base is None:
            continue
        rep, rb = TABLE2_WER.get((h, mode)), TABLE2_WER.get((h, "sequential"))
        rows.append(R.row(NAME, "table2", "wer_over_sequential", f"hidden={h};mode={mode}", "x",
                          reported=round(rep / rb, 3) if rep else None,
                          ours=v / base if base > 0 else math.nan, kind="emulated",
                          note="word error ratio, ours and the paper's"))
    return rows
