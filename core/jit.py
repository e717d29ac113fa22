"""Where numba keeps the compiled rules kernels, so that they compile once per machine.

The games' kernels (e.g. :mod:`tapeo_env.rules.kernels`) are ``@njit(cache=...)`` functions;
numba stores each compiled kernel on disk and later processes (the tournament's spawned workers
included) load it instead of compiling again. Numba looks, in order, at ``NUMBA_CACHE_DIR``, the
``__pycache__`` folder beside the source file, then its per-user cache folder
(``~/.cache/numba`` on Linux). Checked here (numba 0.68): when the package folder is read-only
(a site-packages without write access, a read-only clone) numba falls back to the per-user
folder silently; but when that is not writable either (a read-only or missing ``HOME``), numba
refuses to compile a ``cache=True`` function at all (``RuntimeError: cannot cache function ...:
no locator available``). :func:`cache_kernels` closes that gap: it then points numba at a
per-user folder under the temporary directory, and if even that cannot be written the kernels
compile without a disk cache (each process compiles them once, a warning says so).
"""
from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
import types
import warnings
from typing import Optional, Sequence

__all__ = ["cache_kernels", "dependency_stamp", "import_numba", "parallel_for", "prepare_target"]


def _writable(path: str) -> bool:
    """Whether ``path`` exists (made if missing) and a file can be written there."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def _private(path: str) -> bool:
    """Whether ``path`` is (or is made as) a folder of this user that nobody else can write to (a
    shared temporary directory must not let another user plant cache files there)."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    import stat

    mine = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return stat.S_ISDIR(st.st_mode) and mine and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _user_cache_dir() -> str:
    from numba.misc.appdirs import AppDirs

    return AppDirs(appname="numba", appauthor=False).user_cache_dir


#: Kernel source file (real path) -> the Python files its cached kernels are checked against.
_DEPENDS: dict = {}
_WATCHING = False


@functools.lru_cache(maxsize=None)
def _digest(path: str, mtime: float, size: int) -> bytes:
    """sha256 of a file's bytes (memoised by path, mtime and size, as numba's own source hash)."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).digest()


def _python_files(folder: str) -> list:
    """The ``.py`` files directly in ``folder``, sorted (real paths)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.realpath(os.path.join(folder, n)) for n in names if n.endswith(".py")]


def dependency_stamp(source_file: str) -> Optional[bytes]:
    """The combined sha256 of the files a kernel module registered with :func:`cache_kernels`
    depends on (its own folder, ``core`` and its ``depends``), or None for any other file.
    A file that cannot be read counts as empty (a deleted helper changes the stamp too)."""
    files = _DEPENDS.get(os.path.realpath(source_file))
    if files is None:
        return None
    h = hashlib.sha256()
    for f in files:
        try:
            st = os.stat(f)
            h.update(f.encode() + _digest(f, st.st_mtime, st.st_size))
        except OSError:
            h.update(f.encode() + b"<missing>")
    return h.digest()


def _watch_dependencies() -> None:
    """Make numba's disk cache of the registered kernel modules depend on their dependencies.

    numba 0.68 checks a cached kernel against its own source file only (the stamp of
    ``numba.core.caching._SourceFileBackedLocatorMixin.get_source_stamp``): a kernel that calls
    a compiled function of another module, or reads a constant of another module (frozen into the
    machine code at compile time), was loaded stale after that module changed. The stamp of a
    file registered here is numba's own stamp plus :func:`dependency_stamp`, so an edit to any
    dependency recompiles the kernels once. Files not registered keep numba's behaviour
    unchanged (other numba users of the process are not affected). Idempotent.
    """
    global _WATCHING
    if _WATCHING:
        return
    from numba.core import caching

    mixin = caching._SourceFileBackedLocatorMixin
    numba_stamp = mixin.get_source_stamp

    def get_source_stamp(self):
        stamp = numba_stamp(self)
        extra = dependency_stamp(getattr(self, "_py_file", ""))
        return stamp if extra is None else (stamp, extra)

    get_source_stamp.__wrapped__ = numba_stamp
    mixin.get_source_stamp = get_source_stamp
    _WATCHING = True


def cache_kernels(source_file: str, depends: Sequence[str] = ()) -> bool:
    """Make sure numba can cache the kernels of ``source_file``; return the ``cache=`` flag to
    compile them with.

    The cached kernels are also checked against their dependencies (:func:`_watch_dependencies`):
    every ``.py`` file of ``source_file``'s folder, of ``core`` and of each folder in
    ``depends``; a change to any of them compiles the kernels again (once).

    Args:
        source_file: path of the module defining the kernels (its ``__file__``).
        depends: more folders whose ``.py`` files the kernels use (e.g. a game's ``rules``
            folder for a bot's kernels).

    Returns:
        True when numba has a writable cache location for them: ``NUMBA_CACHE_DIR`` (numba's
        ``config.CACHE_DIR``) if set, the source's ``__pycache__``, numba's per-user cache
        folder, or else ``<tempdir>/numba-cache-<uid>`` (made private to the user; refused if another user owns
        it or may write to it), which is then set as numba's
        ``config.CACHE_DIR`` for the process (the only case where this changes numba's
        settings: numba could cache nothing there without it). False (with a
        ``RuntimeWarning``) when no location can be written: compile without a disk cache.
    """
    from numba.core import config

    files = _python_files(os.path.dirname(os.path.abspath(source_file))) + _python_files(os.path.dirname(__file__))
    for folder in depends:
        files += _python_files(os.fspath(folder))
    _DEPENDS[os.path.realpath(source_file)] = tuple(sorted(set(files)))
    _watch_dependencies()
    if config.CACHE_DIR:
        return True
    if _writable(os.path.join(os.path.dirname(os.path.abspath(source_file)), "__pycache__")):
        return True
    if _writable(_user_cache_dir()):
        return True
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    fallback = os.path.join(tempfile.gettempdir(), f"numba-cache-{uid}")
    if _private(fallback) and _writable(fallback):
        config.CACHE_DIR = fallback
        return True
    warnings.warn(f"no writable folder for numba's cache (the package folder, {_user_cache_dir()}, {fallback}): "
                  "the rules kernels compile in every process; set NUMBA_CACHE_DIR to a writable folder",
                  RuntimeWarning, stacklevel=2)
    return False


