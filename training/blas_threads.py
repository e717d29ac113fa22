"""Threads of numpy's BLAS (OpenBLAS) in the training process.

The opponents of the batched training envs run their networks in numpy
(:meth:`hod.training.numpy_policy.NumpyPolicy.act_batch`): matrix products of a few dozen rows. By
default OpenBLAS splits such products over every core; on a 2-core machine shared with the
learner (and other jobs), waking and synchronising those threads made each product about 10x
slower (measured: 2 ms instead of 0.18 ms for 12 rows through a [256, 256] network). The trainer
therefore gives BLAS as many threads as torch (``torch_threads``, 1 by default).

:func:`set_blas_threads` uses ``threadpoolctl`` when it is installed; otherwise it calls the
``openblas_set_num_threads`` entry point of the OpenBLAS library already loaded by numpy
(through ``ctypes``, the same call threadpoolctl makes). Other BLAS libraries are left alone.
"""
from __future__ import annotations

import ctypes
import importlib
from typing import Optional

#: OpenBLAS entry points, plain and as renamed by the scipy-openblas wheels numpy ships.
_SETTERS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_")
_GETTERS = ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
            "openblas_get_num_threads64_")


def _loaded_openblas() -> list[str]:
    """Paths of the OpenBLAS shared libraries mapped into this process (Linux ``/proc/self/maps``)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "openblas" in line.lower() and "/" in line}
    except OSError:
        return []
    return sorted(p for p in paths if ".so" in p)


def _call(lib, names, *args) -> Optional[int]:
    for name in names:
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = ctypes.c_int if "get" in name else None
            out = fn(*[ctypes.c_int(a) for a in args])
            return int(out) if out is not None else 0
    return None


def set_blas_threads(n: int) -> Optional[int]:
    """Limit numpy's BLAS to ``n`` threads for the rest of the process.

    Args:
        n: threads (>= 1).

    Returns:
        The previous number of threads, or None when no OpenBLAS library could be reached (then
        nothing changed).

    Raises:
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"n={n!r} BLAS threads; legal values: integers >= 1")
    importlib.import_module("numpy")  # loads numpy's BLAS

    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        before = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
        threadpool_limits(limits=n, user_api="blas")
        return before[0] if before else None
    previous = None
    for path in _loaded_openblas():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        got = _call(lib, _GETTERS)
        if _call(lib, _SETTERS, n) is not None:
            previous = got if previous is None else previous
    return previous
