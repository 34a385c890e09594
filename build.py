#!/usr/bin/env python3
"""Build, serve, test and benchmark py-agent's static site.

Standard library only, CPython 3.11+.

    python3 build.py                     build static/ (the deployable site)
    python3 build.py serve [--port N]    build, then serve static/ on http://127.0.0.1:N/ (default 8000);
                                         --host: on every interface, printing the network URL (for a
                                         phone on the same network); --host HOST: on that address
    python3 build.py test [PYTEST ARGS]  set up .venv, Chromium and Node.js, build, lint the whole
                                         repository (ruff check, ruff format --check, mypy --strict
                                         py_agent, biome and tsc over the JavaScript), run pytest
    python3 build.py test --quick        lint as above, then the tests that need no browser, Node.js,
                                         Pyodide, built site or network (no machine setup, no build)
    python3 build.py bench [NAME ...]    build, then run bench/*.py (or only the named scripts)
    python3 build.py lock                re-resolve every pin through pip and npm; rewrite build.lock.json
    python3 build.py docs                the API reference (pdoc) into static/api/
    python3 build.py dist                the wheel and sdist of py-agent into dist/, ready for an index

Every download goes through the registries' own clients (`pip download` for the wheels, `npm pack`
for the npm tarballs), so pip's and npm's configuration (index, mirror, proxy) applies. Each file
is pinned by version and sha256 in build.lock.json, verified, and cached under .cache/downloads/
(or $PY_AGENT_DOWNLOADS), so a second build needs no network.

Layout of static/ (all URLs inside the site are relative, so it works from any sub-path):

    index.html, app.css, boot/ ...     the page (copied from web/)
    manifest.json                      what the page loads: runtime files and wheels, with sizes and hashes
    pyodide/                           Pyodide's runtime files, the wheels, and the site's own
                                       pyodide-lock.json (only the packages shipped here, with sha256);
                                       sandbox-lock.json: the same plus the python tool's extra wheels;
                                       site-packages.bin: the site's packages installed, with their
                                       bytecode precompiled, as the page writes them (needs Node.js)
                                       python_stdlib_bytecode.zip: Pyodide's python_stdlib.zip with the
                                       bytecode of the modules the page imports (needs Node.js)
                                       memory-snapshot.bin: Python's memory once py_agent is imported,
                                       gzip'd, which a first visit restores (needs Node.js)
    sw.js                              the service worker: every file of manifest.json's "files", cached
    app.webmanifest, icons/            the web app manifest (install) and its PNG icons (drawn by the build)

The work is done by the modules of buildsys/ (beside this file); this file is the entry point and
keeps the names that tests/ and bench/ import from `build`.
"""

from __future__ import annotations

import json  # noqa: F401  (bench/boot.py reads build.json)
import sys

from buildsys.config import (
    BENCH,
    CACHE,
    CHROMIUM_ARGS,
    CHROMIUM_DEFAULT,
    DOWNLOADS,
    LOCK_PATH,
    PACKAGE_DIR,
    PYODIDE_VERSION,
    ROOT,
    SITE_PACKAGES_FILE,
    SITE_WHEEL_EXCLUDES,
    SNAPSHOT_FILE,
    STATIC,
    STDLIB_FILE,
    STDLIB_PRELOAD,
    STOCK_STDLIB_FILE,
    WEB,
    BuildError,
    sha256_file,
)
from buildsys.downloads import fetch_pinned, prepare_test_wheels
from buildsys.pins import Lock, Pin, read_lock
from buildsys.serve import QuietServer, QuietStaticHandler, StaticHandler, serve_in_background
from buildsys.site import build_site, inputs_digest, site_files, site_is_stale, snapshot_site
from buildsys.wheel import build_py_agent_wheel, package_files, py_agent_version, read_wheel_info

__all__ = [
    "BENCH",
    "CACHE",
    "CHROMIUM_ARGS",
    "CHROMIUM_DEFAULT",
    "DOWNLOADS",
    "LOCK_PATH",
    "PACKAGE_DIR",
    "PYODIDE_VERSION",
    "ROOT",
    "SITE_PACKAGES_FILE",
    "SITE_WHEEL_EXCLUDES",
    "SNAPSHOT_FILE",
    "STATIC",
    "STDLIB_FILE",
    "STDLIB_PRELOAD",
    "STOCK_STDLIB_FILE",
    "WEB",
    "BuildError",
    "Lock",
    "Pin",
    "QuietServer",
    "QuietStaticHandler",
    "StaticHandler",
    "build_py_agent_wheel",
    "build_site",
    "fetch_pinned",
    "inputs_digest",
    "main",
    "package_files",
    "prepare_test_wheels",
    "py_agent_version",
    "read_lock",
    "read_wheel_info",
    "serve_in_background",
    "sha256_file",
    "site_files",
    "site_is_stale",
    "snapshot_site",
]


def main(argv: list[str]) -> int:
    from buildsys.commands import main as run

    return run(argv, doc=__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
