"""The Python that ``scripts/site_packages.mjs`` runs in the site's own Pyodide (under Node.js, at
build time): byte-compiling site-packages, the bundle the page writes into site-packages
(``site-packages.bin``) and the standard library's zip with the bytecode of the modules a page
imports. Run there with the standard library only (the script loads this file's source into a
namespace of its own); nothing runs at import time. The probe of what a page imports runs this
file too: the modules it imports at its top are among those a page imports anyway (gzip and
py_compile, which a page does not import, are imported where they are used).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import os
import sys
import sysconfig
import zipfile
from collections.abc import Iterable
from importlib import _bootstrap_external

BUNDLE_FORMAT = b"py-agent-site-packages 1"


def site_packages() -> str:
    return sysconfig.get_paths()["purelib"]


def compile_site_packages(site: str | None = None) -> None:
    """Compiles every .py file of site-packages as a checked-hash .pyc (Python compares a hash of the
    source before using one, so a .pyc can never stand in for other sources)."""
    import py_compile

    for folder, dirs, names in os.walk(site or site_packages()):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            if name.endswith(".py") and not folder.endswith(".dist-info"):
                source = os.path.join(folder, name)
                # A file that does not compile is compiled (and fails) at import, as without the bundle.
                with contextlib.suppress(py_compile.PyCompileError):
                    py_compile.compile(
                        source,
                        cfile=importlib.util.cache_from_source(source),
                        dfile=source,
                        doraise=True,
                        invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
                    )


def bundle(site: str | None = None) -> bytes:
    """Every file of site-packages as one gzip'd bundle, written deterministically (sorted, mtime 0):
    ``"py-agent-site-packages 1\\n" + JSON [[path relative to site-packages, size], ...] + "\\n" +``
    the files' bytes (``web/boot/unpack.js`` reads it)."""
    import gzip

    root = site or site_packages()
    files = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                files.append((os.path.relpath(path, root).replace(os.sep, "/"), f.read()))
    index = json.dumps([[rel, len(data)] for rel, data in files], separators=(",", ":"))
    raw = BUNDLE_FORMAT + b"\n" + index.encode() + b"\n" + b"".join(data for _, data in files)
    return gzip.compress(raw, compresslevel=9, mtime=0)


def stdlib_zip() -> str:
    """Where the runtime mounts the standard library's zip (the page mounts it at the same path)."""
    return next(p for p in sys.path if p.endswith(".zip"))


def imported_stdlib_modules() -> list[str]:
    """Imports what a page imports (``py_agent.browser.boot``: the app, and what the snapshot's warm-up
    imports lazily: the plugins, the model catalogue); returns the files of the standard library's
    zip that the imported modules came from (every one imported so far, Pyodide's start's too)."""
    sys.dont_write_bytecode = True
    importlib.invalidate_caches()  # as the page does once it has written site-packages
    from py_agent.browser import boot

    boot.import_app()
    boot.warm()
    zip_path = stdlib_zip()
    origins = (
        getattr(getattr(module, "__spec__", None), "origin", None) or "" for module in list(sys.modules.values())
    )
    return sorted({o[len(zip_path) + 1 :] for o in origins if o.startswith(zip_path + "/") and o.endswith(".py")})


def write_stdlib_zip(members: Iterable[str], out: str, zip_path: str | None = None) -> None:
    """A copy of the standard library's zip (``zip_path``) at ``out`` with an unchecked-hash .pyc
    beside each of ``members`` (.py files), compiled with the file name an import from the zip
    gives its code: zipimport takes ``name.pyc`` before ``name.py`` and uses an unchecked-hash one
    without reading the source or comparing dates; the sources stay (tracebacks, ``inspect``)."""
    zip_path = zip_path or stdlib_zip()
    compiled = set(members)
    with zipfile.ZipFile(zip_path) as stock, zipfile.ZipFile(out, "w") as copy:
        names = set(stock.namelist())
        for info in stock.infolist():
            data = stock.read(info)
            copy.writestr(info, data, compress_type=info.compress_type, compresslevel=9)
            if info.filename in compiled and info.filename + "c" not in names:
                code = compile(data, f"{zip_path}/{info.filename}", "exec", dont_inherit=True, optimize=0)
                pyc = _bootstrap_external._code_to_hash_pyc(  # type: ignore[attr-defined]
                    code, importlib.util.source_hash(data), checked=False
                )
                entry = zipfile.ZipInfo(info.filename + "c", date_time=info.date_time)
                entry.external_attr = info.external_attr
                copy.writestr(entry, bytes(pyc), compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
