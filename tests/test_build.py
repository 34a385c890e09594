"""build.py: pinned and verified downloads (through pip and npm), the offline rebuild, the py_agent wheel,
the site's lock, and no registry host named in the repository."""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import os
import subprocess
import tomllib
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest

import build
import buildsys.config
import buildsys.downloads


def make_wheel(folder: Path, name: str = "thing", version: str = "1.0") -> Path:
    """A minimal valid pure wheel, as a package index would serve it."""
    path = folder / f"{name}-{version}-py3-none-any.whl"
    dist_info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{name}.py", "VALUE = 1\n")
        zf.writestr(f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        zf.writestr(
            f"{dist_info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        zf.writestr(f"{dist_info}/RECORD", "")
    return path


@pytest.fixture
def local_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pip configured (through its own environment variables, as a user would) to take wheels only
    from a local folder; build.py's download cache in tmp_path. Returns the folder."""
    folder = tmp_path / "index"
    folder.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    monkeypatch.setattr(buildsys.config, "DOWNLOADS", tmp_path / "cache")
    return folder


def pin_for(path: Path, data: bytes | None = None) -> build.Pin:
    data = path.read_bytes() if data is None else data
    return build.Pin("thing", "1.0", path.name, hashlib.sha256(data).hexdigest(), len(data))


def test_download_goes_through_pip_is_verified_and_cached(local_index: Path, tmp_path: Path) -> None:
    wheel = make_wheel(local_index)
    pin = pin_for(wheel)
    fetched = build.fetch_pinned(pin)
    assert fetched == tmp_path / "cache" / wheel.name and fetched.read_bytes() == wheel.read_bytes()
    wheel.unlink()  # the second time, the cache alone serves it
    assert build.fetch_pinned(pin).read_bytes() == fetched.read_bytes()


def test_hash_mismatch_is_refused(local_index: Path, tmp_path: Path) -> None:
    pin = pin_for(make_wheel(local_index), b"the real bytes")
    with pytest.raises(build.BuildError, match="sha256 mismatch") as info:
        build.fetch_pinned(pin)
    assert pin.filename in str(info.value)
    assert not (tmp_path / "cache" / pin.filename).exists(), "a file that failed verification must not be cached"
    assert list((tmp_path / "cache").iterdir()) == [], "no partial download is left behind"


def test_unavailable_download_names_the_package_the_client_and_the_empty_cache(local_index: Path) -> None:
    pin = build.Pin("thing", "1.0", "thing-1.0-py3-none-any.whl", "0" * 64, 1)  # the index lacks it
    with pytest.raises(build.BuildError) as info:
        build.fetch_pinned(pin)
    message = str(info.value)
    assert "thing 1.0" in message and "pip" in message and "cache" in message


def test_npm_package_goes_through_npm_and_its_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # npm told (by its own environment variables) to stay offline with an empty cache: it must fail.
    monkeypatch.setenv("npm_config_offline", "true")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.setattr(buildsys.config, "DOWNLOADS", tmp_path / "cache")
    pin = build.Pin("marked", "18.2.1", "marked-18.2.1.tgz", "0" * 64, 1)
    with pytest.raises(build.BuildError) as info:
        build.fetch_pinned(pin)
    assert "marked 18.2.1" in str(info.value) and "npm" in str(info.value)


def test_rebuild_needs_no_network(built_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[Sequence[str]] = []

    def offline(cmd: Sequence[str], cwd: Path) -> str:
        attempts.append(cmd)
        raise build.BuildError("network disabled by the test")

    monkeypatch.setattr(buildsys.downloads, "run_client", offline)
    build.build_site(quiet=True)  # the cache filled by the first build is enough
    assert attempts == []
    assert (build.STATIC / "manifest.json").exists()


def registry_hosts() -> list[str]:
    # Spelled in pieces, so that this file does not name them itself.
    return ["registry.npm" + "js.org", "npm" + "js.", "pypi" + ".org", "python" + "hosted"]


def test_no_tracked_file_names_a_registry_host() -> None:
    """Downloads go through pip and npm, whose configuration picks the index: the repository names none."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=build.ROOT, capture_output=True, check=True, timeout=60
    ).stdout.decode()
    offenders = []
    for rel in filter(None, listed.split("\0")):
        path = build.ROOT / rel
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace").lower()
        offenders += [f"{rel}: {host}" for host in registry_hosts() if host in text]
    assert offenders == []


def test_lock_has_no_urls_only_versions_and_hashes() -> None:
    data = json.loads(build.LOCK_PATH.read_text(encoding="utf-8"))
    pins = [data["pyodide"], *data["npm"], *(p for group in data["wheels"].values() for p in group)]
    for pin in pins:
        assert set(pin) == {"name", "version", "filename", "sha256", "size"}, pin
        assert len(pin["sha256"]) == 64


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


def test_site_wheel_leaves_out_cpython_only_code(built_site: Path) -> None:
    manifest = json.loads((built_site / "manifest.json").read_text(encoding="utf-8"))
    (wheel,) = [w for w in manifest["wheels"] if w["name"] == "py-agent"]
    with zipfile.ZipFile(built_site / wheel["file"]) as zf:
        names = set(zf.namelist())
    assert not [n for n in names if n.startswith("py_agent/testing/")]
    assert "py_agent/transports/httpx.py" not in names
    assert {"py_agent/transports/__init__.py", "py_agent/transports/fetch.py", "py_agent/browser/main.py"} <= names


def test_setuptools_package_keeps_the_test_helpers_and_httpx() -> None:
    """`pip install .` (setuptools) keeps what the site's wheel leaves out: the find rules of
    pyproject.toml take every py_agent subpackage and exclude none."""
    find = tomllib.loads((build.ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    rules = find["packages"]["find"]
    assert any(fnmatch.fnmatch("py_agent.testing", p) for p in rules["include"])
    assert not any(fnmatch.fnmatch("py_agent.testing", p) for p in rules.get("exclude", []))
    everything = {p.relative_to(build.PACKAGE_DIR).as_posix() for p in build.package_files(for_site=False)}
    site = {p.relative_to(build.PACKAGE_DIR).as_posix() for p in build.package_files()}
    assert {"testing/mock_server.py", "transports/httpx.py"} <= everything - site


def test_no_snapshot_opt_out_skips_the_snapshot_and_marks_the_site_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import buildsys.site

    monkeypatch.delenv("PY_AGENT_NO_SNAPSHOT", raising=False)
    with_snapshot = buildsys.site.inputs_digest()
    monkeypatch.setenv("PY_AGENT_NO_SNAPSHOT", "1")
    # A site built before with its snapshot is rebuilt without it (the tests rebuild on a new digest).
    assert buildsys.site.inputs_digest() != with_snapshot
    # Not even Node.js is asked: the runtime's files are never read.
    assert buildsys.site.build_snapshot(tmp_path / "missing-runtime", {"sha256": "x"}, {"sha256": "y"}) is None
    monkeypatch.setenv("PY_AGENT_NO_SNAPSHOT", "0")
    assert buildsys.site.inputs_digest() == with_snapshot


def test_index_html_is_made_to_load_the_bundle() -> None:
    from buildsys.bundle import load_bundle

    html = """<head>
  <script src="boot/early-start.js"></script>
  <link rel="modulepreload" href="boot/early.js">
  <link rel="modulepreload" href="ui/dom.js">
  <link rel="stylesheet" href="app.css">
  <link rel="modulepreload" href="pyodide/pyodide.js">
  <!-- boot.js's own imports, fetched at once. -->
  <link rel="modulepreload" href="boot/runtime.js">
  <link rel="modulepreload" href="boot/bytes.js">
  <!-- The libraries markdown.js imports. -->
  <link rel="modulepreload" href="vendor/marked.esm.js">
  <script type="module" src="boot/boot.js"></script>
  <script type="module" src="app.js"></script>
</head>"""
    bundled = {
        "inputs": ["app.js", "boot/boot.js", "boot/bytes.js", "boot/early.js", "boot/runtime.js", "ui/dom.js"],
        "entries": {"boot/early.js": "boot/early.js", "boot/boot.js": "boot/boot.js", "app.js": "bundle/app.js"},
        "preloads": ["bundle/chunk-A.js", "boot/early.js", "boot/boot.js", "bundle/app.js"],
    }
    assert (
        load_bundle(html, bundled)
        == """<head>
  <script src="boot/early-start.js"></script>
  <!-- The page's modules, bundled by the build (buildsys/bundle.py): fetched at once. -->
  <link rel="modulepreload" href="bundle/chunk-A.js">
  <link rel="modulepreload" href="boot/early.js">
  <link rel="modulepreload" href="boot/boot.js">
  <link rel="modulepreload" href="bundle/app.js">
  <link rel="stylesheet" href="app.css">
  <link rel="modulepreload" href="pyodide/pyodide.js">
  <!-- The libraries markdown.js imports. -->
  <link rel="modulepreload" href="vendor/marked.esm.js">
  <script type="module" src="boot/boot.js"></script>
  <script type="module" src="bundle/app.js"></script>
</head>"""
    )
    with pytest.raises(buildsys.config.BuildError, match="preloads none of the bundled modules"):
        load_bundle(html, {"inputs": ["other.js"], "entries": {}, "preloads": []})
