"""Where edgereg's compiled kernels are cached, and how a damaged entry is rebuilt.

Policy (README, "Compiled-kernel cache"):

* Location: ``NUMBA_CACHE_DIR`` when set (numba's own layout under it);
  otherwise ``EDGEREG_CACHE_DIR`` when set; otherwise the platform's user
  cache folder (``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux,
  ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows) under
  ``edgereg/<edgereg version>-numba<numba version>-<CPU>-<Python tag>``.
  Never inside the installed package: numba's default (``__pycache__`` beside
  the module) leaves files that ``pip uninstall`` does not remove, and the
  folder left behind shadows a later install as an empty namespace package.
* A folder that cannot be written (a read-only home on a device) falls back
  to the temporary folder; where nothing is writable, kernels are compiled in
  every process and not cached. Either says so once (``EdgeregCacheWarning``).
* Integrity: every index (``.nbi``) and data (``.nbc``) file edgereg writes
  starts with a magic string and the sha256 of the rest. A file that is
  truncated, zeroed or altered (an SD card losing power mid-write) fails the
  check and is treated as absent: the kernel is compiled again and the entry
  rewritten, with one warning. Damaged machine code is never handed to LLVM.

The classes below plug into numba's caching (``numba.core.caching``): a
locator for the folder, an index/data file with the integrity check, and a
``FunctionCache`` that uses both; ``_jit`` sets it on each dispatcher, so
numba's own caching of other packages is unchanged.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import platform
import sys
import tempfile
import warnings
from pathlib import Path

import numba
from numba.core import config as numba_config
from numba.core.caching import (
    CompileResultCacheImpl,
    FunctionCache,
    IndexDataCacheFile,
    UserProvidedCacheLocator,
    _CacheLocator,
    _SourceFileBackedLocatorMixin,
)

__all__ = ["EdgeregCacheWarning", "cache_dir", "cache_files", "clear_cache", "enable_cache"]

#: First bytes of every cache file edgereg writes (format version 1).
MAGIC = b"edgereg-numba-cache-1\n"
_DIGEST = hashlib.sha256().digest_size


class EdgeregCacheWarning(UserWarning):
    """The kernel cache was moved, skipped, or a damaged entry was rebuilt."""


_warned: set[str] = set()


def _warn_once(kind: str, message: str) -> None:
    if kind not in _warned:
        _warned.add(kind)
        warnings.warn(message, EdgeregCacheWarning, stacklevel=3)


def _package_version() -> str:
    from ._version import __version__

    return __version__


def _cpu_name() -> str:
    if numba_config.CPU_NAME:  # NUMBA_CPU_NAME=generic: code for any CPU of the family
        return str(numba_config.CPU_NAME)
    try:
        import llvmlite.binding as llvm

        return llvm.get_host_cpu_name() or platform.machine()
    except Exception:  # pragma: no cover - llvmlite always has it in practice
        return platform.machine()


def _user_cache_base() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    if os.name == "nt":
        local = os.environ.get("LOCALAPPDATA")
        return Path(local) if local else Path.home() / "AppData" / "Local"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"


def _key() -> str:
    """``<edgereg version>-numba<numba version>-<CPU>-<Python tag>``."""
    tag = f"py{sys.version_info.major}{sys.version_info.minor}"
    return f"{_package_version()}-numba{numba.__version__}-{_cpu_name()}-{tag}"


def edgereg_root() -> Path:
    """The folder holding every edgereg cache (all versions), without NUMBA_CACHE_DIR."""
    env = os.environ.get("EDGEREG_CACHE_DIR")
    return Path(env) if env else _user_cache_base() / "edgereg"


def _numba_subpath() -> str:
    """numba's folder for edgereg's modules under NUMBA_CACHE_DIR."""
    return _CacheLocator.get_suitable_cache_subpath(str(Path(__file__).resolve()))


def cache_dir() -> Path:
    """The folder this process caches edgereg's kernels in (it may not exist yet)."""
    if numba_config.CACHE_DIR:
        return Path(numba_config.CACHE_DIR) / _numba_subpath()
    return edgereg_root() / _key()


def _fallback_dir() -> Path:
    user = getattr(os, "getuid", lambda: "user")()
    return Path(tempfile.gettempdir()) / f"edgereg-cache-{user}" / _key()


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


class _EdgeregLocator(_SourceFileBackedLocatorMixin, _CacheLocator):
    """edgereg's folder (see the module docstring); source stamp as numba's."""

    _path: Path | None = None  # resolved once per process

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(self._resolve())

    @classmethod
    def _resolve(cls) -> Path:
        if cls._path is None:
            path = cache_dir()
            if not _writable(path):
                fallback = _fallback_dir()
                if not _writable(fallback):
                    raise OSError(f"neither {path} nor {fallback} is writable")
                _warn_once("moved", f"edgereg: {path} is not writable; compiled kernels are "
                                    f"cached in {fallback} instead")
                path = fallback
            cls._path = path
        return cls._path

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            return super().from_function(py_func, py_file)
        except OSError:  # nothing writable: no locator, caching off (enable_cache)
            return None


