"""Building static/ (the deployable site) from web/, the pinned downloads and the py_agent wheel."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .bundle import bundle_page_modules
from .config import (
    BUILD_SOURCES,
    BUNDLE_SCRIPT,
    CACHE,
    FRONTEND_PACKAGES,
    HTTP_CACHED_FILE,
    LOCK_PATH,
    PYODIDE_RUNTIME_FILES,
    PYODIDE_UPSTREAM_LOCK,
    PYODIDE_VERSION,
    ROOT,
    RUNTIME_RENAMES,
    SANDBOX_LOCK,
    SITE_PACKAGES_FILE,
    SITE_PACKAGES_INPUTS,
    SITE_PACKAGES_SCRIPT,
    SNAPSHOT_FILE,
    SNAPSHOT_SCRIPT,
    SNAPSHOT_WEB_MODULES,
    STATIC,
    STDLIB_FILE,
    STDLIB_PRELOAD,
    STOCK_STDLIB_FILE,
    VENDOR_DIR,
    WEB,
    BuildError,
    log,
    sha256_file,
    versioned_path,
    write_json,
)
from .downloads import fetch_pinned
from .icons import write_icons
from .pins import Lock, Pin, read_lock
from .wheel import WheelInfo, build_py_agent_wheel, check_dependencies_shipped, package_files, read_wheel_info

try:
    import fcntl
except ImportError:  # not POSIX: builds are not serialized
    fcntl = None  # type: ignore[assignment]


def inputs_digest() -> str:
    """A digest of everything static/ is made from; the tests rebuild when it changes."""
    digest = hashlib.sha256()
    paths = [
        *BUILD_SOURCES,
        LOCK_PATH,
        ROOT / "pyproject.toml",
        SITE_PACKAGES_SCRIPT,
        SNAPSHOT_SCRIPT,
        BUNDLE_SCRIPT,
        *package_files(),
    ]
    paths += sorted(p for p in WEB.rglob("*") if p.is_file())
    for path in paths:
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() if path.exists() else b"<missing>")
        digest.update(b"\0")
    digest.update(f"no-snapshot={snapshot_opted_out()}".encode())
    return digest.hexdigest()


def snapshot_opted_out() -> bool:
    """PY_AGENT_NO_SNAPSHOT=1: the site ships without the memory snapshot (docs/web-architecture.md:
    a shipped snapshot gives every visitor the build's key of Python's string hashing)."""
    return os.environ.get("PY_AGENT_NO_SNAPSHOT", "") not in ("", "0")


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
    rename_runtime_modules(runtime_dir)
    snapshot = build_snapshot(runtime_dir, site_packages, stdlib) if site_packages and stdlib else None
    # The runtime files the page loads: with the precompiled standard library when there is one.
    runtime_files = [
        RUNTIME_RENAMES.get(name, name) for name in PYODIDE_RUNTIME_FILES if not (stdlib and name == STOCK_STDLIB_FILE)
    ]
    if stdlib:
        runtime_files.append(STDLIB_FILE)

    copy_web(site, stdlib_file=STDLIB_FILE if stdlib else STOCK_STDLIB_FILE)
    vendored = vendor_frontend(site / VENDOR_DIR, lock.npm)
    bundle = bundle_page_modules(site, lock)
    manifest = {
        "generated_by": "build.py (do not edit: regenerated by every build)",
        "pyodide_version": lock.pyodide.version,
        "python_version": lock_info.get("python"),
        "index_url": "pyodide/",
        "lock_file": "pyodide/pyodide-lock.json",
        "packages": [py_agent_info.name],
        "imports": list(py_agent_info.imports),
        "py_agent_version": py_agent_info.version,
        "runtime": [{"file": f"pyodide/{name}", "size": (runtime_dir / name).stat().st_size} for name in runtime_files],
        # The standard library's zip that the page and the snapshot's worker load (loadPyodide's
        # stdLibURL): with bytecode when built with Node.js, else Pyodide's own.
        "stdlib": f"pyodide/{stdlib['file'].split('/')[-1] if stdlib else STOCK_STDLIB_FILE}",
        "wheels": manifest_wheels,
        "sandbox_lock_file": f"pyodide/{SANDBOX_LOCK}",
        "sandbox_wheels": sandbox_wheels,
        "site_packages": site_packages,
        # The memory snapshot a first visit restores ({file, size, sha256, record}), or null.
        "snapshot": snapshot,
        "vendor": vendored,
        # The page's modules as bundled (buildsys/bundle.py: {entries, preloads}), or null.
        "bundle": bundle,
        "inputs_sha256": digest,
        "files": site_files(site),
    }
    check_script_names(site)
    write_json(site / "manifest.json", manifest)


# For Node.js (tests/pyodide/run.mjs imports the site's runtime): .js files under this folder are
# ES modules. Browsers never read it.
NODE_MODULE_MARKER = {"type": "module"}


def rename_runtime_modules(runtime_dir: Path) -> None:
    """pyodide.mjs and pyodide.asm.mjs become .js files (config.RUNTIME_RENAMES): the loader's own
    import of the Emscripten module (`${indexURL}pyodide.asm.mjs`) and the Emscripten module's test
    of its own file name in stack traces are renamed with them; their source-map comments go (the
    maps are not shipped)."""
    for old, new in RUNTIME_RENAMES.items():
        text = (runtime_dir / old).read_bytes().decode("utf-8")
        for old_ref, new_ref in RUNTIME_RENAMES.items():
            if old_ref == "pyodide.mjs":
                continue  # neither file names the loader itself
            if text.count(old_ref) != 1:
                raise BuildError(
                    f"pyodide/{old} names {old_ref} {text.count(old_ref)} times, expected once: "
                    "the rename in buildsys/site.py must be checked against this Pyodide"
                )
            text = text.replace(old_ref, new_ref)
        text = re.sub(r"\n//# sourceMappingURL=[^\n]*", "", text)
        (runtime_dir / new).write_bytes(text.encode("utf-8"))
        (runtime_dir / old).unlink()
    write_json(runtime_dir / "package.json", NODE_MODULE_MARKER)


def check_script_names(site: Path) -> None:
    """Every script ships as .js: .mjs has no type on many stock servers (see RUNTIME_RENAMES)."""
    stray = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.mjs"))
    if stray:
        raise BuildError(f"the site must not ship .mjs files (stock servers do not type them): {', '.join(stray)}")


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


def node_outputs_cached(
    script: Path, site: Path, outputs: tuple[Path, Path], *, what: str, failure: str, env: dict[str, str] | None = None
) -> bool:
    """Whether both cached outputs of a build script run by Node.js (``node SCRIPT SITE OUT1 OUT2``)
    exist: made now if they do not (each written beside as .part, then moved in, so a failed or
    interrupted run leaves no half-written cache entry). False, having said why, without Node.js
    or when the script fails: the site then ships without ``what``."""
    if all(path.exists() for path in outputs):
        return True
    node = shutil.which("node")
    if node is None:
        log(f"Node.js is missing: the site ships without {what}")
        return False
    partials = [path.with_name(path.name + ".part") for path in outputs]
    outputs[0].parent.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [node, str(script), str(site), *(str(path) for path in partials)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={**os.environ, **(env or {})},
    )
    if result.returncode != 0 or not all(path.exists() for path in partials):
        log(f"{failure}, shipping without: {result.stderr.strip()[-600:]}")
        return False
    for partial, path in zip(partials, outputs, strict=True):
        partial.replace(path)
    return True


def build_site_packages(runtime_dir: Path, wheel_hashes: list[str]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The site's packages installed by Pyodide and byte-compiled (scripts/site_packages.mjs, under
    Node.js), as one bundle that the page writes into site-packages: no wheel to unzip, no source to
    compile at boot; and the standard library's zip with bytecode for the modules the page imports
    (STDLIB_FILE, beside Pyodide's own python_stdlib.zip, which has none). ({file, size, sha256}
    of each) for the manifest.

    Cached in .cache/site-packages/ by the runtime, the wheels and the script's inputs. Without
    Node.js, or if the script fails, the site ships without them (the page then unzips the wheels,
    loads Pyodide's python_stdlib.zip, and imports compile the sources: slower)."""
    key = hashlib.sha256(
        "\0".join([PYODIDE_VERSION, *wheel_hashes, *map(sha256_file, SITE_PACKAGES_INPUTS)]).encode()
    ).hexdigest()
    cached = CACHE / "site-packages" / f"{key}.bin"
    cached_stdlib = cached.with_suffix(".zip")
    if not node_outputs_cached(
        SITE_PACKAGES_SCRIPT,
        runtime_dir.parent,
        (cached, cached_stdlib),
        what="its site-packages bundle (boot is slower)",
        failure="bundling the site's packages failed",
    ):
        return None
    return ship_file(cached, runtime_dir, SITE_PACKAGES_FILE), ship_file(cached_stdlib, runtime_dir, STDLIB_FILE)


