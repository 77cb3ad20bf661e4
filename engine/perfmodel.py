"""Analytic communication models and machine profiles for emulated runs.

An emulated run (more workers than cores) measures every worker's compute and
adds communication time from a model with named machine parameters: a
per-message latency α (``latency_s``) and a bandwidth β (``bandwidth_Bps``).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from time import perf_counter

import numpy as np


@dataclass(frozen=True)
class MachineProfile:
    name: str
    latency_s: float  # α: time of one message step
    bandwidth_Bps: float  # β: bytes per second of one link
    source: str  # where α and β come from
    fitted: bool = False  # True when α or β were fitted to a paper's own numbers

    def allgather_time(self, P: int, nbytes: int) -> float:
        """Allgather of ``nbytes`` per rank by recursive doubling:
        T = ⌈log2 P⌉·α + (P − 1)·nbytes/β  (Thakur, Rabenseifner & Gropp,
        "Optimization of collective communication operations in MPICH",
        IJHPCA 19(1), 2005, §4.1). Zero for one worker.
        """
        if P <= 1:
            return 0.0
        return math.ceil(math.log2(P)) * self.latency_s + (P - 1) * nbytes / self.bandwidth_Bps

    def as_dict(self) -> dict:
        return asdict(self)


def _pingpong(comm, small: int, large: int, reps: int):
    out = {}
    for n in (small, large):
        x = np.zeros(n)
        recv = np.empty((comm.size, n))
        for _ in range(max(10, reps // 10)):
            comm.allgather(x, recv)
        comm.barrier()
        t = perf_counter()
        for _ in range(reps):
            comm.allgather(x, recv)
        out[n] = (perf_counter() - t) / reps
    return out


def measure_here(*, small: int = 8, large: int = 1 << 16, reps: int = 2000) -> MachineProfile:
    """Profile ``here``: allgather between 2 local processes through shared memory.

    With P = 2 the model reads T(s) = α + s/β, so α is the time of a small
    allgather and β follows from the extra time of a large one.
    """
    from engine.comm.local import run_local

    t = run_local(_pingpong, 2, small, large, reps, max_elems=large)[0]
    alpha = t[small]
    beta = (large - small) * 8 / max(t[large] - t[small], 1e-12)
    return MachineProfile(
        "here", alpha, beta,
        source=(f"measured at start-up: mean of {reps} shared-memory allgathers "
                f"between 2 local processes, {small} and {large} float64 per rank"))


def fit_latency(comm_s_per_round, *, P: int, nbytes: int, bandwidth_Bps: float) -> float:
    """Least-squares α for allgather times observed at one P and message size,
    with β fixed: α = mean(T_obs − (P−1)·s/β) / ⌈log2 P⌉.
    """
    obs = np.asarray(comm_s_per_round, dtype=float)
    return float(np.mean(obs - (P - 1) * nbytes / bandwidth_Bps) / math.ceil(math.log2(P)))


# ---- paper1: the MultiSpert performance model (Färber 1997, §2.5) -----------------------
@dataclass(frozen=True)
class SpertModel:
    """Constants of the §2.5 model of a master (host) and P slaves on a shared bus.

    Slave compute per pattern, training: T_c' = c1·N_h' + c2 (§2.5); forward: the
    same form with ``c1_fwd``, ``c2_fwd``. Host time per bunch T_h = c_h·B. Data
    moves at ``bw_write_Bps`` host → slave and ``bw_read_Bps`` slave → host, plus
    ``latency_s`` per message (0 in the paper's model, which has none). Bytes per
    value: ``input_bytes`` (inputs, targets), ``error_bytes`` (NP errors written),
    ``output_bytes`` (outputs or partial sums read), ``weight_bytes`` (PP updates
    read, weights written).
    """

    name: str
    bw_write_Bps: float
    bw_read_Bps: float
    c1_s: float  # s per hidden unit per pattern, training (valid for N_i + N_o of this paper)
    c2_s: float  # s per pattern, training
    c_h_s: float  # host s per pattern
    c1_fwd_s: float
    c2_fwd_s: float
    source: str
    c_h_fwd_s: float = 0.0  # host s per pattern in a forward pass
    input_bytes: int = 2
    error_bytes: int = 4
    output_bytes: int = 2
    weight_bytes: int = 4
    latency_s: float = 0.0
    fitted: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


def n_wts(N_i: int, N_h: int, N_o: int) -> int:
    """§2.5: N_wts = N_h·(N_i + N_o), the connections a training pass updates."""
    return N_h * (N_i + N_o)


def spert_terms(strategy: str, *, P: int, B: int, N_i: int, N_h: int, N_o: int, m: SpertModel,
                forward: bool = False, compressed: bool = True) -> dict:
    """T_d, T_c, T_h of one bunch (§2.5.1 training, §2.5.2 forward), in seconds.

    Training, NP: T_d = B·(N_i + 2N_o)/BW, each slave gets the inputs and the errors
    and returns its partial outputs; with ``compressed`` input the N_i term leaves
    the inner loop (the chunk is sent before training, §3.2, which is what Table 1
    times). PP: T_d = (B/P)·(N_i + N_o)/BW + 2·N_wts/BW. Forward, NP:
    B·(N_i + N_o)/BW; PP: (B/P)·(N_i + N_o)/BW. T_c = B·(c1·N_h/P + c2) for NP,
    (B/P)·(c1·N_h + c2) for PP; T_h = c_h·B (``c_h_fwd`` in a forward pass). Each BW term uses the direction and
    value size of its data; ``latency_s`` is added per message.
    """
    if strategy not in ("NP", "PP"):
        raise ValueError(f"strategy must be 'NP' or 'PP', got {strategy!r}")
    w, r = m.bw_write_Bps, m.bw_read_Bps
    inp = N_i * m.input_bytes / w  # s per pattern to write its inputs
    c1, c2 = (m.c1_fwd_s, m.c2_fwd_s) if forward else (m.c1_s, m.c2_s)
    if strategy == "NP":
        if forward:
            T_d = B * (inp + N_o * m.output_bytes / r) + 2 * m.latency_s
        else:
            T_d = B * ((0.0 if compressed else inp) + N_o * m.error_bytes / w
                       + N_o * m.output_bytes / r) + (2 if compressed else 3) * m.latency_s
        T_c = B * (c1 * N_h / P + c2)
    else:
        share = B / P
        tgt = N_o * m.input_bytes / w
        if forward:
            T_d = share * (inp + N_o * m.output_bytes / r) + 2 * m.latency_s
        else:
            W = n_wts(N_i, N_h, N_o) * m.weight_bytes
            T_d = share * (inp + tgt) + W / r + W / w + 3 * m.latency_s
        T_c = share * (c1 * N_h + c2)
    return {"T_d": T_d, "T_c": T_c, "T_h": (m.c_h_fwd_s if forward else m.c_h_s) * B}


def spert_time(T_d: float, T_c: float, T_h: float, P: int, *, formula: str = "max") -> float:
    """T_trn (or T_fwd) of one bunch on P slaves (§2.5.1).

    ``"printed"``: T_d + T_c if (P − 1)·T_d + T_h < T_c, else P·T_d, as the paper
    prints it. ``"max"``: max(T_d + T_c, P·T_d + T_h); the same first branch, but a
    host-bound loop also pays the host's own time T_h (the sequential host loop of
    Table 1 and Fig. 2), which the printed second branch leaves out.
    """
    if formula == "printed":
        return T_d + T_c if (P - 1) * T_d + T_h < T_c else P * T_d
    if formula == "max":
        return max(T_d + T_c, P * T_d + T_h)
    raise ValueError(f"formula must be 'printed' or 'max', got {formula!r}")


def spert_perf(strategy: str, *, P: int, B: int, N_i: int, N_h: int, N_o: int, m: SpertModel,
               forward: bool = False, compressed: bool = True, formula: str = "max") -> float:
    """Connections per second: training MCUPS·1e6 = B·N_wts/T_trn (§2.5.1), or the
    forward pass's connections per second B·N_wts/T_fwd (§2.5.2)."""
    t = spert_terms(strategy, P=P, B=B, N_i=N_i, N_h=N_h, N_o=N_o, m=m, forward=forward,
                    compressed=compressed)
    return B * n_wts(N_i, N_h, N_o) / spert_time(t["T_d"], t["T_c"], t["T_h"], P, formula=formula)


