"""Our node-parallel implementation's time model (not the paper's): the slowest worker's
operations · t_a plus one recursive-doubling allgather per exchanged layer
(engine/strategies/node.py sends one message per layer; §6 charges a broadcast per node).
Used by report.py (the modeled Tables 2–3 rows) and why.py (the width's part of the gap)."""
from __future__ import annotations

from engine.perfmodel import blocked_exchange_time
from engine.schedule import LinearDistribution


def blocked_time(sizes, P: int, passes: str, *, t_a: float, t_startup: float, t_data: float):
    """Our implementation's model: slowest worker's operations · t_a + one allgather per
    exchanged layer (forward: L of them; backward: L more)."""
    d = [LinearDistribution(int(n), P) for n in sizes]
    L = len(sizes) - 1
    I = [x.max_count for x in d]
    ops = sum((sizes[l - 1] + 1) * I[l] for l in range(1, L + 1))
    nx = L
    if passes == "forward_backward":
        ops += sum(sizes[l + 1] * I[l] for l in range(1, L)) + I[L]
        nx += L
    comm = sum(blocked_exchange_time(P, I[l], t_startup=t_startup, t_data=t_data)
               for l in range(1, L + 1)) * (nx // L)
    return t_a * ops + comm
