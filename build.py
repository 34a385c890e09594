#!/usr/bin/env python3
"""Build, serve, test and benchmark py-agent's static site.

Standard library only, CPython 3.11+.

    python3 build.py                     build static/ (the deployable site)
    python3 build.py serve [--port N]    build, then serve static/ on http://127.0.0.1:N/ (default 8000)
    python3 build.py test [PYTEST ARGS]  set up .venv, Chromium and Node.js, build, lint, run pytest
    python3 build.py bench [NAME ...]    build, then run bench/*.py (or only the named scripts)
    python3 build.py lock                re-resolve every pin from PyPI and npm; rewrite build.lock.json

Every download is pinned by version and sha256 in build.lock.json, verified, and cached under
.cache/downloads/, so a second build needs no network.

Layout of static/ (all URLs inside the site are relative, so it works from any sub-path):

    index.html, app.css, boot.js ...   the page (copied from web/)
    manifest.json                      what the page loads: runtime files and wheels, with sizes and hashes
    pyodide/                           Pyodide's runtime files, the wheels, and the site's own
                                       pyodide-lock.json (only the packages shipped here, with sha256);
                                       sandbox-lock.json: the same plus the python tool's extra wheels;
                                       site-packages.bin: the site's packages installed, with their
                                       bytecode precompiled, as the page writes them (needs Node.js)
                                       python_stdlib_bytecode.zip: Pyodide's python_stdlib.zip with the
                                       bytecode of the modules the page imports (needs Node.js)
    sw.js                              the service worker: every file of manifest.json's "files", cached
"""

from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import fnmatch
import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import tomllib
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not POSIX: builds are not serialized
    fcntl = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parent
STATIC = ROOT / "static"
WEB = ROOT / "web"
PACKAGE_DIR = ROOT / "py_agent"
CACHE = ROOT / ".cache"
DOWNLOADS = CACHE / "downloads"
TEST_WHEELS = CACHE / "test-wheels"
LOCK_PATH = ROOT / "build.lock.json"
VENV = ROOT / ".venv"
BENCH = ROOT / "bench"

# What the lock resolves (`python3 build.py lock`). build.lock.json holds the result.
PYODIDE_NPM_PACKAGE = "pyodide"
PYODIDE_VERSION = "314.0.7"
PYODIDE_PYTHON = "3.14"
PYODIDE_ABI = "cp314"
PYODIDE_PLATFORM = "pyemscripten_2026_0_wasm32"
SITE_REQUIREMENTS = ("pydantic==2.14.3",)  # shipped in static/ for the page
TEST_REQUIREMENTS = ("pytest",)  # only for the Pyodide test runner; kept in .cache/test-wheels/
# Only for the python tool's sandboxed interpreter (web/sandbox/), never loaded by the page's own:
# listed with the site's wheels in pyodide/sandbox-lock.json.
SANDBOX_REQUIREMENTS = ("micropip==0.11.1", "pyodide-http==0.2.2")  # micropip as Pyodide 314 ships it
# Files taken from the npm tarball: the ES module loader, the Emscripten module, the
# interpreter, the standard library and Pyodide's own lock (read for its "info" only).
PYODIDE_RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
STOCK_STDLIB_FILE = "python_stdlib.zip"  # no bytecode; the page loads STDLIB_FILE instead when built
PYODIDE_UPSTREAM_LOCK = "pyodide-lock.json"

# Front-end libraries of the page, from npm tarballs pinned in build.lock.json ("npm"):
# package -> (version, {file in the tarball: file under static/vendor/}). Source-map comments are
# dropped (the maps are not shipped); each library's license is shipped beside it.
FRONTEND_PACKAGES: dict[str, tuple[str, dict[str, str]]] = {
    "marked": ("18.2.1", {"package/lib/marked.esm.js": "marked.esm.js", "package/LICENSE": "marked.LICENSE.txt"}),
    "dompurify": (
        "3.5.0",
        {"package/dist/purify.es.mjs": "purify.es.mjs", "package/LICENSE": "dompurify.LICENSE.txt"},
    ),
    "@highlightjs/cdn-assets": (
        "11.12.0",
        {"package/es/highlight.min.js": "highlight.min.js", "package/LICENSE": "highlight.js.LICENSE.txt"},
    ),
}
VENDOR_DIR = "vendor"

NPM_REGISTRY = "https://registry.npmjs.org"
PYPI_JSON = "https://pypi.org/pypi"
CHROMIUM_DEFAULT = "/usr/bin/chromium"
MIN_NODE_MAJOR = 18
DOWNLOAD_TIMEOUT_S = 120
DOWNLOAD_ATTEMPTS = 3
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


class BuildError(Exception):
    """A failure with a message meant for the person running build.py."""


def log(message: str) -> None:
    print(f"[build] {message}", flush=True)


# --------------------------------------------------------------------------------------
# Lock file and pinned downloads
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pin:
    """One pinned download: a wheel from PyPI or the Pyodide tarball from npm."""

    name: str
    version: str
    filename: str
    url: str
    sha256: str
    size: int

    @staticmethod
    def from_json(data: dict[str, Any]) -> Pin:
        return Pin(
            name=str(data["name"]),
            version=str(data["version"]),
            filename=str(data["filename"]),
            url=str(data["url"]),
            sha256=str(data["sha256"]),
            size=int(data["size"]),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "filename": self.filename,
            "url": self.url,
            "sha256": self.sha256,
            "size": self.size,
        }


