"""paper1's tasks: measured network-parallel (NP) and pattern-parallel (PP) bunch
training and forward passes on local processes or MPI ranks, per-slave compute for
the emulated curves and the §2.5 calibration (:mod:`reproduce.paper1.perf`), and
the training runs of Fig. 6 and Table 2."""
from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
from pydantic import Field

from datasets.speech import normalize, speaker_split, synthesize
from engine.nets.mlp import MLP
from reproduce.paper1.bunch import BunchConfig, init_rng, train_sequential
from reproduce.paper1.setup import TABLE1_HIDDEN, Setup
from reproduce.result_schema import Count, Fraction, LoadAvg, Result, Seconds
from reproduce.runner import Task


def corpora(setup: Setup, seed: int):
    """(train, cv) split by speaker, normalised with the training statistics."""
    c = synthesize(setup.corpus, rng=np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,))))
    tr, cv = speaker_split(c, cv_fraction=setup.cv_fraction,
                           rng=np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(8,))))
    normalize(tr, cv)
    return tr, cv


# ---- tasks --------------------------------------------------------------------------------
def default_workers() -> int:
    """Measured runs use P = 1 and 2 only (Table 1's one and two slaves)."""
    return min(2, os.cpu_count() or 1)


def make_tasks(run) -> list[Task]:
    setup, workers, seed = run.setup, run.workers, run.seed
    T = [Task("calibrate", "measured", 1, {"seed": seed})]
    # Measured runs: NP (pipelined, compressed as in Table 1) and PP, P = 1 and 2 here.
    for P in (1, 2):
        if P > workers:
            continue
        for h in setup.perf_hidden:
            T.append(Task("perf", "measured", P, {"strategy": "NP", "hidden": h, "P": P,
                                                  "bunch": setup.np_bunch_perf, "pipelined": True,
                                                  "compressed": True, "seed": seed}))
            for B in setup.pp_bunches:
                T.append(Task("perf", "measured", P, {"strategy": "PP", "hidden": h, "P": P,
                                                      "bunch": B, "pipelined": False,
                                                      "compressed": False, "seed": seed}))
        h = TABLE1_HIDDEN if TABLE1_HIDDEN in setup.perf_hidden else setup.perf_hidden[0]
        for pipe, comp in ((False, True), (True, False)):  # pipelining and compression on/off
            T.append(Task("perf", "measured", P, {"strategy": "NP", "hidden": h, "P": P,
                                                  "bunch": setup.np_bunch_perf, "pipelined": pipe,
                                                  "compressed": comp, "seed": seed}))
        T.append(Task("perf", "measured", P, {"strategy": "PP", "hidden": h, "P": P,
                                              "bunch": setup.pp_bunches[0], "pipelined": False,
                                              "compressed": True, "seed": seed}))
    # The warm-up ablation (setup.py): PP bunches timed one by one, from a fresh run's first
    for P in (1, 2):
        if P > workers:
            continue
        for h in setup.perf_hidden:
            T += [Task("warmup", "measured", P, {"strategy": "PP", "hidden": h, "P": P,
                                                 "bunch": setup.pp_bunches[0], "bunches": setup.warmup_bunches,
                                                 "run": i, "seed": seed + i})
                  for i in range(setup.warmup_runs)]
    # Measured forward pass (Fig. 5): NP and PP on P = 1, 2 local processes, each run
    # interleaved with the serial forward pass of the same weights and patterns.
    for P in (1, 2):
        if P > workers:
            continue
        for h in setup.perf_hidden:
            for s, B in [("NP", setup.np_bunch_perf)] + [("PP", b) for b in setup.pp_bunches]:
                T.append(Task("fwd", "measured", P, {"strategy": s, "hidden": h, "P": P, "bunch": B,
                                                     "seed": seed}))
    # Emulated: per-slave compute for P up to 8 (Figs. 3 and 5). The training pass on the
    # Table 2 nets runs setup.emul_runs times (setup.py); run r follows the r-th of as many
    # slices of the measured tasks above, so the runs spread over the timed part of the run.
    emul = [[] for _ in range(max(setup.emul_runs, 1))]
    for fwd in (False, True):
        for h in setup.perf_hidden:
            for r in range(len(emul) if not fwd and h in setup.nets else 1):
                emul[r] += [Task("emul", "emulated", 1, {"strategy": s, "hidden": h, "bunch": B,
                                                         "forward": fwd, "run": r})
                            for s, B in [("NP", setup.np_bunch_perf)] + [("PP", b) for b in setup.pp_bunches]]
    T = _spread(T, emul)
    # Training: Fig. 6 and Table 2.
    for i in range(setup.runs):
        s = seed + i
        for B in setup.fig6_bunches + setup.fig6_big:
            if i > 0 and B in setup.one_seed_bunches:
                continue
            T.append(Task("train", "measured", 1, {"mode": "sequential", "hidden": setup.fig6_hidden,
                                                   "bunch": B, "lr": setup.lr_for(B), "seed": s}))
        for h in setup.nets:
            T.append(Task("train", "measured", 1, {"mode": "sequential", "hidden": h,
                                                   "bunch": setup.np_bunch, "lr": setup.lr_for(
                                                       setup.np_bunch), "seed": s}))
            T.append(Task("train", "emulated", 1, {"mode": "NP", "hidden": h, "slaves": setup.np_slaves,
                                                   "bunch": setup.np_bunch, "pipelined": True,
                                                   "lr": setup.lr_for(setup.np_bunch), "seed": s}))
            T.append(Task("train", "emulated", 1, {"mode": "PP", "hidden": h, "slaves": setup.pp_slaves,
                                                   "bunch": setup.pp_bunch,
                                                   "lr": setup.lr_for(setup.pp_bunch), "seed": s}))
    # The PP-bunch ablation (setup.py): sequential at PP's bunch on every Table 2 net (Fig. 6's
    # run on fig6_hidden is the same task, dropped below), and on fig6_hidden with η swept
    for i in range(setup.runs):
        s = seed + i
        lr = setup.lr_for(setup.pp_bunch)
        for h in setup.nets if setup.same_bunch_nets else ():
            T.append(Task("train", "measured", 1, {"mode": "sequential", "hidden": h, "bunch": setup.pp_bunch,
                                                   "lr": lr, "seed": s}))
        T += [Task("lr_sweep", "measured", 1, {"mode": "sequential", "hidden": setup.fig6_hidden,
                                               "bunch": setup.pp_bunch, "lr": lr * m, "lr_times": m, "seed": s})
              for m in setup.lr_sweep]
    # training records accuracies and word errors, no time: such tasks may share the cores
    return [replace(t, timed=False) if t.name in UNTIMED else t for t in _dedupe(T)]


