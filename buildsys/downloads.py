"""Pinned files, fetched through the registries' own clients (pip for wheels, npm for tarballs),
so that the user's configuration applies (pip.conf / PIP_* variables, .npmrc / npm_config_*:
index, mirror, proxy, certificates). Each file is checked against its sha256 pin and cached in
DOWNLOADS, so a rebuild needs no network."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from . import config
from .config import PYODIDE_ABI, PYODIDE_PLATFORM, PYODIDE_PYTHON, BuildError, log, sha256_file
from .pins import Pin, read_lock

CLIENT_TIMEOUT_S = 600

# pip's options that pick wheels for Pyodide's interpreter rather than the one running pip; a
# pure wheel (py3-none-any) matches them too.
PIP_PYODIDE_TARGET = (
    "--only-binary=:all:",
    "--platform",
    PYODIDE_PLATFORM,
    "--python-version",
    PYODIDE_PYTHON,
    "--implementation",
    "cp",
    "--abi",
    PYODIDE_ABI,
)


def run_client(cmd: Sequence[str], cwd: Path) -> str:
    """Run pip or npm; its stdout, or a BuildError with the end of its stderr."""
    try:
        result = subprocess.run(
            list(cmd), cwd=cwd, capture_output=True, text=True, check=False, timeout=CLIENT_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"cannot run {' '.join(cmd)}: {exc}") from exc
    if result.returncode != 0:
        raise BuildError(f"`{' '.join(cmd)}` failed (exit {result.returncode}):\n{result.stderr.strip()[-1500:]}")
    return result.stdout


def npm() -> str:
    path = shutil.which("npm")
    if path is None:
        raise BuildError("npm is missing (it downloads the npm packages): install Node.js and npm")
    return path


def pip_download_command(requirements: Sequence[str], dest: Path, no_deps: bool) -> list[str]:
    # Requires-Python is checked at lock time (`lock`); a pinned file is taken as it is.
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--disable-pip-version-check",
        *(["--no-deps"] if no_deps else []),
        "--ignore-requires-python",
        *PIP_PYODIDE_TARGET,
        "--dest",
        str(dest),
        *requirements,
    ]


def npm_pack_command(name: str, version: str, dest: Path) -> list[str]:
    return [npm(), "pack", f"{name}@{version}", "--json", "--pack-destination", str(dest)]


def download(pin: Pin, dest: Path) -> Path:
    """Fetch the pinned file into the empty folder dest with pip or npm; its path there."""
    if pin.is_wheel:
        run_client(pip_download_command([f"{pin.name}=={pin.version}"], dest, no_deps=True), dest)
    else:
        run_client(npm_pack_command(pin.name, pin.version, dest), dest)
    files = sorted(dest.iterdir())
    if len(files) != 1:
        raise BuildError(f"fetching {pin.name} {pin.version} gave {[f.name for f in files]}, not one file")
    if pin.is_wheel and files[0].name != pin.filename:
        raise BuildError(
            f"pip chose {files[0].name} for {pin.name} {pin.version}, not the pinned {pin.filename}: "
            f"run `python3 build.py lock`"
        )
    return files[0]


def fetch_pinned(pin: Pin) -> Path:
    """Return the cached, verified file for a pin, downloading it if the cache lacks it."""
    downloads = config.DOWNLOADS
    cached = downloads / pin.filename
    if cached.exists():
        if sha256_file(cached) == pin.sha256:
            return cached
        log(f"cached {pin.filename} does not match its pinned sha256; downloading it again")
        cached.unlink()
    client = "pip" if pin.is_wheel else "npm"
    log(f"downloading {pin.name} {pin.version} ({client})")
    downloads.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="download-", dir=downloads) as tmp:
        try:
            fetched = download(pin, Path(tmp))
        except BuildError as exc:
            raise BuildError(
                f"cannot download {pin.name} {pin.version} with {client}: {exc}\n"
                f"The cache has no verified copy ({cached} is missing), so this build needs the "
                f"package index ({client}'s configuration applies: index, mirror, proxy)."
            ) from exc
        actual = sha256_file(fetched)
        if actual != pin.sha256:
            raise BuildError(
                f"sha256 mismatch for {pin.filename} ({client}):\n"
                f"  pinned in {config.LOCK_PATH.name}: {pin.sha256}\n  downloaded:          {actual}\n"
                f"The file was not used. If the pin is wrong, run `python3 build.py lock`."
            )
        fetched.replace(cached)
    return cached


def prepare_test_wheels() -> Path:
    """Put the test-only wheels (pytest and its deps, for Pyodide) in .cache/test-wheels/."""
    lock = read_lock()
    config.TEST_WHEELS.mkdir(parents=True, exist_ok=True)
    entries = []
    for pin in lock.test:
        src = fetch_pinned(pin)
        dest = config.TEST_WHEELS / pin.filename
        if not dest.exists() or dest.stat().st_size != pin.size:
            shutil.copyfile(src, dest)
        entries.append({"name": pin.name, "version": pin.version, "file": pin.filename, "sha256": pin.sha256})
    manifest = config.TEST_WHEELS / "manifest.json"
    config.write_json(manifest, {"wheels": entries})
    return manifest


def npm_pack_info(stdout: str) -> dict[str, object]:
    """npm pack --json's record of the one package it packed."""
    try:
        packed = json.loads(stdout)
        return dict(packed[0])
    except (ValueError, LookupError, TypeError) as exc:
        raise BuildError(f"npm pack printed no package record: {stdout[:300]!r}") from exc
