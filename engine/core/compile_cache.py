"""Compiled code kept on disk between processes, so that a new process answers its first query without
compiling: numba's top-k kernels (:mod:`lexprobe.core.topk_kernels`) and the int8 scan's object code
(:mod:`lexprobe.core.int8_scan`).

The folder is the home's cache (:func:`lexprobe.core.home.cache_dir`: ``$LEXPROBE_CACHE``, else
``<home>/.cache``, the home being the CLI's ``--home`` or the default one). Every entry is keyed by all the code
depends on, so that nothing compiled for one CPU or one version is run by another: numba's by the source file's
hash, the signature and the CPU's name and features (numba's own index key); the object code by the hash of its
LLVM IR, the target triple, the CPU's name and features and llvmlite's version. A folder that cannot be created or
written means no cache: the code is compiled in memory, as without one.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import cache, wraps
from pathlib import Path

from . import home


def compiled_once(build):
    """``build`` cached like ``functools.cache`` and run under numba's compiler lock: two server threads asking for
    an uncompiled kernel together would otherwise both initialise LLVM, which is not thread-safe (a segfault seen
    under 8 concurrent clients), and a numba kernel compiling in another thread holds the same lock. A cached call
    only waits for a compile in progress."""
    cached = cache(build)

    @wraps(build)
    def get(*args):
        from numba.core.compiler_lock import global_compiler_lock

        with global_compiler_lock:
            return cached(*args)

    get.cache_info, get.cache_clear = cached.cache_info, cached.cache_clear
    return get


def cache_dir() -> Path | None:
    """The compiled-code folder, created if needed; None when it cannot be written (a read-only home)."""
    folder = home.cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return None
    return folder.resolve()


@cache
def _function_cache_class():
    """numba's per-function cache with one locator: the compiled-code folder (numba's own locators would pick
    the source tree's ``__pycache__`` first)."""
    from numba.core import caching

    class Locator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        def __init__(self, py_func, py_file):
            folder = cache_dir()
            if folder is None:
                raise OSError("no writable cache folder")
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(folder / "numba" / self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            try:
                return super().from_function(py_func, py_file)
            except OSError:
                return None

        def get_cache_path(self):
            return self._cache_path

    class Impl(caching.CompileResultCacheImpl):
        _locator_classes = [Locator]

    class FunctionCache(caching.FunctionCache):
        _impl_class = Impl

    return FunctionCache


def cached_on_disk(dispatcher):
    """Give a numba dispatcher (``njit`` without ``cache=True``) the on-disk cache in the compiled-code folder;
    without a writable folder it keeps compiling in memory. Returns the dispatcher."""
    try:
        dispatcher._cache = _function_cache_class()(dispatcher.py_func)
    except RuntimeError:  # numba found no locator: the folder cannot be written
        pass
    return dispatcher


def object_key(ir: str, machine) -> str:
    """The object-code key of ``ir`` compiled by ``machine`` (an llvmlite target machine)."""
    import llvmlite
    import llvmlite.binding as llvm

    parts = (ir, machine.triple, llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten(),
             llvmlite.__version__, ".".join(map(str, llvm.llvm_version_info)))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def load_object(key: str) -> bytes | None:
    """The object code stored under ``key``, None when absent or damaged (each file starts with the SHA-256 of
    the rest)."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        data = (folder / "objects" / f"{key}.o").read_bytes()
    except OSError:
        return None
    digest, code = data[:32], data[32:]
    return code if code and hashlib.sha256(code).digest() == digest else None


def save_object(key: str, code: bytes) -> None:
    """Store object code under ``key`` (written to a temporary file, then renamed: a reader sees all or none);
    silently nothing when the folder cannot be written."""
    folder = cache_dir()
    if folder is None:
        return
    try:
        (folder / "objects").mkdir(exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder / "objects", suffix=".part") as out:
            out.write(hashlib.sha256(code).digest() + code)
            out.flush()
            os.link(out.name, folder / "objects" / f"{key}.o")  # fails if another process stored it first
    except OSError:
        return
