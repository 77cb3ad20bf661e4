"""Analytic communication models and machine profiles for emulated runs.

An emulated run (more workers than cores) measures every worker's compute and
adds communication time from a model with named machine parameters: a
per-message latency α (``latency_s``) and a bandwidth β (``bandwidth_Bps``).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from time import perf_counter

import numpy as np


OPS = ("allgather", "allreduce", "broadcast", "barrier")


def _by_P(table) -> dict:
    """{P: value} with integer P (JSON gives string keys)."""
    return {int(P): v for P, v in (table or {}).items()}


PROFILE_MAX_BYTES = 1 << 20  # a calibrated profile is a few kB; more is not a profile


@dataclass(frozen=True)
class MachineProfile:
    """A machine an emulated run is timed on (docs/engine.md).

    Two kinds. An *α/β profile* (``coll`` empty) prices every collective with the
    textbook formulas below from one latency α and one bandwidth β, and leaves the
    measured compute as it is. A *calibrated profile* (``python -m reproduce
    calibrate``, :mod:`engine.calibration`) also holds, per number of workers P:

    - ``coll[op][P]``: measured seconds of one collective, ``[[nbytes, s], ...]``;
      :meth:`collective_time` interpolates linearly in bytes (the barrier is the
      zero-byte point) and in P, and beyond the largest measured P scales the
      latency part by ⌈log2 P⌉ and the bytes part by (P − 1) (:meth:`extrapolated`);
    - ``contention[kernel][P]``: how much slower a reference kernel runs when P
      workers run it at once (median worker, over the kernel alone);
    - ``straggler[kernel][P]``: the expected slowest of P workers' step times over
      the mean step, i.e. what a synchronisation after every step costs;
    - ``kernels``: the reference kernels' seconds per call alone on that machine;
      ``compute_ratio`` = those over the same kernels here (set when loaded), so
      compute measured here is scaled to that machine.

    One paragraph for a report: *an emulated step is each worker's compute as
    measured here, times the profile's speed ratio and its contention factor for
    P workers; every synchronisation then waits for the expected slowest of P
    (the straggler factor) and costs the collective's measured time at that P and
    message size.* With none of the tables (an α/β profile) this is the old
    composition: compute as measured plus the α/β collective time.
    """

    name: str
    latency_s: float  # α: time of one message step
    bandwidth_Bps: float  # β: bytes per second of one link
    source: str  # where α and β come from
    fitted: bool = False  # True when α or β were fitted to reported measurements
    barrier_model: str = "tree"  # "tree": ⌈log2 P⌉·α; "linear": (P − 1)·α (a spin on P − 1 flags)
    description: str = ""  # the machine, in words (calibrated profiles)
    date: str = ""  # when it was measured
    backend: str = ""  # the communicator the collectives were measured on (local, mpi)
    coll: dict = field(default_factory=dict)  # {op: {P: [[nbytes, s], ...]}}
    contention: dict = field(default_factory=dict)  # {kernel: {P: median slowdown}}
    straggler: dict = field(default_factory=dict)  # {kernel: {P: E[slowest of P] / mean}}
    kernels: dict = field(default_factory=dict)  # {kernel: s per call alone there}
    compute_ratio: float = 1.0  # compute there / compute here (1: compute as measured here)

    def __post_init__(self):
        fix = object.__setattr__  # frozen: normalise JSON's string keys once
        fix(self, "coll", {op: {P: sorted((float(b), float(s)) for b, s in pts)
                                for P, pts in _by_P(t).items()} for op, t in self.coll.items()})
        fix(self, "contention", {k: _by_P(t) for k, t in self.contention.items()})
        fix(self, "straggler", {k: _by_P(t) for k, t in self.straggler.items()})

    @property
    def calibrated(self) -> bool:
        return bool(self.coll)

    def measured_P(self, op: str = "allgather") -> list[int]:
        """The numbers of workers its collective ``op`` was measured at (empty: α/β)."""
        return sorted(self.coll.get(op, {}))

    def extrapolated(self, P: int) -> bool:
        """True when P lies beyond every P the profile measured (α/β profiles: never)."""
        Ps = [p for t in self.coll.values() for p in t]
        return bool(Ps) and P > max(Ps)

    def allgather_time(self, P: int, nbytes: int) -> float:
        """Allgather of ``nbytes`` per rank by recursive doubling:
        T = ⌈log2 P⌉·α + (P − 1)·nbytes/β  (Thakur, Rabenseifner & Gropp,
        "Optimization of collective communication operations in MPICH",
        IJHPCA 19(1), 2005, §4.1). Zero for one worker.
        """
        if P <= 1:
            return 0.0
        return math.ceil(math.log2(P)) * self.latency_s + (P - 1) * nbytes / self.bandwidth_Bps

    def collective_time(self, op: str, P: int, nbytes: int) -> float:
        """Time of one collective of P workers, ``nbytes`` per worker: what the emulated
        backend charges (engine/comm/emulated.py). Calibrated: :meth:`_table_time`.
        α/β: allgather :meth:`allgather_time`; allreduce :func:`allreduce_time`;
        broadcast: binomial tree, ⌈log2 P⌉·(α + s/β); barrier: ``barrier_model``.
        Zero for one worker."""
        if P <= 1:
            return 0.0
        if op in self.coll:
            return self._table_time(op, P, nbytes)
        steps = math.ceil(math.log2(P))
        if op == "allgather":
            return self.allgather_time(P, nbytes)
        if op == "allreduce":
            return allreduce_time(self, P, nbytes)
        if op == "broadcast":
            return steps * (self.latency_s + nbytes / self.bandwidth_Bps)
        if op == "barrier":
            return barrier_time_linear(self, P) if self.barrier_model == "linear" else steps * self.latency_s
        raise ValueError(f"no cost model for collective {op!r}")

    def _at(self, op: str, P: int, nbytes: float) -> float:
        """Measured ``op`` at a measured P, linear in bytes between measured sizes; the
        barrier at that P is the zero-byte point, the last segment's slope goes on."""
        pts = list(self.coll[op][P])
        if op != "barrier" and "barrier" in self.coll and P in self.coll["barrier"]:
            b0 = float(np.median([s for _, s in self.coll["barrier"][P]]))
            pts = [(0.0, b0)] + [q for q in pts if q[0] > 0]
        if len(pts) == 1 or op == "barrier":
            return float(np.median([s for _, s in pts]))
        x = np.array([b for b, _ in pts])
        y = np.array([s for _, s in pts])
        if nbytes >= x[-1]:  # a time never falls with more bytes: a falling last slope is flat
            slope = max(0.0, (y[-1] - y[-2]) / (x[-1] - x[-2]))
            return float(y[-1] + slope * (nbytes - x[-1]))
        return float(np.interp(nbytes, x, y))

    def _table_time(self, op: str, P: int, nbytes: int) -> float:
        """Interpolated in P between measured P (linear); beyond the largest, the latency
        part (the zero-byte time) × ⌈log2 P⌉/⌈log2 Pmax⌉ and the rest × (P − 1)/(Pmax − 1),
        the recursive-doubling forms of :meth:`allgather_time`; below the smallest, the
        smallest measured P's time."""
        Ps = sorted(self.coll[op])
        if P in self.coll[op]:
            return self._at(op, P, nbytes)
        if P < Ps[0]:
            return self._at(op, Ps[0], nbytes)
        if P > Ps[-1]:
            Pm = Ps[-1]
            lat = self._at(op, Pm, 0.0)
            rest = max(0.0, self._at(op, Pm, nbytes) - lat)  # bytes never make it faster
            return (lat * math.ceil(math.log2(P)) / math.ceil(math.log2(Pm))
                    + rest * (P - 1) / (Pm - 1))
        hi = next(p for p in Ps if p > P)
        lo = max(p for p in Ps if p < P)
        w = (P - lo) / (hi - lo)
        return (1 - w) * self._at(op, lo, nbytes) + w * self._at(op, hi, nbytes)

    def _factor(self, table: dict, kernel: str, P: int) -> float:
        """A per-P factor of ``kernel`` (1 at P ≤ 1 or without the table): linear in P
        between measured P, the largest measured P's value beyond."""
        t = table.get(kernel)
        if not t or P <= 1:
            return 1.0
        Ps = sorted(t)
        return float(np.interp(P, [1] + Ps, [1.0] + [float(t[p]) for p in Ps]))

    def compute_scale(self, P: int, kernel: str = "small") -> float:
        """Compute measured here × this = compute there with P workers at once:
        ``compute_ratio`` × ``contention[kernel][P]``. 1 for an α/β profile."""
        return self.compute_ratio * self._factor(self.contention, kernel, P)

    def sync_wait(self, P: int, compute_s, kernel: str = "small") -> float:
        """Expected wait at one synchronisation after ``compute_s`` (the workers' mean
        compute since the last one, already scaled): (straggler[kernel][P] − 1)·compute_s,
        the expected slowest of P jittered steps over the mean. 0 for an α/β profile."""
        return (self._factor(self.straggler, kernel, P) - 1.0) * compute_s

    def emulate(self, P: int, compute_s: float, collectives=(), *, kernel: str = "small"
                ) -> tuple[float, float]:
        """(compute s, communication s) of P workers on this machine, composed from
        ``compute_s``, the slowest worker's compute measured here summed over rounds,
        and ``collectives``, ``(op, nbytes, count)`` triples. Compute is scaled by
        :meth:`compute_scale`; communication is every collective's time plus the
        straggler wait (:meth:`sync_wait`) on the scaled compute."""
        c = compute_s * self.compute_scale(P, kernel)
        comm = self.sync_wait(P, c, kernel) + sum(
            n * self.collective_time(op, P, int(b)) for op, b, n in collectives)
        return c, comm

    def as_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        import json

        return json.dumps(self.as_dict(), indent=1) + "\n"

    @classmethod
    def from_dict(cls, d: dict) -> MachineProfile:
        """The profile ``d`` describes, checked first (:func:`engine.profile_schema.check`:
        ValueError naming the field); an unbounded bandwidth may be JSON null."""
        from engine.profile_schema import check

        return cls(**check(d))

    @classmethod
    def load(cls, path) -> MachineProfile:
        """The profile in the JSON file ``path``; ValueError naming the file and the field."""
        import json
        from pathlib import Path

        if Path(path).stat().st_size > PROFILE_MAX_BYTES:
            raise ValueError(f"{path}: {Path(path).stat().st_size:,} bytes, more than a profile "
                             f"holds (at most {PROFILE_MAX_BYTES:,})")
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except ValueError as e:  # JSONDecodeError is one
            raise ValueError(f"{path}: {e}") from None


