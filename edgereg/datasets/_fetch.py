"""Download a dataset's original files once, check them, keep them in the user's data folder.

Each file is the one at its recorded commit of its public repository
(``_sources.SOURCES``), fetched from
``https://raw.githubusercontent.com/<repository>/<commit>/<path>``. It is
written to ``<file>.part`` first; an interrupted download resumes from there
with an HTTP ``Range`` request (or starts again when the server sends the
whole file), a complete one is checked against its size and sha256 and only
then renamed to its place. A file already there with the right sha256 is not
downloaded again.

Where: ``$EDGEREG_DATA`` when set, else the platform's user data folder
(``$XDG_DATA_HOME/edgereg`` or ``~/.local/share/edgereg`` on Linux,
``~/Library/Application Support/edgereg`` on macOS, ``%LOCALAPPDATA%\\edgereg``
on Windows), laid out as ``<folder>/<dataset directory>/<file>``, the layout
``load(name, root=...)`` reads. ``$EDGEREG_DATA_URL`` (or ``base_url=``)
replaces the source URLs by ``<base>/<dataset directory>/<file>``: a mirror,
or a local server in the tests.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TextIO

from ._registry import DataFileError, _spec
from ._sources import SOURCES

#: The environment variable that moves the data folder.
DATA_ENV = "EDGEREG_DATA"
#: The environment variable that replaces the source URLs by ``<base>/<dir>/<file>``.
URL_ENV = "EDGEREG_DATA_URL"
_RAW = "https://raw.githubusercontent.com"
_BLOCK = 1 << 16


def get_data_home(folder: str | os.PathLike[str] | None = None) -> Path:
    """The folder downloaded datasets are kept in (not created here).

    ``folder`` when given, else ``$EDGEREG_DATA``, else the platform's user
    data folder followed by ``edgereg``.
    """
    if folder is not None:
        return Path(folder)
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env)
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif os.name == "nt":
        local = os.environ.get("LOCALAPPDATA")
        base = Path(local) if local else Path.home() / "AppData" / "Local"
    else:
        xdg = os.environ.get("XDG_DATA_HOME")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "edgereg"


def dataset_files(name: str, variant: int | None = None) -> list[str]:
    """The files of a dataset, as ``<directory>/<file>`` (every split's)."""
    spec = _spec(name, variant)
    files = list(spec.files)
    if "test" in spec.options:
        files.append(spec.options["test"][0])
    return [f"{spec.directory}/{f}" for f in files]


def source_url(rel: str, base_url: str | None = None) -> str:
    """The URL a file is downloaded from: its raw URL at the recorded commit, or
    ``<base>/<rel>`` with ``base_url`` (or ``$EDGEREG_DATA_URL``)."""
    base = base_url if base_url is not None else os.environ.get(URL_ENV)
    if base:
        return f"{base.rstrip('/')}/{rel}"
    f = SOURCES[rel]
    return f"{_RAW}/{f.repository}/{f.commit}/{f.path}"


def is_fetched(name: str, variant: int | None = None,
               folder: str | os.PathLike[str] | None = None) -> bool:
    """Whether every file of a dataset is in the data folder (not checked here:
    ``load`` checks each file's sha256 when it reads it)."""
    home = get_data_home(folder)
    return all((home / rel).is_file() for rel in dataset_files(name, variant))


def fetch(
    name: str,
    *,
    variant: int | None = None,
    data_home: str | os.PathLike[str] | None = None,
    base_url: str | None = None,
    progress: bool | TextIO = True,
    timeout: float = 30.0,
    attempts: int = 4,
) -> Path:
    """Download a dataset's files into the data folder, once; return that folder.

    Every file is downloaded from its public repository at the recorded
    commit, its sha256 checked, and kept; a file already there with the
    right sha256 is not downloaded again. Afterwards ``load(name)`` reads it
    from there with no ``root``.

    Parameters
    ----------
    name : str
        A name from :func:`list_datasets` (bundled names fetch their original
        files, which ``load(name, root=folder)`` parses).
    variant : int, optional
        As in :func:`load` (``"hyperplane"``).
    data_home : path-like, optional
        The folder to keep the files in (default: ``$EDGEREG_DATA``, else the
        user data folder, see :func:`get_data_home`).
    base_url : str, optional
        Download ``<base_url>/<directory>/<file>`` instead of the source
        URLs (default: ``$EDGEREG_DATA_URL`` when set): a mirror.
    progress : bool or file, default True
        Report progress on stderr (or on the file given).
    timeout : float, default 30
        Seconds a connection may stay silent.
    attempts : int, default 4
        Tries per file; each try after a broken one resumes where it stopped.

    Returns
    -------
    pathlib.Path
        The data folder (what ``load(name, root=...)`` takes).

    Raises
    ------
    DataFileError
        No network (the message gives the URL and where to put the file by
        hand), a file the server does not have, a download that kept
        breaking, or a file whose sha256 is not the recorded one (nothing is
        kept then).
    """
    home = get_data_home(data_home)
    stream = sys.stderr if progress is True else (progress or None)
    for rel in dataset_files(name, variant):
        dest = home / rel
        expected = SOURCES[rel]
        if dest.is_file() and dest.stat().st_size == expected.size and (
                _sha256(dest) == expected.sha256):
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        _download(source_url(rel, base_url), dest, rel, stream, timeout, max(1, int(attempts)))
    return home


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _by_hand(url: str, dest: Path, rel: str) -> str:
    f = SOURCES[rel]
    return (f"To install it by hand, download {url} on a machine with network access and "
            f"put it at {dest} ({f.size:,} bytes, sha256 {f.sha256}); or set {DATA_ENV} "
            f"to a folder holding {rel}.")


class _Progress:
    """``\\r<file>: 40% (1.2 of 2.9 MB)`` on a terminal, at most every 0.25 s; a
    start and an end line otherwise."""

    def __init__(self, stream: TextIO | None, rel: str, total: int) -> None:
        self.stream, self.rel, self.total = stream, rel, total
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self.last = 0.0

    def show(self, done: int, note: str = "", final: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not final and not note and (not self.tty or now - self.last < 0.25):
            return
        self.last = now
        pct = 100.0 * done / self.total if self.total else 100.0
        line = (f"{self.rel}: {pct:3.0f}% ({done / 1e6:.1f} of {self.total / 1e6:.1f} MB)"
                f"{' ' + note if note else ''}")
        end = "\n" if final or note or not self.tty else ""
        self.stream.write(("\r" if self.tty else "") + line + end)
        self.stream.flush()


def _download(url: str, dest: Path, rel: str, stream: TextIO | None, timeout: float,
              attempts: int) -> None:
    expected = SOURCES[rel]
    part = dest.with_name(dest.name + ".part")
    bar = _Progress(stream, rel, expected.size)
    if stream is not None:
        stream.write(f"{rel}: downloading {url}\n")
    for attempt in range(attempts):
        have = part.stat().st_size if part.is_file() else 0
        if have > expected.size:  # not a prefix of this file
            part.unlink()
            have = 0
        if have == expected.size:
            break
        headers = {"User-Agent": "edgereg-fetch"}
        if have:
            headers["Range"] = f"bytes={have}-"
        request = urllib.request.Request(url, headers=headers)
        try:
            response = urllib.request.urlopen(request, timeout=timeout)  # noqa: S310
        except urllib.error.HTTPError as exc:
            if exc.code == 416 and have:  # the part is not a prefix the server knows
                part.unlink()
                continue
            if exc.code == 404:
                raise DataFileError(
                    f"{url}: not found on the server (HTTP 404). {_by_hand(url, dest, rel)}"
                ) from None
            raise DataFileError(f"{url}: HTTP {exc.code} {exc.reason}. "
                                f"{_by_hand(url, dest, rel)}") from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", exc)
            raise DataFileError(
                f"cannot download {rel}: no connection to {url} ({reason}). Check the "
                f"network and run again (a partial download resumes). "
                f"{_by_hand(url, dest, rel)}"
            ) from None
        with response:
            resumed = have and response.status == 206 and response.headers.get(
                "Content-Range", "").startswith(f"bytes {have}-")
            if not resumed:
                have = 0  # the whole file again (a server that ignores Range)
            bar.show(have, "resuming" if resumed else ("" if attempt == 0 else "restarting"))
            try:
                with open(part, "ab" if resumed else "wb") as out:
                    while have < expected.size:
                        block = response.read(min(_BLOCK, expected.size - have))
                        if not block:
                            break
                        out.write(block)
                        have += len(block)
                        bar.show(have)
            except (OSError, http.client.HTTPException) as exc:
                if isinstance(exc, OSError) and exc.filename is not None:
                    raise DataFileError(f"cannot write {part}: {exc}") from None
                bar.show(have, f"broken off ({type(exc).__name__})")
                continue
        if have < expected.size:
            bar.show(have, "broken off")
    have = part.stat().st_size if part.is_file() else 0
    if have != expected.size:
        raise DataFileError(
            f"{url}: the download broke off {attempts} times ({have:,} of {expected.size:,} "
            f"bytes kept in {part}; run again to resume). {_by_hand(url, dest, rel)}"
        )
    digest = _sha256(part)
    if digest != expected.sha256:
        part.unlink()
        raise DataFileError(
            f"{url}: sha256 {digest}, expected {expected.sha256}: not the recorded file "
            f"(removed; nothing kept). {_by_hand(url, dest, rel)}"
        )
    os.replace(part, dest)
    bar.show(have, final=True)