UNTIMED = ("train", "lr_sweep")  # the tasks whose results hold no time (TrainMeasuredResult)


def emul_by_run(results) -> dict:
    """{(strategy, hidden, B, forward): {run: {P: row}}}: every emul task's rows (perf.emulate_curve)."""
    out = {}
    for t, r in results:
        if t.name == "emul" and r is not None:
            p = t.params
            out.setdefault((p["strategy"], p["hidden"], p["bunch"], p["forward"]), {})[p["run"]] = \
                {e["P"]: e for e in r["rows"]}
    return out


def emul_medians(runs: dict) -> dict:
    """{P: {P, T_c, T_h, runs}} of one configuration's {run: {P: row}}: per P, the median over
    its runs of each run's median step times (the curves' point; the claims' estimate,
    reproduce/paper1/claims.py ``emulated_composer``)."""
    out = {}
    for P in sorted({P for rows in runs.values() for P in rows}):
        rs = [rows[P] for rows in runs.values() if P in rows]
        out[P] = {"P": P, "T_c": float(np.median([e["T_c"] for e in rs])),
                  "T_h": float(np.median([e["T_h"] for e in rs])), "runs": len(rs)}
    return out


def _spread(tasks: list[Task], blocks: list[list[Task]]) -> list[Task]:
    """The first task (the calibration), then each block after its slice of the rest: block
    r after the r-th of len(blocks) near-equal slices."""
    head, rest, n = tasks[:1], tasks[1:], len(blocks)
    for r, b in enumerate(blocks):
        head += rest[r * len(rest) // n:(r + 1) * len(rest) // n] + b
    return head


def _dedupe(tasks):
    seen, out = set(), []
    for t in tasks:
        k = (t.name, t.kind, t.workers, tuple(sorted(t.params.items())))
        if k not in seen:
            seen.add(k)
            out.append(t)
    return out


def run_task(task: Task, comm, run) -> dict | None:
    """One task; returns JSON-able numbers for the report. Every task uses the corpus of
    the invocation's base seed."""
    import reproduce.paper1.perf as perf

    setup, backend, seed, p = run.setup, run.backend, run.seed, task.params
    if task.name == "calibrate":
        return perf.calibrate(reps=setup.reps)
    if task.name == "emul":
        rows = perf.emulate_curve(p["strategy"], N_h=p["hidden"], B=p["bunch"], slaves=setup.slaves,
                                  forward=p["forward"], reps=setup.reps)
        return {"rows": rows}
    tr, cv = corpora(setup, seed)
    sizes = (156, p["hidden"], 56)
    if task.name == "perf":
        return _perf(tr, sizes, p, setup=setup, backend=backend, comm=comm)
    if task.name == "fwd":
        return _fwd(tr, sizes, p, setup=setup, backend=backend, comm=comm)
    if task.name == "warmup":
        return _warmup(tr, sizes, p, setup=setup, backend=backend, comm=comm)
    # training
    B = p["bunch"]
    cfg = BunchConfig(bunch=B, lr=p["lr"], epochs=setup.epochs, pipelined=p.get("pipelined", False),
                      compressed=True, chunk=setup.chunk)
    if p["mode"] == "sequential":
        net = MLP(sizes, setup.activation)
        net.init_uniform(init_rng(p["seed"]), scale=setup.init_scale)
        r = train_sequential(net, tr, cfg=cfg, seed=p["seed"], cv=cv)
    elif p["mode"] == "NP":
        from reproduce.paper1.network_parallel import np_emulated

        r = np_emulated(tr, sizes=sizes, activation=setup.activation, cfg=cfg, seed=p["seed"],
                        slaves=p["slaves"], cv=cv, init_scale=setup.init_scale)
    else:
        from reproduce.paper1.pattern_bunch import pp_emulated

        r = pp_emulated(tr, sizes=sizes, activation=setup.activation, cfg=cfg, seed=p["seed"],
                        slaves=p["slaves"], cv=cv, init_scale=setup.init_scale)
    out = {"cv_acc": list(map(float, r["cv_acc"])), "train_acc": list(map(float, r["train_acc"])),
           "bunches": int(r["bunches"]), "n_train": tr.n_frames, "n_cv": cv.n_frames}
    if is_table2(p, setup):  # word error of the last epoch's weights (§3.5, Table 2)
        from reproduce.paper1.decode import table2_wer

        if p["mode"] != "sequential":
            net = MLP(sizes, setup.activation)
            net.params[:] = r["params"]
        out["wer"] = table2_wer(net, tr, cv, seed=seed)
    return out


def is_table2(p: dict, setup: Setup) -> bool:
    """Is this training run one of Table 2's configurations (decoded to word error)?"""
    if p["hidden"] not in setup.nets:
        return False
    return p["bunch"] == (setup.pp_bunch if p["mode"] == "PP" else setup.np_bunch)


def _perf(tr, sizes, p, *, setup: Setup, backend: str, comm) -> dict | None:
    from reproduce.paper1.spert import n_wts
    from reproduce.paper1.network_parallel import train_network_parallel
    from reproduce.paper1.pattern_bunch import train_pattern_bunch

    B, P = p["bunch"], p["P"]
    nb = max(1, setup.measured_patterns // B) if p["strategy"] == "NP" else 3
    # One chunk holds exactly the patterns timed (§3.2 sends the chunk, then trains on it).
    cfg = BunchConfig(bunch=B, lr=1e-4, epochs=1, pipelined=p["pipelined"], compressed=p["compressed"],
                      chunk=nb * B, max_bunches=nb)
    kw = dict(sizes=sizes, activation=setup.activation, cfg=cfg, seed=p["seed"], workers=P,
              init_scale=setup.init_scale)
    be = "local" if backend == "local" else "mpi"
    if be == "mpi" and P == 1:
        be, comm = "inprocess", None
    fn = train_network_parallel if p["strategy"] == "NP" else train_pattern_bunch
    runs = []
    for _ in range(setup.perf_repeats):  # the median run of n (spread reported)
        r = fn(tr, backend=be, comm=comm, **kw)
        if r is None:
            return None
        runs.append(r)
    runs.sort(key=lambda r: r["wall"])
    r = runs[len(runs) // 2]
    walls = [x["wall"] for x in runs]
    log = r["log"]  # (rounds, ranks, 3)
    nb = r["bunches"]
    wall = r["wall"]
    return {"wall": wall, "bunches": nb, "patterns": nb * B,
            "mcups": nb * B * n_wts(*sizes) / wall / 1e6,
            "mcups_low": nb * B * n_wts(*sizes) / max(walls) / 1e6,
            "mcups_high": nb * B * n_wts(*sizes) / min(walls) / 1e6, "repeats": len(walls),
            "compute_s": float(log[:, 0, 0].sum()), "comm_s": float(log[:, 0, 1].sum()),
            "bytes_per_pattern_per_slave": float(log[:, -1, 2].sum() / (nb * B)),
            "loadavg": list(os.getloadavg())}


def _warmup(tr, sizes, p, *, setup: Setup, backend: str, comm) -> dict | None:
    """One measured PP run of ``p["bunches"]`` bunches (compressed input, one chunk), as
    :func:`_perf` times its 3, every bunch's time kept: the slowest rank's compute and
    communication per bunch (reproduce/paper1/bunch.py ``collect``'s steps; the rounds of the
    chunk and the utterance boundaries left out), and the run's wall."""
    from reproduce.paper1.pattern_bunch import train_pattern_bunch

    B, nb = p["bunch"], p["bunches"]
    cfg = BunchConfig(bunch=B, lr=1e-4, epochs=1, pipelined=False, compressed=True, chunk=nb * B,
                      max_bunches=nb)
    be = "local" if backend == "local" else "mpi"
    if be == "mpi" and p["P"] == 1:
        be, comm = "inprocess", None
    r = train_pattern_bunch(tr, sizes=sizes, activation=setup.activation, cfg=cfg, seed=p["seed"],
                            workers=p["P"], backend=be, comm=comm, init_scale=setup.init_scale)
    if r is None:
        return None
    steps = r["steps"]  # (bunches, 4): the slowest rank's compute and communication, B, bytes
    return {"compute_s": steps[:, 0].tolist(), "comm_s": steps[:, 1].tolist(), "wall": r["wall"],
            "loadavg": list(os.getloadavg())}


def _fwd(tr, sizes, p, *, setup: Setup, backend: str, comm) -> dict | None:
    """Forward pass only (§3.4, Fig. 5): NP or PP on P ranks and the serial forward pass
    (one BLAS thread) of the same weights over the same patterns, alternated
    ``perf_repeats`` times within this task; medians and spread of both."""
    from threadpoolctl import threadpool_limits

    from reproduce.paper1.spert import n_wts
    from reproduce.paper1.forward_parallel import forward_parallel, serial_forward

    B, P = p["bunch"], p["P"]
    n = min(setup.measured_patterns if p["strategy"] == "NP" else 3 * B, tr.n_frames)
    x = tr.windows(np.arange(n))  # (n, 156)
    be = "local" if backend == "local" else "mpi"
    if be == "mpi" and P == 1:
        be, comm = "inprocess", None
    kw = dict(sizes=sizes, activation=setup.activation, seed=p["seed"], bunch=B,
              init_scale=setup.init_scale)
    par, ser = [], []
    for _ in range(setup.perf_repeats):
        with threadpool_limits(1):
            ser.append(serial_forward(x, **kw)["wall"])
        r = forward_parallel(x, strategy=p["strategy"], workers=P, backend=be, comm=comm, **kw)
        if r is None:
            return None
        par.append(r["wall"])
    W = n * n_wts(*sizes)
    return {"patterns": n, "repeats": len(par), "wall": float(np.median(par)),
            "mcps": W / float(np.median(par)) / 1e6, "mcps_low": W / max(par) / 1e6,
            "mcps_high": W / min(par) / 1e6, "serial_wall": float(np.median(ser)),
            "serial_mcps": W / float(np.median(ser)) / 1e6,
            "over_serial": float(np.median(ser)) / float(np.median(par)),
            "loadavg": list(os.getloadavg())}


# ---- what run_task returns, checked on a cached result (reproduce/result_schema.py) ----
class CalibrationFit(Result):  # perf.calibrate, one bunch size
    c1: float
    c2: float
    c1_fwd: float
    c2_fwd: float
    hidden: list[Count]
    train_s_per_pattern: list[Seconds]
    fwd_s_per_pattern: list[Seconds]


class CalibrateResult(Result):
    fits: dict[str, CalibrationFit]  # {"B": the fits at bunch B}
    c_h: Seconds
    c_h_fwd: Seconds
    latency_s: Seconds
    bandwidth_Bps: float
    profile_source: str


class EmulRow(Result):  # perf.emulate_curve, one P
    P: Count
    T_c: Seconds
    T_h: Seconds
    T_c_reps: list[Seconds]
    T_h_reps: list[Seconds]


class EmulResult(Result):
    rows: list[EmulRow]


class PerfResult(Result):
    wall: Seconds
    bunches: Count
    patterns: Count
    mcups: float
    mcups_low: float
    mcups_high: float
    repeats: Count
    compute_s: Seconds
    comm_s: Seconds
    bytes_per_pattern_per_slave: float
    loadavg: LoadAvg


class WarmupResult(Result):  # _warmup
    compute_s: list[Seconds]
    comm_s: list[Seconds]
    wall: Seconds
    loadavg: LoadAvg


class FwdResult(Result):
    patterns: Count
    repeats: Count
    wall: Seconds
    mcps: float
    mcps_low: float
    mcps_high: float
    serial_wall: Seconds
    serial_mcps: float
    over_serial: float
    loadavg: LoadAvg


class Table2Wer(Result):  # decode.table2_wer
    penalty: float
    dev_wer: list[float]
    penalties: list[float]
    test_wer: float
    test_wer_flat_prior: float
    n_dev_utts: Count
    n_test_utts: Count
    n_test_words: Count


class TrainMeasuredResult(Result):
    cv_acc: list[Fraction]
    train_acc: list[Fraction]
    bunches: Count
    n_train: Count
    n_cv: Count
    # only a run of one of Table 2's configurations has it (is_table2, which needs the setup);
    # it may be left out, never null (pydantic does not validate the default)
    wer: Table2Wer = Field(default=None)


class TrainEmulatedResult(TrainMeasuredResult):
    wer: Table2Wer  # every emulated training run make_tasks makes is one of Table 2's


def result_model(task: Task):
    if task.name == "train":
        return TrainEmulatedResult if task.kind == "emulated" else TrainMeasuredResult
    return {"calibrate": CalibrateResult, "emul": EmulResult, "perf": PerfResult,
            "fwd": FwdResult, "warmup": WarmupResult, "lr_sweep": TrainMeasuredResult}.get(task.name)