_TARGET_READY = False


def prepare_target() -> None:
    """Load numba's CPU target (its typing and lowering registries) once per process, as the
    first compiled or cached kernel call would, but without the ``scipy.linalg`` import that
    numba's BLAS probe makes on the way (``numba.np.arraymath`` calls ``ensure_blas`` at import:
    about half of a warm start's first kernel call when scipy is installed; the kernels use no
    BLAS). Where ``scipy.linalg`` is already imported nothing is blocked.

    Effect on other numba code of the process: ``numba.np.arraymath._HAVE_BLAS`` is False, so
    numba's ``np.correlate`` / ``np.convolve`` use numba's own inner-product loop instead of BLAS
    (same results up to the order of the additions); ``np.dot`` and ``np.linalg`` in numba
    functions still work (they import scipy when they are compiled). Idempotent.
    """
    global _TARGET_READY
    if _TARGET_READY:
        return
    import sys

    from numba.core.registry import cpu_target

    block = "scipy.linalg" not in sys.modules
    if block:
        sys.modules["scipy.linalg"] = None          # an import of it raises ImportError meanwhile
    try:
        cpu_target.target_context.refresh()
        cpu_target.typing_context.refresh()
    finally:
        if block and sys.modules.get("scipy.linalg", 0) is None:
            del sys.modules["scipy.linalg"]
    _TARGET_READY = True


class _YamlOnUse(types.ModuleType):
    """Stands for ``yaml`` in numba's config module (see :func:`import_numba`): the real PyYAML is
    imported the first time numba uses it (``yaml.safe_load`` of a ``.numba_config.yaml``)."""

    def __getattr__(self, name: str):
        import importlib

        if sys.modules.get("yaml") is self:
            del sys.modules["yaml"]
        return getattr(importlib.import_module("yaml"), name)


def import_numba() -> types.ModuleType:
    """``import numba``, without the two imports numba's start makes that a compiled kernel never
    uses (numba 0.68, measured with ``-X importtime``: together 5-15% of numba's own import):

    * ``scipy`` (``numba/__init__`` imports it only to refuse a SciPy older than 1.0; numba's
      BLAS-backed functions import ``scipy.linalg`` when they are compiled, as before): absent
      while numba imports, so that check is skipped;
    * ``yaml`` (``numba.core.config`` imports PyYAML at start to read a ``.numba_config.yaml``
      if the working folder holds one, now or at a later compile): where PyYAML is installed, a
      stand-in that imports it on first use, so such a file is read exactly as before.

    Nothing changes when numba is imported already (then returned as it is), and neither name
    stays in ``sys.modules`` unless it was there or numba read a config file. Idempotent.
    """
    if "numba" in sys.modules:
        return sys.modules["numba"]
    import importlib.util

    scipy_absent = "scipy" not in sys.modules
    yaml = None
    if "yaml" not in sys.modules and importlib.util.find_spec("yaml") is not None:
        yaml = sys.modules["yaml"] = _YamlOnUse("yaml")
    if scipy_absent:
        sys.modules["scipy"] = None          # an import of it raises ImportError meanwhile
    try:
        import numba
    finally:
        if scipy_absent and "scipy" in sys.modules and sys.modules["scipy"] is None:
            del sys.modules["scipy"]
        if yaml is not None and sys.modules.get("yaml") is yaml:
            del sys.modules["yaml"]
    return numba


def parallel_for(min_batch: "int | None", games: int) -> bool:
    """Whether a batched engine runs a call over ``games`` games with its parallel drivers (numba
    ``prange`` over chunks of games; the same results bit for bit, the games being independent):
    only when asked (``min_batch`` not None, the engines' ``parallel_min_batch``), for at least
    ``min_batch`` games, and when numba has more than one thread (``numba.set_num_threads``,
    ``NUMBA_NUM_THREADS``; by default the CPUs this process may run on)."""
    if min_batch is None or games < min_batch:
        return False
    return _num_threads() > 1


def _num_threads() -> int:
    """``numba.get_num_threads()`` (this thread's count, ``numba.set_num_threads``), once numba's
    thread pool is up read directly from the threading layer (numba's
    ``numba.np.ufunc.parallel._get_num_threads``, as ``get_num_threads`` does after taking two
    locks: 0.4 us instead of 2.6 us, measured on the shared 2-core machine; an engine's step asks
    on every call)."""
    global _NUM_THREADS
    if _NUM_THREADS is None:
        from numba.np.ufunc import parallel

        parallel.get_num_threads()                      # starts the pool, as the first prange call would
        get = getattr(parallel, "_get_num_threads", None)
        _NUM_THREADS = get if getattr(parallel, "_is_initialized", False) and get is not None \
            else parallel.get_num_threads
    k = _NUM_THREADS()
    if k <= 0:                                          # numba's own check and error
        import numba

        return numba.get_num_threads()
    return k


_NUM_THREADS = None