def ship_file(source: Path, runtime_dir: Path, name: str) -> dict[str, Any]:
    """Copies a cached build output into the site's runtime folder as `name`: its manifest entry
    ({file, size, sha256})."""
    shutil.copyfile(source, runtime_dir / name)
    return {"file": f"{runtime_dir.name}/{name}", "size": source.stat().st_size, "sha256": sha256_file(source)}


def build_snapshot(runtime_dir: Path, site_packages: dict[str, Any], stdlib: dict[str, Any]) -> dict[str, Any] | None:
    """The memory snapshot that a first visit restores (scripts/snapshot.mjs: Pyodide under Node.js
    does what the page's snapshot worker does, with the same files and the page's own modules),
    gzip'd: {file, size, sha256, record} for the manifest (record: web/boot/snapshot.js's, which the page
    checks against its runtime before restoring it; anything that differs means a normal start).

    Cached in .cache/snapshot/ by the runtime, the two bundles, the script and the page's modules it
    uses. Without Node.js, or if the script fails, the site ships without it (a first visit starts
    Python normally, as before)."""
    if snapshot_opted_out():
        log("PY_AGENT_NO_SNAPSHOT is set: the site ships without its memory snapshot")
        return None
    inputs = [runtime_dir / name for name in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm")]
    inputs += [SNAPSHOT_SCRIPT, *(WEB / name for name in SNAPSHOT_WEB_MODULES)]
    key = hashlib.sha256(
        "\0".join([site_packages["sha256"], stdlib["sha256"], *(sha256_file(p) for p in inputs)]).encode()
    ).hexdigest()
    cached = CACHE / "snapshot" / f"{key}.bin"
    cached_record = cached.with_suffix(".json")
    if not node_outputs_cached(
        SNAPSHOT_SCRIPT,
        runtime_dir.parent,
        (cached, cached_record),
        what="its memory snapshot (a first visit is slower)",
        failure="making the memory snapshot failed",
        env={"TZ": "UTC"},
    ):
        return None
    record = json.loads(cached_record.read_text(encoding="utf-8"))
    return {**ship_file(cached, runtime_dir, SNAPSHOT_FILE), "record": record}


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


def copy_web(site: Path, stdlib_file: str = STDLIB_FILE) -> None:
    """web/ into the site, with the app's icons (buildsys/icons.py); index.html's first-visit
    preloads name the standard library's zip the page loads (STDLIB_FILE, or Pyodide's own in a
    site built without Node.js) and the runtime's WebAssembly under its version's URL."""
    if not (WEB / "index.html").exists():
        raise BuildError(f"{WEB / 'index.html'} is missing")
    for src in sorted(WEB.rglob("*")):
        rel = src.relative_to(WEB)
        if src.is_dir() or any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        if rel.as_posix() == SANDBOX_FRAME_TEMPLATE:
            continue  # not served itself: write_sandbox_frames() fills it in
        if src.name.endswith(".d.ts"):
            continue  # types for TypeScript's checks (jsconfig.json), not the page's
        dest = site / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    write_icons(site)
    index = (site / "index.html").read_bytes().decode("utf-8")
    if index.count(STDLIB_PRELOAD.format(STDLIB_FILE)) != 1:
        raise BuildError(f"web/index.html must preload pyodide/{STDLIB_FILE} exactly once")
    wasm = versioned_path(HTTP_CACHED_FILE, sha256_file(site / HTTP_CACHED_FILE))
    preloads = STDLIB_PRELOAD.format(stdlib_file).replace(HTTP_CACHED_FILE, wasm)
    index = index.replace(STDLIB_PRELOAD.format(STDLIB_FILE), preloads)
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