# The paper's own constants. Table 1 and §3.2: writes at 4.0 MB/s, reads at 2.7 MB/s,
# 4-byte errors and 2-byte partial outputs; raw slave speed about 115 MCUPS; host error
# computation 22 ms per bunch. The bunch of Table 1 is not printed: both its transfers
# give B = 48 (2.7 ms × 4.0 MB/s / (56 × 4 B) = 48.2 and 2.0 ms × 2.7 MB/s / (56 × 2 B)
# = 48.2), so c_h = 22 ms / 48. c1 = (N_i + N_o)/115e6 s per hidden unit per pattern,
# c2 = 0 (not given). The forward constants are not given either: c1_fwd = c1/3
# assumes a forward pass is one of the three matrix products of a training pass (§2), and
# c_h_fwd = 0 that the host computes no error in a forward pass.
TABLE1_BUNCH = 48
MULTISPERT_RAW_CUPS = 115e6
MULTISPERT_1997 = SpertModel(
    "multispert1997", bw_write_Bps=4.0e6, bw_read_Bps=2.7e6,
    c1_s=(156 + 56) / MULTISPERT_RAW_CUPS, c2_s=0.0, c_h_s=22e-3 / TABLE1_BUNCH,
    c1_fwd_s=(156 + 56) / MULTISPERT_RAW_CUPS / 3, c2_fwd_s=0.0,
    source=("Färber 1997 Table 1 and §3.2: 4.0 MB/s write, 2.7 MB/s read, 4-byte errors, "
            "2-byte outputs, ~115 MCUPS raw per board, 22 ms host error computation at the "
            "B = 48 implied by Table 1's transfer times; c2 = 0, c1_fwd = c1/3, c_h_fwd = 0 assumed; "
            "2-byte inputs and 4-byte weights assumed"))


def fit_line(x, y) -> tuple[float, float]:
    """Least squares y ≈ a·x + b; returns (a, b). Used to fit c1, c2 (§2.5: 'both
    constants may be determined experimentally from single Spert board runs')."""
    a, b = np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)
    return float(a), float(b)