# Collectives cost nothing: an emulated run under it gives each worker's compute alone
# (a report composes communication later from its own model), or just the numbers.
FREE = MachineProfile("none", 0.0, math.inf,
                      source="no communication cost: compute only, or an emulation for the numbers")


def _pingpong(comm, small: int, large: int, reps: int, bursts: int):
    """Per size, ``bursts`` timed bursts of reps/bursts allgathers, the sizes interleaved
    so that load hits both alike; returns {size: [seconds per allgather of each burst]}."""
    per = max(1, reps // bursts)
    out = {n: [] for n in (small, large)}
    bufs = {n: (np.zeros(n), np.empty((comm.size, n))) for n in (small, large)}
    for n, (x, recv) in bufs.items():
        for _ in range(max(10, per)):  # warm-up
            comm.allgather(x, recv)
    for _ in range(bursts):
        for n, (x, recv) in bufs.items():
            comm.barrier()
            t = perf_counter()
            for _ in range(per):
                comm.allgather(x, recv)
            out[n].append((perf_counter() - t) / per)
    return out


def measure_here(*, small: int = 8, large: int = 1 << 16, reps: int = 2000,
                 bursts: int = 20) -> MachineProfile:
    """Profile ``here``: allgather between 2 local processes through shared memory.

    With P = 2 the model reads T(s) = α + s/β, so α is the time of a small
    allgather and β follows from the extra time of a large one. Each time is the
    median over ``bursts`` interleaved bursts: one descheduling of a process on a
    shared machine can take milliseconds and, in a mean, swamp microsecond
    allgathers (a mean of 500 once gave α = 128 µs and t(large) < t(small)).
    """
    from engine.comm.local import run_local

    b = run_local(_pingpong, 2, small, large, reps, bursts, max_elems=large)[0]
    t = {n: float(np.median(v)) for n, v in b.items()}
    alpha = t[small]
    if t[large] <= t[small]:
        raise RuntimeError(f"allgather of {large} float64 measured no slower than of {small} "
                           f"({t[large]:.3g} s vs {t[small]:.3g} s): the machine is too noisy "
                           "to profile; rerun when it is quieter")
    beta = (large - small) * 8 / (t[large] - t[small])
    return MachineProfile(
        "here", alpha, beta,
        source=(f"measured at start-up: median of {bursts} interleaved bursts of "
                f"{max(1, reps // bursts)} shared-memory allgathers between 2 local processes, "
                f"{small} and {large} float64 per rank"))


# ---- a spin barrier -----------------------------------------------------------------------
def barrier_time_linear(profile: MachineProfile, P: int) -> float:
    """One barrier of P workers: (P − 1)·α. The local backend's barrier has each rank
    spin on the flags of its P − 1 peers (engine/comm/local.py), one cache-line
    transfer each; α is the profile's small-message time between 2 processes.
    Zero for one worker."""
    return 0.0 if P <= 1 else (P - 1) * profile.latency_s


# ---- an allreduce model -------------------------------------------------------------------


def allreduce_time(profile: MachineProfile, P: int, nbytes: int) -> float:
    """Allreduce of ``nbytes`` per rank, Rabenseifner's reduce-scatter + allgather:
    T = 2⌈log2 P⌉·α + 2·(P − 1)/P · nbytes/β (the reduction arithmetic is left out)
    (Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005, §4.4). Zero for one worker.
    """
    if P <= 1:
        return 0.0
    return (2 * math.ceil(math.log2(P)) * profile.latency_s
            + 2 * (P - 1) / P * nbytes / profile.bandwidth_Bps)
