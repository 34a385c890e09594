"""What the built site gives the service worker and the boot: the manifest's list of files, and
the precompiled bytecode (build.py's site_files() and build_pycache(), scripts/pycache.mjs)."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import build


def manifest(site: Path) -> dict[str, Any]:
    return dict(json.loads((site / "manifest.json").read_text(encoding="utf-8")))


def test_manifest_lists_every_file_of_the_site(built_site: Path) -> None:
    files = manifest(built_site)["files"]
    listed = {entry["path"]: entry for entry in files}
    on_disk = {
        p.relative_to(built_site).as_posix()
        for p in built_site.rglob("*")
        if p.is_file() and p.name != "README.md"
    }
    assert set(listed) == on_disk - {"manifest.json", "sw.js"}
    for path, entry in listed.items():
        data = (built_site / path).read_bytes()
        assert entry["size"] == len(data), path
        assert entry["sha256"] == hashlib.sha256(data).hexdigest(), path
    # The files boot.js needs are there, with the service worker beside index.html.
    assert {"index.html", "boot.js", "fastboot.js", "pyodide/pyodide.asm.wasm"} <= set(listed)
    assert (built_site / "sw.js").is_file()


def test_precompiled_bytecode_matches_the_wheels(built_site: Path) -> None:
    info = manifest(built_site)
    if shutil.which("node") is None:
        assert info["pycache"] is None  # without Node.js the site ships without it
        return
    pycache = info["pycache"]
    assert pycache is not None, "Node.js is there, but the site has no precompiled bytecode"
    data = (built_site / pycache["file"]).read_bytes()
    assert len(data) == pycache["size"] and hashlib.sha256(data).hexdigest() == pycache["sha256"]
    raw = gzip.decompress(data)
    header, index_line, body = raw.split(b"\n", 2)
    assert header == b"py-agent-pycache 1"
    index = json.loads(index_line)
    assert sum(size for _, size in index) == len(body)

    sources: set[str] = set()
    for wheel in info["wheels"]:
        with zipfile.ZipFile(built_site / wheel["file"]) as zf:
            sources |= {name for name in zf.namelist() if name.endswith(".py")}
    magics = set()
    offset = 0
    for path, size in index:
        pyc = body[offset : offset + size]
        offset += size
        folder, _, name = path.rpartition("/")
        source = f"{folder.removesuffix('__pycache__').rstrip('/')}/{name.split('.')[0]}.py".lstrip("/")
        assert source in sources, path
        magics.add(pyc[:4])
        # PEP 552: flags 0b11, a hash-based .pyc checked against its source before use.
        assert int.from_bytes(pyc[4:8], "little") == 0b11, path
    assert len(magics) == 1
    assert any(p.startswith("py_agent/") for p, _ in index) and any(p.startswith("pydantic/") for p, _ in index)
    # py_agent's own modules are all there.
    assert {s for s in sources if s.startswith("py_agent/")} == {
        f"{p.split('/__pycache__/')[0]}/{p.rsplit('/', 1)[1].split('.')[0]}.py" for p, _ in index if p.startswith("py_agent/")
    }
    assert build.PYCACHE_FILE in pycache["file"]
