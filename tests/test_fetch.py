"""``datasets.fetch`` and ``edgereg data fetch`` against a local HTTP server.

The server (stdlib ``http.server`` in a thread, on 127.0.0.1 only) serves the
shared data folder laid out as ``<dir>/<file>``, answers ``Range`` requests,
and can be told to break a response off half way, to ignore ``Range``, or to
alter a file's bytes. Nothing here reaches beyond 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import io
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from edgereg import datasets as D
from edgereg.cli import main
from edgereg.datasets import DataFileError
from edgereg.datasets._sources import SOURCES

SMALL = "chess"  # one file of 13 kB
REL = "sea/SEA_training_data.csv"  # 1 MB: long enough to break off


class _Server:
    """What the handler does; the requests it saw: (path, Range header or None)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cut_once: set[str] = set()  # break these off half way, once
        self.cut_always: set[str] = set()
        self.ignore_range = False
        self.corrupt: set[str] = set()  # flip a byte of these
        self.requests: list[tuple[str, str | None]] = []


def _handler(server: _Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802
            rel = self.path.lstrip("/")
            rng = self.headers.get("Range")
            server.requests.append((rel, rng))
            path = server.root / rel
            if ".." in rel or not path.is_file():
                self.send_error(404)
                return
            data = bytearray(path.read_bytes())
            if rel in server.corrupt:
                data[len(data) // 2] ^= 0xFF
            start = 0
            if rng and not server.ignore_range:
                start = int(rng.removeprefix("bytes=").split("-")[0])
                if start >= len(data):
                    self.send_error(416)
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            body = bytes(data[start:])
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            cut = rel in server.cut_always or rel in server.cut_once
            server.cut_once.discard(rel)
            self.wfile.write(body[: len(body) // 2] if cut else body)
            self.wfile.flush()
            self.close_connection = True

    return Handler


@pytest.fixture
def server(shared_data: Path):
    state = _Server(shared_data)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"  # type: ignore[attr-defined]
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("EDGEREG_DATA", str(folder))
    monkeypatch.delenv("EDGEREG_DATA_URL", raising=False)
    return folder


def _fetch(server, name, **kw):
    log = io.StringIO()
    kw.setdefault("timeout", 10.0)
    D.fetch(name, base_url=server.url, progress=log, **kw)
    return log.getvalue()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_good_download_is_kept_and_load_reads_it(server, home, shared_data):
    with pytest.raises(ValueError, match=r"not downloaded yet: run edgereg.datasets.fetch"):
        D.load(SMALL)
    log = _fetch(server, SMALL)
    path = home / "chess" / "chessweka.csv"
    assert _sha(path) == SOURCES["chess/chessweka.csv"].sha256
    assert "chess/chessweka.csv: downloading" in log and "100%" in log
    assert not list(home.rglob("*.part"))
    got, want = D.load(SMALL), D.load(SMALL, shared_data)
    np.testing.assert_array_equal(got.X, want.X)
    np.testing.assert_array_equal(got.y, want.y)
    assert D.is_fetched(SMALL)
    # Once there, it is not downloaded again.
    n = len(server.requests)
    _fetch(server, SMALL)
    assert len(server.requests) == n


def test_every_file_of_a_dataset_is_fetched(server, home):
    _fetch(server, "a9a")  # the training file and the test split
    assert sorted(p.name for p in (home / "a9a").iterdir()) == ["a9a", "a9a.t"]
    assert D.load("a9a", split="test").X.shape == (16_281, 123)


def test_a_broken_off_download_resumes_with_a_range_request(server, home):
    server.cut_once.add(REL)
    log = _fetch(server, "sea")
    size = SOURCES[REL].size
    seen = [r for r in server.requests if r[0] == REL]
    assert seen == [(REL, None), (REL, f"bytes={size // 2}-")]
    assert "broken off" in log and "resuming" in log
    assert _sha(home / REL) == SOURCES[REL].sha256
    assert D.load("sea").X.shape == (50_000, 3)


def test_a_part_left_by_an_earlier_run_resumes_or_restarts(server, home, shared_data):
    part = home / (REL + ".part")
    part.parent.mkdir(parents=True)
    part.write_bytes((shared_data / REL).read_bytes()[:1000])
    _fetch(server, "sea")
    assert (REL, "bytes=1000-") in server.requests
    assert _sha(home / REL) == SOURCES[REL].sha256
    # A server that ignores Range sends the whole file: it is started again.
    (home / REL).unlink()
    part.write_bytes(b"x" * 1000)
    server.ignore_range = True
    log = _fetch(server, "sea")
    assert _sha(home / REL) == SOURCES[REL].sha256 and not part.exists()
    assert "resuming" not in log


def test_a_download_that_keeps_breaking_stops_and_keeps_its_part(server, home):
    server.cut_always.add(REL)
    with pytest.raises(DataFileError, match=r"broke off 3 times .*run again to resume"):
        _fetch(server, "sea", attempts=3)
    assert len([r for r in server.requests if r[0] == REL]) == 3  # bounded
    part = home / (REL + ".part")
    kept = part.stat().st_size
    assert 0 < kept < SOURCES[REL].size and not (home / REL).exists()
    server.cut_always.clear()
    _fetch(server, "sea")  # the next run resumes where it stopped
    assert [r for r in server.requests if r[0] == REL][-1] == (REL, f"bytes={kept}-")
    assert _sha(home / REL) == SOURCES[REL].sha256


def test_a_wrong_checksum_keeps_nothing(server, home):
    server.corrupt.add("chess/chessweka.csv")
    with pytest.raises(DataFileError, match=r"sha256 [0-9a-f]{64}, expected "
                                            + SOURCES["chess/chessweka.csv"].sha256):
        _fetch(server, SMALL)
    assert not (home / "chess" / "chessweka.csv").exists()
    assert not list(home.rglob("*.part"))
    with pytest.raises(ValueError, match="not downloaded yet"):
        D.load(SMALL)


def test_a_file_the_server_does_not_have_is_a_404_with_what_to_do(server, home):
    with pytest.raises(DataFileError, match=r"HTTP 404.*download http://127\.0\.0\.1:\d+/"
                                            r"missing/chess/chessweka\.csv .* put it at "):
        D.fetch(SMALL, base_url=server.url + "/missing", progress=False, timeout=10.0)
    assert not (home / "chess").exists() or not any((home / "chess").iterdir())


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_no_server_says_what_to_do(home):
    url = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(DataFileError) as info:
        D.fetch(SMALL, base_url=url, progress=False, timeout=5.0)
    message = str(info.value)
    assert "no connection to" in message and "run again" in message
    assert f"download {url}/chess/chessweka.csv" in message
    assert str(home / "chess" / "chessweka.csv") in message
    assert SOURCES["chess/chessweka.csv"].sha256 in message and "EDGEREG_DATA" in message


def test_the_source_urls_are_the_files_at_their_commits():
    for rel, f in SOURCES.items():
        assert len(f.commit) == 40 and f.size > 0 and len(f.sha256) == 64
        assert D.source_url(rel, base_url="") == (
            f"https://raw.githubusercontent.com/{f.repository}/{f.commit}/{f.path}")
    for name in D.list_datasets():
        for rel in D.dataset_files(name):
            assert rel in SOURCES


def test_the_table_matches_the_shared_files(shared_data):
    for rel, f in SOURCES.items():
        path = shared_data / rel
        assert path.stat().st_size == f.size, rel
        assert _sha(path) == f.sha256, rel


def test_the_data_folder_follows_edgereg_data(monkeypatch, tmp_path):
    monkeypatch.setenv("EDGEREG_DATA", str(tmp_path / "x"))
    assert D.get_data_home() == tmp_path / "x"
    monkeypatch.delenv("EDGEREG_DATA")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("sys.platform", "linux")
    assert D.get_data_home() == tmp_path / "xdg" / "edgereg"


def test_edgereg_data_fetch_on_the_command_line(server, home, capsys):
    assert main(["data", "fetch", SMALL, "--base-url", server.url]) == 0
    out = capsys.readouterr()
    assert f"chess: in {home}" in out.out and "chess/chessweka.csv: downloading" in out.err
    assert main(["data", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(home)
    with pytest.raises(SystemExit, match="edgereg: .*no connection to"):
        main(["data", "fetch", SMALL, "--base-url", f"http://127.0.0.1:{_closed_port()}",
              "--data-home", str(home / "other")])
    with pytest.raises(SystemExit, match="unknown dataset 'nope'"):
        main(["data", "fetch", "nope"])
