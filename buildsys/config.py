"""Paths, what the site is made of (versions and requirements), and helpers every module shares."""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "static"
WEB = ROOT / "web"
PACKAGE_DIR = ROOT / "py_agent"
CACHE = ROOT / ".cache"
# PY_AGENT_DOWNLOADS moves the download cache (e.g. to try a build from an empty one).
DOWNLOADS = Path(os.environ.get("PY_AGENT_DOWNLOADS") or CACHE / "downloads")
TEST_WHEELS = CACHE / "test-wheels"
LOCK_PATH = ROOT / "build.lock.json"
VENV = ROOT / ".venv"
BENCH = ROOT / "bench"
BUILD_SOURCES = (ROOT / "build.py", *sorted((ROOT / "buildsys").glob("*.py")))

# What the lock resolves (`python3 build.py lock`). build.lock.json holds the result.
PYODIDE_NPM_PACKAGE = "pyodide"
PYODIDE_VERSION = "314.0.7"
PYODIDE_PYTHON = "3.14"
PYODIDE_ABI = "cp314"
PYODIDE_PLATFORM = "pyemscripten_2026_0_wasm32"
SITE_REQUIREMENTS = ("pydantic==2.14.3", "pathspec==1.1.1")  # shipped in static/ for the page
TEST_REQUIREMENTS = ("pytest",)  # only for the Pyodide test runner; kept in .cache/test-wheels/
# Only for the python tool's sandboxed interpreter (web/sandbox/), never loaded by the page's own:
# listed with the site's wheels in pyodide/sandbox-lock.json.
SANDBOX_REQUIREMENTS = ("micropip==0.11.1", "pyodide-http==0.2.2")  # micropip as Pyodide 314 ships it
# Files taken from the npm tarball: the ES module loader, the Emscripten module, the
# interpreter, the standard library and Pyodide's own lock (read for its "info" only).
PYODIDE_RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
STOCK_STDLIB_FILE = "python_stdlib.zip"  # no bytecode; the page loads STDLIB_FILE instead when built
PYODIDE_UPSTREAM_LOCK = "pyodide-lock.json"
# Pyodide's ES modules are shipped under .js names: stock servers (Debian's nginx 1.22 among them)
# have no type for .mjs and serve it as application/octet-stream, which browsers refuse for a
# module script; every server types .js as JavaScript. The loader's import of the Emscripten
# module is renamed with it (site.rename_runtime_modules). Build-time Node.js scripts use the
# .mjs files before the rename.
RUNTIME_RENAMES = {"pyodide.mjs": "pyodide.js", "pyodide.asm.mjs": "pyodide.asm.js"}

# Front-end libraries of the page, from npm tarballs pinned in build.lock.json ("npm"):
# package -> (version, {file in the tarball: file under static/vendor/}). Source-map comments are
# dropped (the maps are not shipped); each library's license is shipped beside it.
FRONTEND_PACKAGES: dict[str, tuple[str, dict[str, str]]] = {
    "marked": ("18.2.1", {"package/lib/marked.esm.js": "marked.esm.js", "package/LICENSE": "marked.LICENSE.txt"}),
    "dompurify": (
        "3.5.0",
        {"package/dist/purify.es.mjs": "purify.es.js", "package/LICENSE": "dompurify.LICENSE.txt"},
    ),
    "@highlightjs/cdn-assets": (
        "11.12.0",
        {"package/es/highlight.min.js": "highlight.min.js", "package/LICENSE": "highlight.js.LICENSE.txt"},
    ),
    # Text extraction of attached documents, in web/attachments/extract-worker.js (a module worker).
    "pdfjs-dist": (
        "6.5.438",
        {
            "package/build/pdf.min.mjs": "pdf.min.js",
            "package/build/pdf.worker.min.mjs": "pdf.worker.min.js",
            "package/LICENSE": "pdfjs.LICENSE.txt",
        },
    ),
    "mammoth": (
        "1.13.0",
        {"package/mammoth.browser.min.js": "mammoth.browser.min.js", "package/LICENSE": "mammoth.LICENSE.txt"},
    ),
    "read-excel-file": (
        "9.3.17",
        {
            "package/bundle/read-excel-file.min.js": "read-excel-file.min.js",
            "package/LICENSE": "read-excel-file.LICENSE.txt",
        },
    ),
}
VENDOR_DIR = "vendor"

# The page's own modules, bundled by the build (buildsys/bundle.py runs scripts/bundle.mjs under
# Node.js): each entry below becomes one module and the code the entries share a few chunks in
# bundle/. Loaded one by one, the ~60 modules each cost the page's thread a fetch through the
# service worker and a module record, before the first screen and again before ready
# (BENCHMARKS.md, "Time to ready"). esbuild as its WebAssembly build: one npm tarball, pinned in
# build.lock.json ("npm") like the front-end libraries, that runs on every platform Node.js does.
BUNDLER_PACKAGE = ("esbuild-wasm", "0.28.2")
BUNDLE_SCRIPT = ROOT / "scripts" / "bundle.mjs"
# index.html's module scripts: the first screen's (web/boot/early-start.js imports it), the start's
# and the app's. An entry in a folder is written over itself, one at the site's root into bundle/
# (scripts/bundle.mjs says where: manifest.json's "bundle" entries).
BUNDLE_ENTRIES = ("boot/early.js", "boot/boot.js", "app.js")


