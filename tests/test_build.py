"""build.py: pinned and verified downloads, the offline rebuild, the py_agent wheel, the site's lock."""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import json
import threading
import tomllib
import urllib.error
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import build


@pytest.fixture
def file_server(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A local HTTP server over a folder: (folder, base URL)."""
    folder = tmp_path / "served"
    folder.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def pin_for(url: str, data: bytes, filename: str = "thing-1.0-py3-none-any.whl") -> build.Pin:
    return build.Pin("thing", "1.0", filename, url, hashlib.sha256(data).hexdigest(), len(data))


def test_download_is_verified_and_cached(
    file_server: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, base = file_server
    monkeypatch.setattr(build, "DOWNLOADS", tmp_path / "cache")
    data = b"wheel bytes"
    (folder / "thing.whl").write_bytes(data)
    pin = pin_for(f"{base}/thing.whl", data)

    assert build.fetch_pinned(pin).read_bytes() == data
    (folder / "thing.whl").unlink()  # the second time, the cache alone serves it
    assert build.fetch_pinned(pin).read_bytes() == data


def test_hash_mismatch_is_refused(
    file_server: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, base = file_server
    monkeypatch.setattr(build, "DOWNLOADS", tmp_path / "cache")
    (folder / "thing.whl").write_bytes(b"tampered")
    pin = pin_for(f"{base}/thing.whl", b"the real bytes")
    with pytest.raises(build.BuildError, match="sha256 mismatch") as info:
        build.fetch_pinned(pin)
    assert pin.url in str(info.value)
    assert not (tmp_path / "cache" / pin.filename).exists(), "a file that failed verification must not be cached"


def test_unreachable_download_names_the_url_and_the_empty_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build, "DOWNLOADS", tmp_path / "cache")
    monkeypatch.setattr(build, "DOWNLOAD_ATTEMPTS", 1)
    pin = pin_for("http://127.0.0.1:9/thing.whl", b"x")
    with pytest.raises(build.BuildError) as info:
        build.fetch_pinned(pin)
    message = str(info.value)
    assert pin.url in message and "thing 1.0" in message and "cache" in message


def test_rebuild_needs_no_network(built_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[object] = []

    def offline(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise urllib.error.URLError("network disabled by the test")

    monkeypatch.setattr(build.urllib.request, "urlopen", offline)
    build.build_site(quiet=True)  # the cache filled by the first build is enough
    assert attempts == []
    assert (build.STATIC / "manifest.json").exists()


def test_py_agent_wheel_is_reproducible_and_complete(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    wheel_a, wheel_b = build.build_py_agent_wheel(first), build.build_py_agent_wheel(second)
    assert build.sha256_file(wheel_a) == build.sha256_file(wheel_b)

    with zipfile.ZipFile(wheel_a) as zf:
        names = set(zf.namelist())
        dist_info = f"py_agent-{build.py_agent_version()}.dist-info"
        expected = {f"py_agent/{p.relative_to(build.PACKAGE_DIR).as_posix()}" for p in build.package_files()}
        assert expected <= names
        assert {p for p in names if p.endswith(".py")} == {p for p in expected if p.endswith(".py")}
        for line in zf.read(f"{dist_info}/RECORD").decode().splitlines():
            name, digest, size = line.split(",")
            if name.endswith("RECORD"):
                continue
            data = zf.read(name)
            encoded = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={encoded}" and int(size) == len(data), name
        metadata = zf.read(f"{dist_info}/METADATA").decode()

    project = tomllib.loads((build.ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for dependency in project["dependencies"]:
        assert f"Requires-Dist: {dependency}\n" in metadata


def test_site_lock_lists_every_shipped_wheel_with_its_hash(built_site: Path) -> None:
    manifest = json.loads((built_site / "manifest.json").read_text(encoding="utf-8"))
    site_lock = json.loads((built_site / manifest["lock_file"]).read_text(encoding="utf-8"))
    packages = site_lock["packages"]
    assert {w["name"] for w in manifest["wheels"]} == set(packages)
    for wheel in manifest["wheels"]:
        entry = packages[wheel["name"]]
        path = built_site / wheel["file"]
        assert build.sha256_file(path) == entry["sha256"] == wheel["sha256"]
        assert (built_site / manifest["index_url"] / entry["file_name"]).resolve() == path.resolve()
        assert set(entry["depends"]) <= set(packages), f"{wheel['name']} depends on a package the site lacks"
    for item in manifest["runtime"]:
        assert (built_site / item["file"]).stat().st_size == item["size"]
    # Pyodide's own lock info is kept, so loadPyodide accepts the site's lock.
    assert site_lock["info"]["python"].startswith("3.")
