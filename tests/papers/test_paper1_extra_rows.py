"""paper1's added rows (reproduce/paper1/extra_rows.py): Table 1's slave waits from the loop
order, worked by hand from the paper's constants, and the bunch-claim ratios."""
import pandas as pd
import pytest

from reproduce.paper1.extra_rows import bunch_rows, slave_waits, table1_rows
from reproduce.paper1.setup import QUICK


def test_slave_waits_by_hand():
    # Table 1 at B = 48, N_h = 1000: T_c = 48 · 1000 · 212 / 115e6 = 88.49 ms on one slave,
    # T_h = 22 ms, T_d = 4.7 ms (2.7 write + 2.0 read). One slave: 88.49 − 22 = 66.49 ms
    # (paper 64); two: 44.25 − 4.7 − 22 = 17.55 ms for slave 0 (paper 17), 0 for slave 1.
    T_c = 48 * 1000 * 212 / 115e6
    assert slave_waits(T_c, 4.7e-3, 22e-3, 1) == pytest.approx([T_c - 22e-3])
    assert slave_waits(T_c / 2, 4.7e-3, 22e-3, 2) == pytest.approx([T_c / 2 - 4.7e-3 - 22e-3, 0.0])
    # negative control: a host slower than the slaves leaves nothing to wait for
    assert slave_waits(10e-3, 4.7e-3, 22e-3, 2) == [0.0, 0.0]


def test_table1_rows_use_the_loop():
    rows = {r["condition"]: r for r in table1_rows(pd.DataFrame(columns=["figure", "strategy", "hidden", "bunch", "P", "source"]), here_src="emulated (here)",
                                                    hidden=1000, bunch=48) if r["quantity"] == "slave_synch_wait"}
    one = rows["nodes=1;bunch=48;hidden=1000;slave=0;source=modeled (paper)"]
    assert one["ours"] == pytest.approx(48 * 1000 * 212 / 115e6 - 22e-3, rel=1e-9)
    assert one["verdict"] == "by-construction"  # its constants come from Table 1


def _tf(err_by_bunch, n_train=1000):
    return pd.DataFrame([{"mode": "sequential", "hidden": QUICK.fig6_hidden, "bunch": b, "seed": 0,
                          "cv_acc": 1 - e / 100, "n_train": n_train} for b, e in err_by_bunch.items()])


def test_bunch_rows_ratios():
    r = {x["quantity"]: x for x in bunch_rows(_tf({1: 20.0, 12: 22.0, 200: 30.0, 5000: 45.0}), QUICK)}
    assert r["best_in_12_96_over_best"]["ours"] == pytest.approx(22 / 20)
    assert r["moderate_bunch_error_spread"]["ours"] == pytest.approx(30 / 20)
    assert r["large_bunch_error_over_moderate"]["ours"] == pytest.approx(45 / 20)
    assert "updates_per_epoch=1" in r["large_bunch_error_over_moderate"]["condition"]
    # negative control: equal errors read as the paper's "no negative effects"
    flat = {x["quantity"]: x for x in bunch_rows(_tf({1: 20.0, 96: 20.0, 200: 20.0}), QUICK)}
    assert flat["moderate_bunch_error_spread"]["verdict"] == "close"
    assert r["moderate_bunch_error_spread"]["verdict"] == "differs"
