"""Atomic result files, results generations and the per-configuration run cache.

Every file is written to a temporary name in the same folder, then renamed,
so an interrupted write leaves the previous file intact. One invocation's
files form a *generation* (:func:`write_generation`): they are written into a
staging folder, moved into place once all exist, and ``MANIFEST.json``
(names, sizes, sha1) is written last, so a reader can tell one generation from
a mix (:func:`check_generation`). Finished runs are cached by configuration,
so a rerun after an interruption picks up where it stopped; an unreadable
cache entry is set aside with a warning and its task recomputed.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MANIFEST = "MANIFEST.json"
# Where the machine checks (matrix, validate, calibrate) write unless --out says otherwise:
# git-ignored, so that running them never changes a committed file; the committed ones are
# regenerated with --out results (matrix, validate) or --out results/machines/<name>.
LOCAL = Path("results/local")
STAGING_PREFIX = ".staging-"
# What a null in our JSON (summary.json) stands for: strict JSON has no NaN or Infinity.
NULL_MEANS = "not a number: no value (NaN) or unbounded (±Infinity); strict JSON has neither"
# atomic_write's and check_writable's temporaries: ".<name>.<8 characters of mkstemp>.tmp".
_TMP = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")


def _default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _finite(o):
    """``o`` with every NaN and ±inf (Python or numpy, at any depth) replaced by None."""
    if isinstance(o, (float, np.floating)):
        return float(o) if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    if isinstance(o, np.ndarray):
        return _finite(o.tolist())
    return o


def dumps(obj, *, strict: bool = True) -> str:
    """Indented JSON. ``strict`` (results files): NaN and ±inf become null (:data:`NULL_MEANS`),
    so any JSON parser reads the file; not strict (the cache, read back only by us): kept as
    NaN/Infinity, so a cached result is the result as computed."""
    if strict:
        return json.dumps(_finite(obj), indent=2, default=_default, allow_nan=False) + "\n"
    return json.dumps(obj, indent=2, sort_keys=False, default=_default, allow_nan=True) + "\n"


def _file_mode() -> int:
    """0666 less the umask (0644 under the usual 022): mkstemp's 0600 would keep results
    from the other users of a shared machine."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: Path, data: bytes | str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.filename is None:  # a full disk names no file: name it
            raise OSError(e.errno, e.strerror or str(e), str(path)) from None
        raise


def atomic_savefig(fig, path: Path, **kw) -> None:
    import io

    buf = io.BytesIO()
    # Fixed metadata so an unchanged figure gives identical bytes in a diff.
    fig.savefig(buf, format="png", metadata={"Software": None}, **kw)
    atomic_write(path, buf.getvalue())


def check_writable(out: Path) -> None:
    """Raise OSError with a plain message if results cannot be written under ``out``."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out, prefix=".probe.", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise OSError(f"cannot write results to {out}: {e.strerror or e}") from None


# ---- generations ---------------------------------------------------------------------
def new_invocation_id() -> str:
    """``<UTC time>-<pid>-<random>``: names one invocation, its staging folder and its
    generation; the pid lets a later run tell a dead writer's staging folder from a live one."""
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}-{secrets.token_hex(2)}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, not ours
        return True
    return True


def remove_stale(out: Path) -> list[Path]:
    """Remove what killed writers left in ``out`` and ``out/.cache``: our temporaries
    (``.<name>.<random>.tmp``) and staging folders whose process is gone. Returns them."""
    gone = []
    for d in (Path(out), Path(out) / ".cache"):
        if not d.is_dir():
            continue
        for p in d.iterdir():
            if p.is_file() and _TMP.match(p.name):
                p.unlink(missing_ok=True)
                gone.append(p)
            elif p.is_dir() and p.name.startswith(STAGING_PREFIX):
                pid = p.name[len(STAGING_PREFIX):].split("-")[1:2]
                if not (pid and pid[0].isdigit() and _alive(int(pid[0]))):
                    shutil.rmtree(p, ignore_errors=True)
                    gone.append(p)
    return gone


