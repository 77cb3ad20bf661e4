"""Cross-memory attach: one process copies another's memory straight into its own
(Linux ``process_vm_readv(2)``, kernel 3.2+), as Open MPI's shared-memory transport
does for large messages.

The local backend's allgather otherwise moves every message twice: the sender
copies it into a shared slot, then every receiver copies it out. With a single
copy, each receiver reads the sender's own buffer. On the 16-core host of
``results/machines/xeon207x16/`` that double copy made the local allgather of
1e5 float64 at P = 2 take 256 µs against Open MPI's 173 µs.

Whether a worker may read a sibling's memory depends on ptrace permissions
(same user, Yama's ptrace_scope, a container's seccomp filter): :func:`available`
tries it once per process, in a forked child reading its parent, and the local
backend falls back to the double copy where it fails.
"""
from __future__ import annotations

import ctypes
import os
import sys

import numpy as np


class _IOVec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


_readv = None
_available: bool | None = None


def _fn():
    global _readv
    if _readv is None:
        f = ctypes.CDLL(None, use_errno=True).process_vm_readv
        f.argtypes = [ctypes.c_int, ctypes.POINTER(_IOVec), ctypes.c_ulong,
                      ctypes.POINTER(_IOVec), ctypes.c_ulong, ctypes.c_ulong]
        f.restype = ctypes.c_ssize_t
        _readv = f
    return _readv


def read_into(pid: int, dst: np.ndarray, addr: int, nbytes: int) -> None:
    """Copy ``nbytes`` at address ``addr`` of process ``pid`` into the C-contiguous ``dst``.

    The kernel may copy less than asked in one call (it stops at a page it cannot
    fault in, or, for very large iovecs, early); the loop goes on from there.
    Raises OSError with the call's errno (EPERM: not allowed; ESRCH: no such process).
    """
    if nbytes > dst.nbytes:
        raise ValueError(f"read of {nbytes} bytes into a buffer of {dst.nbytes}")
    f = _fn()
    base = dst.ctypes.data
    done = 0
    while done < nbytes:
        local = _IOVec(base + done, nbytes - done)
        remote = _IOVec(addr + done, nbytes - done)
        got = f(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        if got <= 0:
            err = ctypes.get_errno() if got < 0 else 0
            raise OSError(err, f"process_vm_readv from pid {pid}: {os.strerror(err) if err else 'no progress'}")
        done += got


def available() -> bool:
    """Whether this process's children may read each other's memory: tried once, in a
    forked child that reads a buffer of its parent (siblings pass the same checks:
    same user, same seccomp filter, and Yama's scope 1 refuses both)."""
    global _available
    if _available is None:
        _available = sys.platform.startswith("linux") and _try()
    return _available


def _try() -> bool:
    try:
        _fn()
    except (OSError, AttributeError):
        return False
    src = np.arange(1024, dtype=np.float64)  # (1024,) what the child must read back
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: exit 0 when it read the parent's buffer right
        code = 1
        try:
            dst = np.empty_like(src)
            read_into(parent, dst, src.ctypes.data, src.nbytes)
            code = 0 if np.array_equal(dst, np.arange(1024, dtype=np.float64)) else 1
        except BaseException:  # noqa: BLE001 - any failure means "not available"
            pass
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