class _CheckedIndexDataCacheFile(IndexDataCacheFile):
    """numba's index and data files, each prefixed by MAGIC and a sha256 of the rest.

    The index is stamped with numba's stamp of the function's own file and the
    sha256 of the other kernel modules its code reaches (``dependencies``, set
    by ``depend_on_sources``): numba's stamp alone would keep machine code
    that inlined or called an older version of those modules
    (docs/design/caching.md).
    """

    #: sha256 of the sources of the kernel modules reached (empty: none).
    dependencies = b""

    def _stamp(self):
        return self._source_stamp, self.dependencies

    def _save_index(self, overloads):
        # numba's layout inside the checked body: its version, then (stamp, index).
        body = pickle.dumps(self._version, protocol=-1)
        body += self._dump((self._stamp(), overloads))
        self._write_checked(self._index_path, body)

    def _load_index(self):
        body = self._read_checked(self._index_path)
        if body is None:
            return {}
        try:
            stream = io.BytesIO(body)
            if pickle.load(stream) != self._version:
                return {}
            stamp, overloads = pickle.loads(stream.read())
        except Exception:  # a well-formed digest over an unreadable body: rebuild
            self._damaged(self._index_path)
            return {}
        return overloads if stamp == self._stamp() else {}

    def _save_data(self, name, data):
        self._write_checked(self._data_path(name), self._dump(data))

    def _load_data(self, name):
        path = self._data_path(name)
        body = self._read_checked(path)
        if body is None:
            raise OSError(f"no valid cache data in {path}")  # numba's load: a miss
        try:
            return pickle.loads(body)
        except Exception:
            self._damaged(path)
            raise OSError(f"unreadable cache data in {path}") from None

    def _write_checked(self, path, body: bytes) -> None:
        with self._open_for_write(path) as fh:
            fh.write(MAGIC + hashlib.sha256(body).digest() + body)

    def _read_checked(self, path) -> bytes | None:
        """The verified body of ``path``; None when absent or damaged (warned)."""
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            return None
        head = len(MAGIC) + _DIGEST
        body = raw[head:]
        if (len(raw) < head or raw[: len(MAGIC)] != MAGIC
                or hashlib.sha256(body).digest() != raw[len(MAGIC):head]):
            self._damaged(path)
            return None
        return body

    def _damaged(self, path) -> None:
        _warn_once("damaged", f"edgereg: damaged compiled-kernel cache file {path}; the "
                              f"kernel is compiled again and the entry rewritten")


class _EdgeregCacheImpl(CompileResultCacheImpl):
    # NUMBA_CACHE_DIR first (numba's own locator), then edgereg's folder.
    _locator_classes = [UserProvidedCacheLocator, _EdgeregLocator]


class _EdgeregFunctionCache(FunctionCache):
    _impl_class = _EdgeregCacheImpl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _CheckedIndexDataCacheFile(
            cache_path=self._cache_path,
            filename_base=self._impl.filename_base,
            source_stamp=self._cache_file._source_stamp,
        )

    def load_overload(self, sig, target_context):
        # Belt and braces: whatever else fails while loading a verified entry
        # (another numba build writing the same folder) is a miss, not a crash.
        try:
            return super().load_overload(sig, target_context)
        except Exception as exc:
            _warn_once("load", f"edgereg: a cached kernel could not be loaded ({exc!r}); "
                               f"it is compiled again")
            return None


def enable_cache(dispatcher) -> None:
    """Cache ``dispatcher``'s compiled code by edgereg's policy (what cache=True does)."""
    if numba_config.DISABLE_JIT or not hasattr(dispatcher, "py_func"):
        return
    try:
        dispatcher._cache = _EdgeregFunctionCache(dispatcher.py_func)
    except (OSError, RuntimeError) as exc:
        _warn_once("off", f"edgereg: compiled kernels are not cached in this process ({exc}); "
                          f"each process compiles them again")


def depend_on_sources(dispatcher, digest: bytes) -> bool:
    """Make ``dispatcher``'s cache entries valid only for sources whose sha256 is
    ``digest`` (besides its own file, as numba checks); False when edgereg does
    not cache it (caching off in this process, or JIT disabled)."""
    cache = getattr(dispatcher, "_cache", None)
    if not isinstance(cache, _EdgeregFunctionCache):
        return False
    cache._cache_file.dependencies = digest
    return True


def cache_files(path: Path | None = None) -> list[Path]:
    """edgereg's cache files (``*.nbi``, ``*.nbc``) under ``path`` (default: every version)."""
    if path is None:
        path = Path(numba_config.CACHE_DIR) / _numba_subpath() if numba_config.CACHE_DIR \
            else edgereg_root()
    if not path.is_dir():
        return []
    return sorted(p for p in path.rglob("*") if p.suffix in (".nbi", ".nbc") and p.is_file())


def clear_cache() -> tuple[Path, int, int]:
    """Remove edgereg's cache files; returns (folder, files removed, bytes freed).

    Without NUMBA_CACHE_DIR the whole ``edgereg`` folder of the user cache
    (every version) goes; with it, only edgereg's subfolder there.
    """
    import shutil

    if numba_config.CACHE_DIR:
        root = Path(numba_config.CACHE_DIR) / _numba_subpath()
    else:
        root = edgereg_root()
    files = cache_files(root)
    size = sum(p.stat().st_size for p in files)
    if root.is_dir():
        shutil.rmtree(root)
    return root, len(files), size
