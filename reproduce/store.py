"""Atomic result files and the per-configuration run cache.

Every file is written to a temporary name in the same folder, then renamed,
so an interrupted run leaves the previous results intact (DESIGN.md,
"Results"). Finished runs are cached by configuration, so a rerun after an
interruption picks up where it stopped.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np


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


def dumps(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=False, default=_default, allow_nan=True) + "\n"


def atomic_write(path: Path, data: bytes | str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
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


class RunCache:
    """One JSON file per finished run, named by a hash of its configuration.

    ``hits`` counts the runs :meth:`get` found (reported as ``tasks_from_cache``)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.hits = 0

    @staticmethod
    def key(config: dict) -> str:
        return hashlib.sha1(json.dumps(config, sort_keys=True, default=_default).encode()).hexdigest()[:20]

    def get(self, config: dict):
        p = self.folder / f"{self.key(config)}.json"
        if not p.exists():
            return None
        try:
            d = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError):
            return None
        if d.get("config") != json.loads(dumps(config)):
            return None
        self.hits += 1
        return d["result"]

    def put(self, config: dict, result: dict) -> None:
        atomic_write(self.folder / f"{self.key(config)}.json", dumps({"config": config, "result": result}))
