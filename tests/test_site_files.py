"""What the built site gives the service worker and the boot: the manifest's list of files, and
the site-packages bundle (build.py's site_files() and build_site_packages(), scripts/site_packages.mjs)."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import zipfile
from pathlib import Path
from typing import Any

import build
from buildsys.config import HTTP_CACHED_FILE, versioned_path


def manifest(site: Path) -> dict[str, Any]:
    return dict(json.loads((site / "manifest.json").read_text(encoding="utf-8")))


def test_manifest_lists_every_file_of_the_site(built_site: Path) -> None:
    files = manifest(built_site)["files"]
    listed = {entry["path"]: entry for entry in files}
    on_disk = {
        p.relative_to(built_site).as_posix() for p in built_site.rglob("*") if p.is_file() and p.name != "README.md"
    }
    assert set(listed) == on_disk - {"manifest.json", "sw.js"}
    for path, entry in listed.items():
        data = (built_site / path).read_bytes()
        assert entry["size"] == len(data), path
        assert entry["sha256"] == hashlib.sha256(data).hexdigest(), path
    # The files boot.js needs are there, with the service worker beside index.html.
    assert {"index.html", "boot/boot.js", "boot/runtime.js", "pyodide/pyodide.asm.wasm"} <= set(listed)
    assert (built_site / "sw.js").is_file()


def node_built_file(site: Path, key: str) -> tuple[dict[str, Any], bytes] | None:
    """The manifest's entry `key` for a file the build makes with Node.js, and the file's bytes,
    checked against the entry's size and sha256; None without Node.js (the manifest then says so)."""
    info = manifest(site)
    if shutil.which("node") is None:
        assert info[key] is None  # without Node.js the site ships without it
        return None
    entry = info[key]
    assert entry is not None, f"Node.js is there, but the site has no {key}"
    data = (site / entry["file"]).read_bytes()
    assert len(data) == entry["size"] and hashlib.sha256(data).hexdigest() == entry["sha256"]
    return entry, data


def test_site_packages_bundle_is_the_wheels_installed_and_compiled(built_site: Path) -> None:
    info = manifest(built_site)
    built = node_built_file(built_site, "site_packages")
    if built is None:
        return
    bundle, data = built
    assert build.SITE_PACKAGES_FILE in bundle["file"]
    raw = gzip.decompress(data)
    header, index_line, body = raw.split(b"\n", 2)
    assert header == b"py-agent-site-packages 1"
    index = json.loads(index_line)
    assert sum(size for _, size in index) == len(body)
    files: dict[str, bytes] = {}
    offset = 0
    for path, size in index:
        files[path] = body[offset : offset + size]
        offset += size

    # Every file of every wheel, as it is in the wheel.
    sources: set[str] = set()
    for wheel in info["wheels"]:
        with zipfile.ZipFile(built_site / wheel["file"]) as zf:
            for name in zf.namelist():
                if not name.endswith("/"):
                    assert files.get(name) == zf.read(name), f"{wheel['file']}: {name}"
            sources |= {name for name in zf.namelist() if name.endswith(".py")}
            dist_info = next(n.split("/")[0] for n in zf.namelist() if n.split("/")[0].endswith(".dist-info"))
            assert files[f"{dist_info}/INSTALLER"] == b"pyodide.loadPackage"

    # The bytecode: checked-hash .pyc files (PEP 552 flags 0b11) of the wheels' sources (the
    # standard library's bytecode is in the site's own zip of it: see the next test).
    magics = set()
    for path, pyc in files.items():
        if not path.endswith(".pyc"):
            continue
        folder, _, name = path.rpartition("/")
        source = f"{folder.removesuffix('__pycache__').rstrip('/')}/{name.split('.')[0]}.py".lstrip("/")
        assert source in sources, path
        magics.add(pyc[:4])
        assert int.from_bytes(pyc[4:8], "little") == 0b11, path
    assert len(magics) == 1
    # py_agent's own modules are all there, compiled.
    assert {s for s in sources if s.startswith("py_agent/")} == {
        f"{p.split('/__pycache__/')[0]}/{p.rsplit('/', 1)[1].split('.')[0]}.py"
        for p in files
        if p.startswith("py_agent/") and p.endswith(".pyc")
    }
    assert not any(path.startswith("_py_agent_stdlib/") for path in files)