def _sha1(p: Path) -> str:
    h = hashlib.sha1()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(folder: Path) -> dict | None:
    """``folder``'s MANIFEST.json, or None where there is none (written before manifests)."""
    m = Path(folder) / MANIFEST
    if not m.exists():
        return None
    try:
        d = json.loads(m.read_bytes())
        if not isinstance(d, dict) or not isinstance(d.get("files"), dict):
            raise ValueError("no file list")
        for rel, e in d["files"].items():  # each entry: a path inside the folder, its size and sha1
            if Path(rel).is_absolute() or ".." in Path(rel).parts:
                raise ValueError(f"{rel!r} is not a path inside the folder")
            if not (isinstance(e, dict) and type(e.get("bytes")) is int and e["bytes"] >= 0
                    and isinstance(e.get("sha1"), str)):
                raise ValueError(f"entry {rel!r} lacks its bytes and sha1")
    except ValueError as e:
        raise GenerationError(f"{m}: not a readable manifest ({e})") from None
    return d


class GenerationError(ValueError):
    """A results folder that does not hold one whole generation (its message names the file)."""


def check_generation(folder: Path) -> str | None:
    """The generation id of ``folder``'s files, after checking every file its manifest lists
    (size and sha1); None where there is no manifest. Raises :class:`GenerationError` naming
    the first file of another generation, e.g. after a writer was killed while moving its
    files into place."""
    folder = Path(folder)
    d = read_manifest(folder)
    if d is None:
        return None
    for rel, e in d["files"].items():
        p = folder / rel
        if not p.is_file() or p.stat().st_size != e.get("bytes") or _sha1(p) != e.get("sha1"):
            raise GenerationError(f"{p} is not the file of generation {d.get('generation')} that "
                                  f"{folder / MANIFEST} lists (an interrupted write?); rerun the "
                                  "paper, its cache makes that quick")
    return d.get("generation")


