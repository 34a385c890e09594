"""What the built site gives the service worker and the boot: the manifest's list of files, and
the site-packages bundle (build.py's site_files() and build_site_packages(), scripts/site_packages.mjs)."""

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


def test_site_packages_bundle_is_the_wheels_installed_and_compiled(built_site: Path) -> None:
    info = manifest(built_site)
    if shutil.which("node") is None:
        assert info["site_packages"] is None  # without Node.js the site ships without it
        return
    bundle = info["site_packages"]
    assert bundle is not None, "Node.js is there, but the site has no site-packages.bin"
    assert build.SITE_PACKAGES_FILE in bundle["file"]
    data = (built_site / bundle["file"]).read_bytes()
    assert len(data) == bundle["size"] and hashlib.sha256(data).hexdigest() == bundle["sha256"]
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

    # The bytecode: checked-hash .pyc files (PEP 552 flags 0b11) of the wheels' sources, and of the
    # standard library modules py_agent imports (with their sources) in _py_agent_stdlib/.
    magics = set()
    for path, pyc in files.items():
        if not path.endswith(".pyc"):
            continue
        folder, _, name = path.rpartition("/")
        source = f"{folder.removesuffix('__pycache__').rstrip('/')}/{name.split('.')[0]}.py".lstrip("/")
        assert source in sources or (path.startswith("_py_agent_stdlib/") and source in files), path
        magics.add(pyc[:4])
        assert int.from_bytes(pyc[4:8], "little") == 0b11, path
    assert len(magics) == 1
    # py_agent's own modules are all there, compiled.
    assert {s for s in sources if s.startswith("py_agent/")} == {
        f"{p.split('/__pycache__/')[0]}/{p.rsplit('/', 1)[1].split('.')[0]}.py"
        for p in files
        if p.startswith("py_agent/") and p.endswith(".pyc")
    }
    assert "_py_agent_stdlib/ipaddress.py" in files