def test_standard_library_zip_is_pyodides_with_bytecode(built_site: Path) -> None:
    info = manifest(built_site)
    stock = built_site / "pyodide" / build.STOCK_STDLIB_FILE
    assert stock.is_file()  # shipped as it is (the python tool's sandbox loads it)
    index_html = (built_site / "index.html").read_text(encoding="utf-8")
    if shutil.which("node") is None:
        # Without Node.js: Pyodide's own zip, loaded and preloaded.
        assert info["stdlib"] == f"pyodide/{build.STOCK_STDLIB_FILE}"
        assert f"pyodide/{build.STOCK_STDLIB_FILE}" in first_visit_preloads(index_html)
        return
    assert info["stdlib"] == f"pyodide/{build.STDLIB_FILE}"
    assert f"pyodide/{build.STDLIB_FILE}" in first_visit_preloads(index_html)
    # It is the runtime file the page loads (checked and counted), in place of Pyodide's own.
    runtime = [item["file"] for item in info["runtime"]]
    assert info["stdlib"] in runtime and f"pyodide/{build.STOCK_STDLIB_FILE}" not in runtime
    with zipfile.ZipFile(stock) as zs, zipfile.ZipFile(built_site / info["stdlib"]) as zb:
        # Every member of Pyodide's zip, unchanged and in the same order ...
        names = zb.namelist()
        assert [n for n in names if not n.endswith(".pyc")] == zs.namelist()
        for name in zs.namelist():
            assert zb.read(name) == zs.read(name), name
        # ... and beside the sources of the modules the page imports, unchecked-hash .pyc files
        # (PEP 552 flags 0b01: zipimport uses them without reading the source), one magic number.
        pycs = [n for n in names if n.endswith(".pyc")]
        started = {"encodings/__init__.pyc", "asyncio/base_events.pyc", "json/decoder.pyc"}
        started.add("importlib/metadata/__init__.pyc")  # imported by importlib.invalidate_caches()
        assert started <= set(pycs)
        assert {zb.read(n)[:4] for n in pycs} == {zb.read(pycs[0])[:4]}
        for name in pycs:
            assert name[:-1] in zs.namelist(), name
            assert int.from_bytes(zb.read(name)[4:8], "little") == 0b01, name


def test_every_file_index_html_names_is_in_the_site(built_site: Path) -> None:
    # A preload or script of a file the build renamed or dropped costs a 404 at every visit.
    html = (built_site / "index.html").read_text(encoding="utf-8")
    named = re.findall(r'<(?:link|script)\b[^>]*?\b(?:href|src)="([^"#?:]+)"', html)
    assert named, "index.html names its scripts and preloads"
    # ... and the runtime's files a first visit preloads (web/boot/early-start.js).
    named += first_visit_preloads(html)
    missing = [path for path in named if not (built_site / path.split("?")[0]).is_file()]
    assert not missing, f"index.html names files the site does not have: {missing}"


def first_visit_preloads(html: str) -> list[str]:
    first_visit = re.findall(r'<meta name="py-agent-first-visit-preloads" content="([^"]+)"', html)
    assert len(first_visit) == 1, "index.html names a first visit's preloads once"
    return list(first_visit[0].split())


def test_a_first_visit_preloads_the_runtimes_webassembly_under_its_versions_url(built_site: Path) -> None:
    # The URL the page fetches it by (web/boot/site-cache.js, runtimeFromHttpCache), so that the
    # preload is used, and the HTTP cache keeps it for a later visit under a URL no other build has.
    files = {entry["path"]: entry for entry in manifest(built_site)["files"]}
    wasm = files[HTTP_CACHED_FILE]
    html = (built_site / "index.html").read_text(encoding="utf-8")
    assert first_visit_preloads(html)[0] == f"{HTTP_CACHED_FILE}?v={wasm['sha256'][:16]}"
    assert versioned_path(HTTP_CACHED_FILE, wasm["sha256"]) == first_visit_preloads(html)[0]
    # web/boot/bytes.js writes the same URL (and names the same file).
    bytes_js = (build.WEB / "boot" / "bytes.js").read_text(encoding="utf-8")
    assert f'const HTTP_CACHED = "{HTTP_CACHED_FILE}";' in bytes_js
    assert "return `${path}?v=${sha256Hex.slice(0, 16)}`;" in bytes_js


def fnv_checksum(data: bytes) -> str:
    """web/boot/snapshot.js checksum, written again: FNV-1a over the 32-bit little-endian words,
    then over the last bytes."""
    h = 0x811C9DC5
    whole = len(data) - len(data) % 4
    for word in memoryview(data[:whole]).cast("I"):
        h = ((h ^ word) * 0x01000193) & 0xFFFFFFFF
    for byte in data[whole:]:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