# Left out of the site's py_agent wheel (paths relative to py_agent/): CPython-only code. The
# package that `pip install .` builds keeps them.
SITE_WHEEL_EXCLUDES = ("testing/*", "transports/httpx.py")

SANDBOX_LOCK = "sandbox-lock.json"
SITE_PACKAGES_SCRIPT = ROOT / "scripts" / "site_packages.mjs"
# What that script runs besides the site's files: the Python it runs in Pyodide (byte-compiling, the
# bundle, the standard library's zip) and the page's module with Python's environment.
SITE_PACKAGES_INPUTS = (SITE_PACKAGES_SCRIPT, ROOT / "buildsys" / "in_pyodide.py", ROOT / "web" / "boot" / "runtime.js")
SITE_PACKAGES_FILE = "site-packages.bin"
SNAPSHOT_SCRIPT = ROOT / "scripts" / "snapshot.mjs"
# The memory snapshot a first visit restores (gzip'd): see site.build_snapshot().
SNAPSHOT_FILE = "memory-snapshot.bin"
# What the snapshot is made with besides the site's files (scripts/snapshot.mjs imports them).
SNAPSHOT_WEB_MODULES = tuple(
    f"boot/{name}" for name in ("runtime.js", "snapshot.js", "install.js", "unpack.js", "bytes.js")
)
STDLIB_FILE = "python_stdlib_bytecode.zip"  # the page's standard library: see site.build_site_packages()
# How web/index.html names the standard library's zip among a first visit's preloads (early-start.js).
STDLIB_PRELOAD = 'content="pyodide/pyodide.asm.wasm pyodide/{}"'
# The runtime's WebAssembly, fetched under its version's URL so that the browser's HTTP cache keeps
# it, with V8's compiled code, for a later visit (web/boot/bytes.js HTTP_CACHED and versionedPath,
# web/boot/site-cache.js runtimeFromHttpCache): the build writes that URL into the first visit's
# preloads.
HTTP_CACHED_FILE = "pyodide/pyodide.asm.wasm"


def versioned_path(path: str, sha256: str) -> str:
    """web/boot/bytes.js versionedPath: ``<path>?v=<the first 16 hex digits of its sha256>``."""
    return f"{path}?v={sha256[:16]}"


CHROMIUM_DEFAULT = "/usr/bin/chromium"
# Chromium's heap profiler ("HeapProfilerReporting"), which Chromium turns on at random for some
# browser sessions, passes `--subproc-heap-profiling` to their renderers; its frame-pointer stack
# walk then reads past the end of the WebAssembly stacks Pyodide runs Python on (JSPI) and the
# renderer dies of SIGSEGV ("Target crashed", about once per full test run; the evidence is in
# docs/web-architecture.md, "A crash that is Chromium's"). Chromium keeps only the last
# `--disable-features`, so this list repeats Playwright's (tests/test_chromium_args.py checks it).
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
)
CHROMIUM_DISABLED_FEATURES = (*PLAYWRIGHT_DISABLED_FEATURES, "HeapProfilerReporting")
# How the tests and benchmarks start Chromium headless on a machine with no network and maybe a small
# /dev/shm (containers often give 64 MB, and a page that outgrows it crashes its renderer): shared
# memory in /tmp instead, and none of Chromium's own background connections.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-features=" + ",".join(CHROMIUM_DISABLED_FEATURES),
]
MIN_NODE_MAJOR = 18

# What a test needs beyond the venv, as pytest markers (tests/conftest.py sets them by folder and
# fixture; pyproject.toml registers them). `build.py test --quick` runs the tests that need none.
TEST_NEEDS = {
    "browser": "a browser (tests/browser/: Chromium through Playwright)",
    "engines": "Chromium, Firefox ESR and WebKitGTK (tests/engines/)",
    "pyodide": "Pyodide under Node.js (the run_in_pyodide fixture)",
    "node": "Node.js (the node fixture, or a script run with node)",
    "reference": "pi's reference packages installed with npm (the reference_install, reference_1x_install fixtures)",
    "site": "the built site, static/ (the built_site fixture)",
    "network": "a package index (the dists fixture installs the wheel's dependencies)",
}
# tests/conftest.py marks a test by its folder under tests/ and by the fixtures it uses.
FOLDER_NEEDS = {"browser": ("browser",), "engines": ("engines", "browser")}
FIXTURE_NEEDS = {
    "run_in_pyodide": ("pyodide", "node"),
    "node": ("node",),
    "reference_install": ("reference", "node"),
    "reference_1x_install": ("reference", "node"),
    "built_site": ("site",),
    "dists": ("network",),
}
NEEDS_ANY = " or ".join(TEST_NEEDS)
# Examples per property of the hypothesis tests (tests/conftest.py registers the profiles): the full
# run (CI, or pytest alone) tries the whole budget; `build.py test --quick` a tenth of it.
HYPOTHESIS_EXAMPLES = {"full": 300, "quick": 30}
QUICK_LANE = f"not ({NEEDS_ANY})"
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


class BuildError(Exception):
    """A failure with a message meant for the person running build.py."""


def log(message: str) -> None:
    print(f"[build] {message}", flush=True)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(functools.partial(f.read, 1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