@dataclass(frozen=True)
class Lock:
    pyodide: Pin
    site: tuple[Pin, ...]
    test: tuple[Pin, ...]
    npm: tuple[Pin, ...] = ()
    sandbox: tuple[Pin, ...] = ()


def read_lock() -> Lock:
    if not LOCK_PATH.exists():
        raise BuildError(f"{LOCK_PATH.name} is missing: run `python3 build.py lock` to create it")
    data = json.loads(LOCK_PATH.read_text(encoding="utf-8"))
    try:
        return Lock(
            pyodide=Pin.from_json(data["pyodide"]),
            site=tuple(Pin.from_json(p) for p in data["wheels"]["site"]),
            test=tuple(Pin.from_json(p) for p in data["wheels"]["test"]),
            npm=tuple(Pin.from_json(p) for p in data.get("npm", [])),
            sandbox=tuple(Pin.from_json(p) for p in data["wheels"].get("sandbox", [])),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise BuildError(
            f"{LOCK_PATH.name} is malformed ({exc!r}): regenerate it with `python3 build.py lock`"
        ) from exc


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(functools.partial(f.read, 1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def http_get(url: str) -> bytes:
    """GET a URL with a few retries; raise urllib's error after the last one."""
    request = urllib.request.Request(url, headers={"User-Agent": "py-agent-build"})
    for attempt in range(1, DOWNLOAD_ATTEMPTS + 1):
        try:
            with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_S) as response:
                return bytes(response.read())
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            if attempt == DOWNLOAD_ATTEMPTS or (isinstance(exc, urllib.error.HTTPError) and exc.code == 404):
                raise
            time.sleep(attempt)
    raise AssertionError("unreachable")


def fetch_pinned(pin: Pin) -> Path:
    """Return the cached, verified file for a pin, downloading it if the cache lacks it."""
    cached = DOWNLOADS / pin.filename
    if cached.exists():
        if sha256_file(cached) == pin.sha256:
            return cached
        log(f"cached {pin.filename} does not match its pinned sha256; downloading it again")
        cached.unlink()
    log(f"downloading {pin.name} {pin.version}: {pin.url}")
    try:
        data = http_get(pin.url)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        raise BuildError(
            f"cannot download {pin.name} {pin.version} from {pin.url}: {exc}.\n"
            f"The cache has no verified copy ({cached} is missing), so the network is needed "
            f"for this build (PyPI and the npm registry)."
        ) from exc
    actual = hashlib.sha256(data).hexdigest()
    if actual != pin.sha256:
        raise BuildError(
            f"sha256 mismatch for {pin.filename} from {pin.url}:\n"
            f"  pinned in {LOCK_PATH.name}: {pin.sha256}\n  downloaded:          {actual}\n"
            f"The file was not used. If the pin is wrong, run `python3 build.py lock`."
        )
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    partial = cached.with_name(cached.name + ".part")
    partial.write_bytes(data)
    partial.replace(cached)
    return cached


# --------------------------------------------------------------------------------------
# Wheels: metadata, import names, dependencies
# --------------------------------------------------------------------------------------


def canonical_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class WheelInfo:
    name: str  # canonical
    version: str
    requires: tuple[str, ...]  # canonical names of unconditional (non-extra) requirements
    imports: tuple[str, ...]


def read_wheel_info(path: Path) -> WheelInfo:
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        dist_info = next((n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA")), None)
        if dist_info is None:
            raise BuildError(f"{path.name} has no .dist-info/METADATA: not a wheel?")
        metadata = zf.read(f"{dist_info}/METADATA").decode("utf-8")
        top_level = f"{dist_info}/top_level.txt"
        imports = zf.read(top_level).decode("utf-8").split() if top_level in names else import_names(names)
    headers = parse_metadata_headers(metadata)
    requires = []
    for req in headers.get("requires-dist", []):
        req_name, _, marker = req.partition(";")
        if "extra" in marker:
            continue
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req_name)
        if match:
            requires.append(canonical_name(match.group(1)))
    return WheelInfo(
        name=canonical_name(headers["name"][0]),
        version=headers["version"][0],
        requires=tuple(requires),
        imports=tuple(sorted(set(imports))),
    )


def parse_metadata_headers(metadata: str) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    for line in metadata.splitlines():
        if not line:
            break  # the body (long description) starts here (a line of spaces continues a header)
        if line[0] in " \t" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        headers.setdefault(key.strip().lower(), []).append(value.strip())
    return headers


def import_names(names: Iterable[str]) -> list[str]:
    """Top-level importable names of a wheel without top_level.txt."""
    result = set()
    for name in names:
        first = name.split("/")[0]
        if first.endswith((".dist-info", ".data")):
            continue
        if "/" in name:
            result.add(first)
        elif first.endswith(".py"):
            result.add(first[: -len(".py")])
        elif first.endswith(".so"):
            result.add(first.split(".")[0])
    return sorted(result)


# --------------------------------------------------------------------------------------
# The py_agent wheel, built from this checkout with the standard library
# --------------------------------------------------------------------------------------


def read_pyproject() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def py_agent_version() -> str:
    init = PACKAGE_DIR / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        named = any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
        if named and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node.value.value
    raise BuildError(f'{init} has no literal `__version__ = "..."`')


def glob_match(rel: str, pattern: str) -> bool:
    """A [tool.setuptools.package-data] glob against a path relative to the package ("**/" may match none)."""
    return fnmatch.fnmatch(rel, pattern) or (pattern.startswith("**/") and fnmatch.fnmatch(rel, pattern[3:]))


def package_files() -> list[Path]:
    """What setuptools puts in the wheel: the modules of py_agent and its subpackages (folders
    with __init__.py), plus the files that [tool.setuptools.package-data] names."""
    package_data = read_pyproject().get("tool", {}).get("setuptools", {}).get("package-data", {})
    patterns = list(package_data.get("py_agent", []))
    files = []
    for path in sorted(PACKAGE_DIR.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(PACKAGE_DIR).as_posix()
        is_module = path.suffix == ".py" and (path.parent / "__init__.py").exists()
        if is_module or any(glob_match(rel, p) for p in patterns):
            files.append(path)
    return files


def wheel_metadata(version: str) -> str:
    project = read_pyproject()["project"]
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {version}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3.11')}",
    ]
    license_text = project.get("license", {}).get("text")
    if license_text:
        lines.append(f"License: {license_text}")
    lines += [f"Requires-Dist: {dep}" for dep in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {dep}; extra == "{extra}"' for dep in deps]
    return "\n".join(lines) + "\n"


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def build_py_agent_wheel(out_dir: Path) -> Path:
    """A reproducible pure wheel (same sources, same bytes), so its sha256 is stable."""
    version = py_agent_version()
    dist_info = f"py_agent-{version}.dist-info"
    entries: list[tuple[str, bytes]] = [
        (f"py_agent/{p.relative_to(PACKAGE_DIR).as_posix()}", p.read_bytes()) for p in package_files()
    ]
    entries += [
        (f"{dist_info}/METADATA", wheel_metadata(version).encode()),
        (
            f"{dist_info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: py-agent build.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        ),
        (f"{dist_info}/top_level.txt", b"py_agent\n"),
    ]
    record = "".join(f"{name},{record_hash(data)},{len(data)}\n" for name, data in entries)
    record += f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode()))
    path = out_dir / f"py_agent-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return path


def check_dependencies_shipped(wheel: WheelInfo, shipped: set[str]) -> None:
    missing = [dep for dep in wheel.requires if dep not in shipped]
    if missing:
        raise BuildError(
            f"py_agent requires {', '.join(missing)}, which the site does not ship. Add it to "
            f"SITE_REQUIREMENTS in build.py and run `python3 build.py lock`."
        )


# --------------------------------------------------------------------------------------
# Building static/
# --------------------------------------------------------------------------------------


def inputs_digest() -> str:
    """A digest of everything static/ is made from; the tests rebuild when it changes."""
    digest = hashlib.sha256()
    paths = [ROOT / "build.py", LOCK_PATH, ROOT / "pyproject.toml", SITE_PACKAGES_SCRIPT, *package_files()]
    paths += sorted(p for p in WEB.rglob("*") if p.is_file())
    for path in paths:
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() if path.exists() else b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()


def site_is_stale() -> bool:
    manifest = STATIC / "manifest.json"
    if not manifest.exists():
        return True
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8")).get("inputs_sha256")
    except ValueError:
        return True
    return bool(recorded != inputs_digest())


@contextlib.contextmanager
def site_lock() -> Iterator[None]:
    """Serialize builds and snapshots of static/ between processes sharing this checkout."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / "build.lock").open("w") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def swap_into_static(new_site: Path) -> None:
    """Replace static/'s content (but its README.md) by new_site's, one rename per entry."""
    STATIC.mkdir(exist_ok=True)
    for child in STATIC.iterdir():
        if child.name != "README.md":
            remove(child)
    for child in new_site.iterdir():
        child.rename(STATIC / child.name)
    new_site.rmdir()


def snapshot_site(dest: Path) -> Path:
    """Copy static/ to dest, so that a later rebuild cannot change it under a running test."""
    with site_lock():
        shutil.copytree(STATIC, dest, dirs_exist_ok=True)
    return dest


def extract_pyodide(tarball: Path, dest: Path) -> dict[str, Any]:
    """Copy the runtime files out of the npm tarball; return Pyodide's lock "info" section."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball, "r:gz") as tar:
        for name in (*PYODIDE_RUNTIME_FILES, PYODIDE_UPSTREAM_LOCK):
            member = tar.extractfile(f"package/{name}")
            if member is None:
                raise BuildError(f"{tarball.name} has no package/{name}")
            data = member.read()
            if name == PYODIDE_UPSTREAM_LOCK:
                upstream_info = dict(json.loads(data)["info"])
            else:
                (dest / name).write_bytes(data)
    return upstream_info


def lock_entry(info: WheelInfo, filename: str, sha256: str, shipped: set[str]) -> dict[str, Any]:
    """One package in Pyodide's lock format (what pyodide.loadPackage resolves and checks)."""
    return {
        "name": info.name,
        "version": info.version,
        "file_name": filename,
        "install_dir": "site",
        "sha256": sha256,
        "package_type": "package",
        "imports": list(info.imports),
        "depends": sorted({d for d in info.requires if d in shipped and d != info.name}),
        "unvendored_tests": False,
        "tool": {},
    }


def build_site(quiet: bool = False) -> None:
    """Build the site in a folder of its own, then move it into static/."""
    started = time.monotonic()
    with site_lock():
        digest = inputs_digest()  # before reading the inputs: a change meanwhile makes it stale
        new_site = Path(tempfile.mkdtemp(prefix="static-build-", dir=CACHE))
        try:
            build_site_into(new_site, digest)
        except BaseException:
            shutil.rmtree(new_site, ignore_errors=True)
            raise
        swap_into_static(new_site)
    if not quiet:
        size = sum(p.stat().st_size for p in STATIC.rglob("*") if p.is_file())
        log(f"built static/ ({size / 1e6:.1f} MB) in {time.monotonic() - started:.1f}s")


def build_site_into(site: Path, digest: str) -> None:
    lock = read_lock()
    runtime_dir = site / "pyodide"
    lock_info = extract_pyodide(fetch_pinned(lock.pyodide), runtime_dir)

    wheels: list[tuple[WheelInfo, Path]] = []
    for pin in lock.site:
        src = fetch_pinned(pin)
        shutil.copyfile(src, runtime_dir / pin.filename)
        wheels.append((read_wheel_info(src), runtime_dir / pin.filename))
    shipped = {info.name for info, _ in wheels}
    py_agent_wheel = build_py_agent_wheel(runtime_dir)
    py_agent_info = read_wheel_info(py_agent_wheel)
    check_dependencies_shipped(py_agent_info, shipped)
    wheels.append((py_agent_info, py_agent_wheel))
    shipped.add(py_agent_info.name)

    packages: dict[str, Any] = {}
    manifest_wheels = []
    for info, path in wheels:
        digest = sha256_file(path)
        packages[info.name] = lock_entry(info, path.name, digest, shipped)
        manifest_wheels.append(
            {
                "name": info.name,
                "version": info.version,
                "file": f"pyodide/{path.name}",
                "sha256": digest,
                "size": path.stat().st_size,
            }
        )
    site_lock = {"info": lock_info, "packages": dict(sorted(packages.items()))}
    write_json(runtime_dir / "pyodide-lock.json", site_lock)
    sandbox_wheels = write_sandbox_lock(runtime_dir, lock, lock_info, wheels)
    bundles = build_site_packages(runtime_dir, sorted(p["sha256"] for p in packages.values()))
    site_packages, stdlib = bundles if bundles else (None, None)
    # The runtime files the page loads: with the precompiled standard library when there is one.
    runtime_files = [name for name in PYODIDE_RUNTIME_FILES if not (stdlib and name == STOCK_STDLIB_FILE)]
    if stdlib:
        runtime_files.append(STDLIB_FILE)

    copy_web(site, stdlib_file=STDLIB_FILE if stdlib else STOCK_STDLIB_FILE)
    vendored = vendor_frontend(site / VENDOR_DIR, lock.npm)
    manifest = {
        "generated_by": "build.py (do not edit: regenerated by every build)",
        "pyodide_version": lock.pyodide.version,
        "python_version": lock_info.get("python"),
        "index_url": "pyodide/",
        "lock_file": "pyodide/pyodide-lock.json",
        "packages": [py_agent_info.name],
        "imports": list(py_agent_info.imports),
        "py_agent_version": py_agent_info.version,
        "runtime": [
            {"file": f"pyodide/{name}", "size": (runtime_dir / name).stat().st_size} for name in runtime_files
        ],
        # The standard library's zip that the page and the snapshot's worker load (loadPyodide's
        # stdLibURL): with bytecode when built with Node.js, else Pyodide's own.
        "stdlib": f"pyodide/{stdlib['file'].split('/')[-1] if stdlib else STOCK_STDLIB_FILE}",
        "wheels": manifest_wheels,
        "sandbox_lock_file": f"pyodide/{SANDBOX_LOCK}",
        "sandbox_wheels": sandbox_wheels,
        "site_packages": site_packages,
        "vendor": vendored,
        "inputs_sha256": digest,
        "files": site_files(site),
    }
    write_json(site / "manifest.json", manifest)


# Not listed in the manifest's "files": the manifest itself, and the service worker's script
# (the browser fetches and updates it on its own).
UNLISTED_FILES = ("manifest.json", "sw.js")


def site_files(site: Path) -> list[dict[str, Any]]:
    """Every file of the site, for the service worker (web/sw.js) to cache for offline use:
    path relative to the site, size and sha256. The manifest's own sha256 names the cache."""
    return [
        {"path": path.relative_to(site).as_posix(), "size": path.stat().st_size, "sha256": sha256_file(path)}
        for path in sorted(site.rglob("*"))
        if path.is_file() and path.relative_to(site).as_posix() not in UNLISTED_FILES
    ]


SANDBOX_LOCK = "sandbox-lock.json"
SITE_PACKAGES_SCRIPT = ROOT / "scripts" / "site_packages.mjs"
SITE_PACKAGES_FILE = "site-packages.bin"
STDLIB_FILE = "python_stdlib_bytecode.zip"  # the page's standard library: see build_site_packages()


def build_site_packages(runtime_dir: Path, wheel_hashes: list[str]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The site's packages installed by Pyodide and byte-compiled (scripts/site_packages.mjs, under
    Node.js), as one bundle that the page writes into site-packages: no wheel to unzip, no source to
    compile at boot; and the standard library's zip with bytecode for the modules the page imports
    (STDLIB_FILE, beside Pyodide's own python_stdlib.zip, which has none). ({file, size, sha256}
    of each) for the manifest.

    Cached in .cache/site-packages/ by the runtime, the wheels and the script. Without Node.js, or
    if the script fails, the site ships without them (the page then unzips the wheels, loads
    Pyodide's python_stdlib.zip, and imports compile the sources: slower)."""
    key = hashlib.sha256(
        "\0".join([PYODIDE_VERSION, *wheel_hashes, sha256_file(SITE_PACKAGES_SCRIPT)]).encode()
    ).hexdigest()
    cached = CACHE / "site-packages" / f"{key}.bin"
    cached_stdlib = cached.with_suffix(".zip")
    if not (cached.exists() and cached_stdlib.exists()):
        node = shutil.which("node")
        if node is None:
            log("Node.js is missing: the site ships without its site-packages bundle (boot is slower)")
            return None
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_name(cached.name + ".part")
        partial_stdlib = cached_stdlib.with_name(cached_stdlib.name + ".part")
        result = subprocess.run(
            [node, str(SITE_PACKAGES_SCRIPT), str(runtime_dir.parent), str(partial), str(partial_stdlib)],
            capture_output=True, text=True, check=False, timeout=600,
        )
        if result.returncode != 0 or not partial.exists() or not partial_stdlib.exists():
            log(f"bundling the site's packages failed, shipping without: {result.stderr.strip()[-600:]}")
            return None
        partial_stdlib.replace(cached_stdlib)
        partial.replace(cached)
    shipped = []
    for source, name in ((cached, SITE_PACKAGES_FILE), (cached_stdlib, STDLIB_FILE)):
        shutil.copyfile(source, runtime_dir / name)
        size, digest = source.stat().st_size, sha256_file(source)
        shipped.append({"file": f"{runtime_dir.name}/{name}", "size": size, "sha256": digest})
    return shipped[0], shipped[1]


def write_sandbox_lock(
    runtime_dir: Path, lock: Lock, lock_info: dict[str, Any], site_wheels: list[tuple[WheelInfo, Path]]
) -> list[dict[str, Any]]:
    """The python tool's lock (web/sandbox/py-worker.js): the site's wheels plus SANDBOX_REQUIREMENTS.

    The page's own interpreter uses pyodide-lock.json and never sees these extra wheels."""
    extra: list[tuple[WheelInfo, Path]] = []
    for pin in lock.sandbox:
        src = fetch_pinned(pin)
        shutil.copyfile(src, runtime_dir / pin.filename)
        extra.append((read_wheel_info(src), runtime_dir / pin.filename))
    everything = site_wheels + extra
    shipped = {info.name for info, _ in everything}
    packages = {info.name: lock_entry(info, path.name, sha256_file(path), shipped) for info, path in everything}
    write_json(runtime_dir / SANDBOX_LOCK, {"info": lock_info, "packages": dict(sorted(packages.items()))})
    return [
        {
            "name": info.name,
            "version": info.version,
            "file": f"pyodide/{path.name}",
            "sha256": packages[info.name]["sha256"],
            "size": path.stat().st_size,
        }
        for info, path in extra
    ]


def vendor_frontend(dest: Path, pins: Sequence[Pin]) -> list[dict[str, Any]]:
    """Extract the front-end libraries (FRONTEND_PACKAGES) from their pinned npm tarballs."""
    by_name = {pin.name: pin for pin in pins}
    vendored = []
    dest.mkdir(parents=True, exist_ok=True)
    for name, (version, files) in FRONTEND_PACKAGES.items():
        pin = by_name.get(name)
        if pin is None or pin.version != version:
            raise BuildError(
                f"{LOCK_PATH.name} has no pin for the npm package {name} {version}: run `python3 build.py lock`"
            )
        tarball = fetch_pinned(pin)
        with tarfile.open(tarball, "r:gz") as tar:
            for member_name, target in files.items():
                member = tar.extractfile(member_name)
                if member is None:
                    raise BuildError(f"{tarball.name} has no {member_name}")
                data = member.read()
                if target.endswith((".js", ".mjs")):
                    data = re.sub(rb"\n//# sourceMappingURL=[^\n]*", b"", data)
                (dest / target).write_bytes(data)
        vendored.append({"name": name, "version": version, "files": [f"{VENDOR_DIR}/{t}" for t in files.values()]})
    return vendored


# The sandbox frame of the javascript and python tools (web/sandbox/host.js) is one document built
# twice, so the two can never drift apart: frame.html blocks every network request, frame-net.html
# (only for a tool the user allowed network access) lets the code reach http(s) and ws(s) hosts.
# Each fills the template's {{ABOUT}} (its header comment) and {{CSP}} (its policy).
SANDBOX_FRAME_TEMPLATE = "sandbox/frame.template.html"
_FRAME_DENIED = (
    "style-src 'none'; font-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; "
    "form-action 'none'; base-uri 'none'"
)
SANDBOX_FRAMES: dict[str, dict[str, str]] = {
    "sandbox/frame.html": {
        "ABOUT": """\
  The sandbox frame of the javascript and python tools, network OFF.
  The page loads it in <iframe sandbox="allow-scripts"> (never allow-same-origin), so it has an
  opaque origin: no access to the page, its storage or its cookies. This policy blocks every
  network request (connect-src 'none', no script or image hosts) for the frame and for the
  workers it creates from blob: URLs, which inherit it.
  frame-net.html is the same document with network access, for tools the user allowed it.
  The inline script only starts the worker the page sends; it accepts one message, from its
  parent, and never relays messages from the worker to the page (they use a private
  MessageChannel port instead).""",
        "CSP": "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' blob:; worker-src blob:; "
        f"connect-src 'none'; img-src 'none'; {_FRAME_DENIED}",
    },
    "sandbox/frame-net.html": {
        "ABOUT": """\
  The sandbox frame of the javascript and python tools, network ON: used only for a tool the
  user allowed network access in the settings. Same as frame.html (opaque origin through
  <iframe sandbox="allow-scripts">, no access to the page, its storage or its cookies; one
  message accepted, from the parent; worker traffic on a private MessageChannel port), except
  that its policy lets the code, and the workers it creates, reach http(s) and ws(s) hosts.""",
        "CSP": "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' blob: http: https:; worker-src blob:; "
        f"connect-src http: https: ws: wss:; img-src data: blob: http: https:; {_FRAME_DENIED}",
    },
}


STDLIB_PRELOAD = '<link rel="preload" href="pyodide/{}" as="fetch" crossorigin>'


def copy_web(site: Path, stdlib_file: str = STDLIB_FILE) -> None:
    """web/ into the site; index.html preloads the standard library's zip the page loads
    (STDLIB_FILE, or Pyodide's own in a site built without Node.js)."""
    if not (WEB / "index.html").exists():
        raise BuildError(f"{WEB / 'index.html'} is missing")
    for src in sorted(WEB.rglob("*")):
        rel = src.relative_to(WEB)
        if src.is_dir() or any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        if rel.as_posix() == SANDBOX_FRAME_TEMPLATE:
            continue  # not served itself: write_sandbox_frames() fills it in
        dest = site / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    if stdlib_file != STDLIB_FILE:
        index = (site / "index.html").read_bytes().decode("utf-8")
        if index.count(STDLIB_PRELOAD.format(STDLIB_FILE)) != 1:
            raise BuildError(f"web/index.html must preload pyodide/{STDLIB_FILE} exactly once")
        index = index.replace(STDLIB_PRELOAD.format(STDLIB_FILE), STDLIB_PRELOAD.format(stdlib_file))
        (site / "index.html").write_bytes(index.encode("utf-8"))
    write_sandbox_frames(site)


def write_sandbox_frames(site: Path) -> None:
    # Bytes, not text: no newline translation, so a frame is the template byte for byte but its fields.
    template = (WEB / SANDBOX_FRAME_TEMPLATE).read_bytes().decode("utf-8")
    for rel, fields in SANDBOX_FRAMES.items():
        html = template
        for name, value in fields.items():
            placeholder = "{{" + name + "}}"
            if html.count(placeholder) != 1:
                raise BuildError(f"web/{SANDBOX_FRAME_TEMPLATE} must hold {placeholder} exactly once")
            html = html.replace(placeholder, value)
        (site / rel).write_bytes(html.encode("utf-8"))


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")


def prepare_test_wheels() -> Path:
    """Put the test-only wheels (pytest and its deps, for Pyodide) in .cache/test-wheels/."""
    lock = read_lock()
    TEST_WHEELS.mkdir(parents=True, exist_ok=True)
    entries = []
    for pin in lock.test:
        src = fetch_pinned(pin)
        dest = TEST_WHEELS / pin.filename
        if not dest.exists() or dest.stat().st_size != pin.size:
            shutil.copyfile(src, dest)
        entries.append({"name": pin.name, "version": pin.version, "file": pin.filename, "sha256": pin.sha256})
    manifest = TEST_WHEELS / "manifest.json"
    write_json(manifest, {"wheels": entries})
    return manifest


# --------------------------------------------------------------------------------------
# `lock`: resolve pins from npm and PyPI
# --------------------------------------------------------------------------------------


def get_json(url: str) -> Any:
    try:
        return json.loads(http_get(url))
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        raise BuildError(f"cannot read {url}: {exc}") from exc


def npm_pin(name: str, version: str) -> Pin:
    """Pin an npm package's tarball (checked against the registry's integrity hash)."""
    meta = get_json(f"{NPM_REGISTRY}/{name}/{version}")
    url = meta["dist"]["tarball"]
    log(f"hashing {url}")
    data = http_get(url)
    integrity = meta["dist"].get("integrity", "")
    if integrity.startswith("sha512-"):
        if base64.b64encode(hashlib.sha512(data).digest()).decode() != integrity.removeprefix("sha512-"):
            raise BuildError(f"{url} does not match the registry's integrity {integrity}")
    else:
        expected_sha1 = meta["dist"].get("shasum")
        if expected_sha1 and hashlib.sha1(data).hexdigest() != expected_sha1:
            raise BuildError(f"{url} does not match the registry's shasum {expected_sha1}")
    return Pin(name, version, url.rsplit("/", 1)[1], url, hashlib.sha256(data).hexdigest(), len(data))


def lock_pyodide() -> Pin:
    return npm_pin(PYODIDE_NPM_PACKAGE, PYODIDE_VERSION)


def resolve_for_pyodide(
    requirements: Sequence[str], ignore_requires_python: bool = False
) -> list[tuple[str, str, str]]:
    """(name, version, wheel filename) for each package pip resolves for Pyodide's platform.

    pip checks Requires-Python against the Python running it, not PYODIDE_PYTHON:
    ``ignore_requires_python`` lets pinned packages that need a newer Python through."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--dry-run",
            "--ignore-installed",
            "--only-binary=:all:",
            "--python-version",
            PYODIDE_PYTHON,
            "--implementation",
            "cp",
            "--abi",
            PYODIDE_ABI,
            "--platform",
            PYODIDE_PLATFORM,
            "--target",
            str(Path(tmp) / "t"),
            "--report",
            str(report),
            *(["--ignore-requires-python"] if ignore_requires_python else []),
            *requirements,
        ]
        subprocess.run(cmd, check=True)
        installs = json.loads(report.read_text(encoding="utf-8"))["install"]
    return [
        (i["metadata"]["name"], i["metadata"]["version"], i["download_info"]["url"].rsplit("/", 1)[1]) for i in installs
    ]


def canonical_file_url(url: str) -> str:
    """PyPI's file URL in its usual form (some mirrors answer with relative links)."""
    match = re.search(r"/packages/([0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{60}/[^/]+)$", url)
    return f"https://files.pythonhosted.org/packages/{match.group(1)}" if match else url


def pypi_pin(name: str, version: str, filename: str) -> Pin:
    project = get_json(f"{PYPI_JSON}/{canonical_name(name)}/json")
    for file in project.get("releases", {}).get(version, []):
        if file["filename"] == filename:
            return Pin(
                canonical_name(name),
                version,
                filename,
                canonical_file_url(file["url"]),
                file["digests"]["sha256"],
                int(file["size"]),
            )
    raise BuildError(f"PyPI lists no file {filename} for {name} {version}")


def cmd_lock() -> int:
    pyodide = lock_pyodide()
    site = [pypi_pin(*r) for r in resolve_for_pyodide(SITE_REQUIREMENTS)]
    site_names = {p.name for p in site}
    test = [pypi_pin(*r) for r in resolve_for_pyodide(TEST_REQUIREMENTS)]
    test = [p for p in test if p.name not in site_names]
    sandbox = [pypi_pin(*r) for r in resolve_for_pyodide(SANDBOX_REQUIREMENTS, ignore_requires_python=True)]
    sandbox = [p for p in sandbox if p.name not in site_names]
    data = {
        "_comment": "Generated by `python3 build.py lock`; every download of build.py is checked "
        "against these sha256 pins. Edit the requirements in build.py, not this file.",
        "requirements": {
            "site": list(SITE_REQUIREMENTS),
            "test": list(TEST_REQUIREMENTS),
            "sandbox": list(SANDBOX_REQUIREMENTS),
            "platform": PYODIDE_PLATFORM,
            "python": PYODIDE_PYTHON,
        },
        "pyodide": pyodide.to_json(),
        "npm": [npm_pin(name, version).to_json() for name, (version, _) in FRONTEND_PACKAGES.items()],
        "wheels": {
            "site": [p.to_json() for p in sorted(site, key=lambda p: p.name)],
            "test": [p.to_json() for p in sorted(test, key=lambda p: p.name)],
            "sandbox": [p.to_json() for p in sorted(sandbox, key=lambda p: p.name)],
        },
    }
    write_json(LOCK_PATH, data)
    log(
        f"wrote {LOCK_PATH.name}: pyodide {pyodide.version}, "
        f"site: {', '.join(f'{p.name} {p.version}' for p in site)}; "
        f"test: {', '.join(f'{p.name} {p.version}' for p in test)}"
    )
    return 0


# --------------------------------------------------------------------------------------
# `serve`
# --------------------------------------------------------------------------------------


# Types that some systems' mime tables lack (a module script needs a JavaScript type).
MIME_TYPES = {
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".wasm": "application/wasm",
    ".whl": "application/zip",
}


class StaticHandler(http.server.SimpleHTTPRequestHandler):
    def guess_type(self, path: str | os.PathLike[str]) -> str:
        return MIME_TYPES.get(os.path.splitext(str(path))[1].lower()) or super().guess_type(path)


class QuietStaticHandler(StaticHandler):
    """StaticHandler without a log line per request (the tests' and benchmarks' servers)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a browser that drops a connection mid-download is not a failure


def serve_in_background(folder: str | os.PathLike[str]) -> tuple[str, Callable[[], None]]:
    """A plain static server for folder on 127.0.0.1, in a thread, without request logs (the tests'
    and benchmarks' server): (base URL without a trailing slash, stop)."""
    server = QuietServer(("127.0.0.1", 0), functools.partial(QuietStaticHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_address[1]}", stop


def cmd_serve(port: int) -> int:
    build_site()
    handler = functools.partial(StaticHandler, directory=str(STATIC))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise BuildError(f"cannot listen on 127.0.0.1:{port}: {exc}. Try --port with another number.") from exc
    print(f"Serving static/ at http://127.0.0.1:{server.server_address[1]}/  (Ctrl+C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


# --------------------------------------------------------------------------------------
# `test` and `bench`: machine set-up
# --------------------------------------------------------------------------------------


def venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv() -> Path:
    """Create .venv if missing; (re)install `.[test]` editable when pyproject.toml changed."""
    python = venv_python()
    if not python.exists():
        log(f"creating {VENV}")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    stamp = VENV / ".py-agent-installed"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text().strip() != wanted:
        log("installing .[test] into .venv (editable)")
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[test]"], check=True)
        stamp.write_text(wanted + "\n")
    return python


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def apt_install(package: str) -> bool:
    if not (is_root() and shutil.which("apt-get")):
        return False
    log(f"installing Debian's {package} package (apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", package], check=True, env=env)
    return True


def chromium_path() -> str:
    return os.environ.get("PY_AGENT_CHROMIUM", CHROMIUM_DEFAULT)


def ensure_chromium() -> None:
    if Path(chromium_path()).exists():
        return
    if os.environ.get("PY_AGENT_CHROMIUM") is None and apt_install("chromium") and Path(CHROMIUM_DEFAULT).exists():
        return
    raise BuildError(
        f"Chromium is missing ({chromium_path()} does not exist). Install Debian's package as root:\n"
        f"    apt-get update && apt-get install -y chromium\n"
        f"or point PY_AGENT_CHROMIUM at a Chromium or Chrome binary."
    )


def node_major() -> int | None:
    node = shutil.which("node")
    if node is None:
        return None
    out = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout
    match = re.match(r"v(\d+)", out.strip())
    return int(match.group(1)) if match else None


def ensure_node() -> None:
    major = node_major()
    if major is None and apt_install("nodejs"):
        major = node_major()
    if major is None:
        raise BuildError(
            "Node.js is missing (needed to run the core tests inside Pyodide). Install it as root:\n"
            "    apt-get update && apt-get install -y nodejs"
        )
    if major < MIN_NODE_MAJOR:
        raise BuildError(
            f"Node.js {major} is too old for Pyodide {PYODIDE_VERSION}: install Node.js >= {MIN_NODE_MAJOR}"
        )


def run_step(title: str, cmd: Sequence[str], env: dict[str, str] | None = None) -> int:
    print(f"\n=== {title}: {' '.join(cmd)}", flush=True)
    return subprocess.run(list(cmd), cwd=ROOT, env=env, check=False).returncode


def cmd_test(pytest_args: Sequence[str]) -> int:
    python = ensure_venv()
    ensure_chromium()
    ensure_node()
    build_site()
    prepare_test_wheels()
    venv_bin = str(python.parent)
    env = {
        **os.environ,
        "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "PY_AGENT_CHROMIUM": chromium_path(),
    }
    failed = []
    lint_steps = [
        ("ruff", [str(python), "-m", "ruff", "check", "py_agent"]),
        ("mypy", [str(python), "-m", "mypy", "--strict", "py_agent/core"]),
    ]
    for title, cmd in lint_steps:
        if run_step(title, cmd, env) != 0:
            failed.append(title)
    rc = run_step("pytest", [str(python), "-m", "pytest", *pytest_args], env)
    if rc == 5:
        print("pytest ran no tests: that counts as a failure here", flush=True)
    if rc != 0:
        failed.append(f"pytest (exit {rc})")
    if failed:
        print(f"\nbuild.py test: FAILED: {', '.join(failed)}", flush=True)
        return rc if rc not in (0,) else 1
    print("\nbuild.py test: ruff, mypy and pytest passed", flush=True)
    return 0


def bench_scripts() -> list[Path]:
    """bench/*.py that run as scripts (helpers start with "_"; others lack a __main__ block)."""
    return [
        path
        for path in sorted(BENCH.glob("*.py"))
        if not path.name.startswith("_") and "__main__" in path.read_text(encoding="utf-8")
    ]


def cmd_bench(names: Sequence[str]) -> int:
    python = ensure_venv()
    ensure_chromium()
    ensure_node()
    build_site()
    prepare_test_wheels()
    scripts = bench_scripts()
    if names:
        scripts = [s for s in scripts if s.stem in names or s.name in names]
        if not scripts:
            raise BuildError(f"no bench script named {', '.join(names)} in {BENCH}")
    env = {**os.environ, "PY_AGENT_CHROMIUM": chromium_path()}
    failed = [s.name for s in scripts if run_step(f"bench {s.name}", [str(python), str(s)], env) != 0]
    if failed:
        print(f"bench failed: {', '.join(failed)}", flush=True)
        return 1
    return 0


# --------------------------------------------------------------------------------------


def main(argv: Sequence[str]) -> int:
    argv = list(argv)
    command = argv[0] if argv and not argv[0].startswith("-") else "build"
    rest = argv[1:] if argv and not argv[0].startswith("-") else argv
    try:
        if command == "test":
            return cmd_test(rest)  # every argument goes to pytest unchanged
        parser = argparse.ArgumentParser(
            prog="build.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        if command == "build":
            parser.add_argument("--quiet", action="store_true")
            build_site(quiet=parser.parse_args(rest).quiet)
            return 0
        if command == "serve":
            parser.add_argument("--port", type=int, default=8000)
            return cmd_serve(parser.parse_args(rest).port)
        if command == "bench":
            parser.add_argument("names", nargs="*", help="bench script names (default: all)")
            return cmd_bench(parser.parse_args(rest).names)
        if command == "lock":
            parser.parse_args(rest)
            return cmd_lock()
        parser.print_help()
        print(f"\nunknown command: {command}", file=sys.stderr)
        return 2
    except BuildError as exc:
        print(f"build.py: error: {exc}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        print(
            f"build.py: error: command failed (exit {exc.returncode}): {' '.join(map(str, exc.cmd))}", file=sys.stderr
        )
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
