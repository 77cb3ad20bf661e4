"""paper1's MultiSpert performance model (Färber 1997, §2.5): a master (host) and P slaves on a
shared bus, the T_d, T_c and T_h of a bunch for network- (NP) and pattern-parallel (PP)
training and forward passes, and the connections per second they give."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

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


def fit_line(x, y) -> tuple[float, float]:
    """Least squares y ≈ a·x + b; returns (a, b). Used to fit c1, c2 (§2.5: 'both
    constants may be determined experimentally from single Spert board runs')."""
    a, b = np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)
    return float(a), float(b)