def test_the_shipped_memory_snapshot_is_named_with_its_size_sha256_and_record(built_site: Path) -> None:
    """The memory snapshot a first visit restores (scripts/snapshot.mjs): gzip'd, well under static
    hosts' file size limits, named in manifest.json with its size, sha256 and the record the page
    checks it against (web/boot/snapshot.js), whose checksum is of the inflated bytes."""
    info = manifest(built_site)
    built = node_built_file(built_site, "snapshot")
    if built is None:
        return
    shipped, data = built
    assert shipped["file"] == f"pyodide/{build.SNAPSHOT_FILE}"
    assert len(data) < 20e6  # static hosts cap files at 25 MB (some lower)
    body = gzip.decompress(data)
    record = shipped["record"]
    snapshot_js = (build.WEB / "boot" / "snapshot.js").read_text(encoding="utf-8")
    assert f'SNAPSHOT_KIND = "{record["kind"]}"' in snapshot_js
    assert record["version"] is None  # it belongs to the build whose manifest names it
    assert record["bundle"] == info["site_packages"]["sha256"]
    assert record["size"] == len(body) and record["checksum"] == fnv_checksum(body)
    # Pyodide's snapshot: its magic, then the offset of the memory, which is the recorded size.
    assert int.from_bytes(body[:4], "little") == 1886286592
    assert len(body) - int.from_bytes(body[4:8], "little") == record["heap"]
    assert [lib["path"] for lib in record["libraries"]] == [
        "pydantic_core/_pydantic_core.cpython-314-wasm32-emscripten.so"
    ]
    assert record["tableLength"] > record["tableAtStart"] > 0


# ---- The page's modules, bundled (buildsys/bundle.py, scripts/bundle.mjs) ----

# An import or re-export statement (esbuild writes them first, each after a ";" or a new line).
_STATIC_IMPORT = re.compile(
    r'(?:^|[;\n])\s*(?:import|export)\s*(?:(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s*[\w$]+|\*)?\s*from\s*)?"([^"]+)"'
)
_DYNAMIC_IMPORT = re.compile(r'\bimport\("([^"]+)"\)')


def test_index_html_loads_the_bundle_and_every_import_in_it_is_a_file_of_the_site(built_site: Path) -> None:
    info = manifest(built_site)
    if shutil.which("node") is None:
        assert info["bundle"] is None  # without Node.js the site ships web/'s modules as they are
        return
    bundle = info["bundle"]
    assert bundle is not None, "Node.js is there, but the site is not bundled"
    assert bundle["entries"] == {
        "boot/early.js": "boot/early.js",
        "boot/boot.js": "boot/boot.js",
        "app.js": "bundle/app.js",
    }
    html = (built_site / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script type="module" src="([^"]+)"></script>', html)
    assert scripts == ["boot/boot.js", "bundle/app.js"]
    assert not (built_site / "app.js").exists(), "app.js is the bundle's bundle/app.js"
    # Preloaded: the bundle's files, first (the first screen's, then the start's, then the app's),
    # then only files the bundle imports but leaves as they are (the runtime's, the libraries').
    preloads = re.findall(r'<link rel="modulepreload" href="([^"]+)">', html)
    assert preloads[: len(bundle["preloads"])] == bundle["preloads"]
    assert preloads.index("boot/early.js") < preloads.index("boot/boot.js") < preloads.index("bundle/app.js")
    rest = preloads[len(bundle["preloads"]) :]
    assert rest and all(p.startswith(("pyodide/", "vendor/")) for p in rest), rest
    outputs = sorted(
        p.relative_to(built_site).as_posix()
        for p in [*built_site.glob("bundle/*.js"), built_site / "boot/early.js", built_site / "boot/boot.js"]
    )
    assert set(bundle["preloads"]) <= set(outputs)
    for path in outputs:
        text = (built_site / path).read_text(encoding="utf-8")
        # Its imports are files of the site (the chunks, the libraries, the runtime)...
        for spec in _STATIC_IMPORT.findall(text) + _DYNAMIC_IMPORT.findall(text):
            assert spec.startswith("."), (path, spec)
            target = (built_site / path).parent / spec
            assert target.resolve().is_file(), f"{path} imports {spec}, which the site does not have"
        # ... a URL a module made beside itself names the same file as before (its own site path),
        assert "import.meta.url" not in re.sub(r'new URL\("\.\./[\w./-]+\.js",import\.meta\.url\)', "", text), path
        for own in re.findall(r'new URL\("\.\./([\w./-]+\.js)",import\.meta\.url\)', text):
            assert (built_site / own).is_file(), (path, own)
        # ... and its source map is beside it, with the sources.
        assert text.rstrip().endswith(f"//# sourceMappingURL={path.rsplit('/', 1)[-1]}.map"), path
        source_map = json.loads((built_site / f"{path}.map").read_text(encoding="utf-8"))
        assert len(source_map["sources"]) == len(source_map["sourcesContent"]), path
    # Every module of index.html's graphs is in the bundle: no page module loads a file of web/'s
    # own (those stay in the site for the workers, the service worker and the file preview).
    bundled = "".join((built_site / p).read_text(encoding="utf-8") for p in outputs)
    for spec in _STATIC_IMPORT.findall(bundled):
        assert spec.startswith(("./", "../vendor/", "../bundle/", "../boot/early.js", "../boot/boot.js")), spec