def write_generation(out: Path, write, *, generation: str):
    """Call ``write(staging)``, which writes one generation's files into a fresh staging
    folder inside ``out``; then move them into ``out``, write ``MANIFEST.json`` last and
    remove the files the previous manifest listed that this generation no longer has.
    Returns what ``write`` returns. If ``write`` raises (or the process dies), ``out`` keeps
    the previous generation untouched."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    staging = out / f"{STAGING_PREFIX}{generation}"
    staging.mkdir()
    try:
        result = write(staging)
        files = {p.relative_to(staging).as_posix(): p
                 for p in sorted(staging.rglob("*")) if p.is_file()}
        entries = {rel: {"bytes": p.stat().st_size, "sha1": _sha1(p)} for rel, p in files.items()}
        try:
            old = read_manifest(out)
        except GenerationError:
            old = None
        _move_all(files, out, staging.with_name(staging.name + ".previous"))
        atomic_write(out / MANIFEST, dumps({
            "generation": generation, "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "files": entries}))
        for rel in set((old or {}).get("files", {})) - set(entries):
            if not (Path(rel).is_absolute() or ".." in Path(rel).parts):  # only inside ``out``
                (out / rel).unlink(missing_ok=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(staging.with_name(staging.name + ".previous"), ignore_errors=True)
    return result


def _move_all(files: dict, out: Path, previous: Path) -> None:
    """Move the staged ``files`` ({relative path: staged path}) into ``out``, each old file
    first set aside in ``previous``. If one cannot be put in place (issue 33: an immutable
    report.md, a full disk), every file already moved goes back and OSError names the one
    that failed: ``out`` keeps its previous generation whole. (This is the only window where
    a reader could see a mix; a writer killed in it leaves one that check_generation names.)"""
    done: list[tuple[Path, bool]] = []  # (destination, whether an old file was set aside)
    dst = out
    try:
        for rel, p in files.items():
            dst = out / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            had = dst.exists()
            if had:
                (previous / rel).parent.mkdir(parents=True, exist_ok=True)
                os.replace(dst, previous / rel)
            try:
                os.replace(p, dst)
            except OSError:
                if had:
                    os.replace(previous / rel, dst)
                raise
            done.append((dst, had))
    except OSError as e:
        for moved, had in reversed(done):
            if had:
                os.replace(previous / moved.relative_to(out), moved)
            else:
                moved.unlink(missing_ok=True)
        err = OSError(f"could not put {dst} in place ({e.strerror or e}); the previous "
                      f"generation in {out} was restored")
        err.errno = e.errno
        raise err from None


# ---- the task cache ------------------------------------------------------------------
PROVENANCE = ("_cached_from", "_seconds")  # added to a result on its way out, never stored in it


class RunCache:
    """One JSON file per finished run, named by a hash of its configuration:
    ``{"config": ..., "result": ..., "recorded": {...}}``. ``recorded`` holds what is kept
    but not keyed: the invocation that computed it, when, the 1-minute load at its start
    and the machine.

    ``hits`` counts the runs :meth:`get` found (reported as ``tasks_from_cache``);
    ``sources`` the invocations they came from, each with its ``tasks`` found here and
    their recorded ``seconds`` summed (None if an entry predates that record). A hit's
    result carries ``_cached_from`` (invocation, date_utc, load_1min of the run that
    computed it) and ``_seconds`` (how long the task took then, None if not recorded); a
    result :func:`reproduce.runner.execute` computes carries ``_seconds`` too. Neither is
    stored as part of a result (:data:`PROVENANCE`)."""

    def __init__(self, folder: Path, *, recorded: dict | None = None):
        self.folder = Path(folder)
        self.recorded = dict(recorded or {})  # stored with every put: invocation, machine
        self.hits = 0
        self.sources: dict = {}

    @staticmethod
    def key(config: dict) -> str:
        return hashlib.sha1(json.dumps(config, sort_keys=True, default=_default).encode()).hexdigest()[:20]

    def path(self, config: dict) -> Path:
        return self.folder / f"{self.key(config)}.json"

    def _discard(self, p: Path, why: str) -> None:
        q = p.with_name(p.name + ".corrupt")
        try:
            os.replace(p, q)
            where = f"moved to {q.name}"
        except OSError:
            p.unlink(missing_ok=True)
            where = "deleted"
        print(f"warning: discarding corrupt cache entry {p} ({why}); {where}, the task is recomputed",
              file=sys.stderr, flush=True)

    def get(self, config: dict, *, check=None):
        """The cached result of ``config``, or None. ``check(result)``: None if the result
        has the shape its task returns, else why not (reproduce/result_schema.py); an entry
        that fails it is set aside like a corrupt one, and its task is recomputed."""
        p = self.path(config)
        if not p.exists():
            return None
        try:
            d = json.loads(p.read_bytes())
            if not isinstance(d, dict) or "config" not in d or not isinstance(d.get("result"), dict):
                raise ValueError(f"not a cache entry: {type(d).__name__}"
                                 + (f" with keys {sorted(d)}" if isinstance(d, dict) else ""))
        except (OSError, ValueError) as e:  # JSONDecodeError, UnicodeDecodeError are ValueErrors
            self._discard(p, str(e).splitlines()[0][:120] or type(e).__name__)
            return None
        if d["config"] != json.loads(dumps(config, strict=False)):
            return None
        why = check(d["result"]) if check is not None else None
        if why:
            self._discard(p, why)
            return None
        self.hits += 1
        rec = d.get("recorded") or {}
        came = {k: rec.get(k, "unknown") for k in ("invocation", "date_utc", "load_1min")}
        s = self.sources.setdefault(came["invocation"], {**came, "tasks": 0, "seconds": 0.0})
        s["tasks"] += 1
        sec = rec.get("seconds")  # how long the task took when it was computed
        s["seconds"] = None if sec is None or s["seconds"] is None else s["seconds"] + sec
        return {**d["result"], "_cached_from": came, "_seconds": sec}

    def put(self, config: dict, result: dict, *, load_1min: float | None = None,
            seconds: float | None = None) -> None:
        """Store ``result``; ``recorded`` beside it: the invocation, the machine, when, the
        1-minute load at the task's start and the ``seconds`` the task took."""
        result = {k: v for k, v in result.items() if k not in PROVENANCE}
        rec = {**self.recorded, "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "load_1min": load_1min}
        if seconds is not None:
            rec["seconds"] = round(seconds, 3)
        atomic_write(self.path(config), dumps({"config": config, "result": result, "recorded": rec},
                                              strict=False))
