"""The page's own modules bundled (scripts/bundle.mjs under Node.js, with esbuild's WebAssembly
build from its pinned npm tarball), and index.html made to load the bundle.

What changes in the site (everything else is web/'s files as they are, which the workers, the
service worker and the file preview still load one by one):
- boot/early.js and boot/boot.js are the bundle's entries, bundle/app.js app.js's (app.js itself
  is left out: index.html's module script names bundle/app.js), bundle/ holds the shared chunks;
  each output has its source map (sources included) beside it;
- index.html's module preloads: the bundle's files in place of the modules bundled (the runtime's
  and the front-end libraries' preloads stay: the bundle imports those files).

Without Node.js the site ships unbundled (web/'s modules, loaded one by one: slower)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from .config import BUNDLE_ENTRIES, BUNDLE_SCRIPT, BUNDLER_PACKAGE, CACHE, BuildError, log
from .downloads import fetch_pinned
from .pins import Lock

PRELOAD = re.compile(r'\n[ \t]*<link rel="modulepreload" href="([^"]+)">')
PRELOAD_GROUP = re.compile(
    r'(\n[ \t]*<!--(?:(?!-->).)*-->)((?:\n[ \t]*<link rel="modulepreload" href="[^"]+">)+)', re.S
)
BUNDLE_MARK = "\0bundle\0"
MODULE_SCRIPT = '<script type="module" src="{}"></script>'


def bundle_page_modules(site: Path, lock: Lock) -> dict[str, Any] | None:
    """Bundles the site's BUNDLE_ENTRIES in place; the manifest's "bundle" entry ({entries,
    preloads}: site paths), or None when Node.js is missing (the site stays unbundled)."""
    node = shutil.which("node")
    if node is None:
        log("Node.js is missing: the site ships its modules unbundled (the page starts slower)")
        return None
    result = subprocess.run(
        [node, str(BUNDLE_SCRIPT), str(esbuild_package(lock)), str(site), *BUNDLE_ENTRIES],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if result.returncode != 0:
        raise BuildError(f"bundling the page's modules failed:\n{result.stderr.strip()[-1500:]}")
    bundled = json.loads(result.stdout)
    for entry, output in bundled["entries"].items():
        if output != entry:
            (site / entry).unlink()  # written elsewhere: index.html names its output instead
    index = site / "index.html"
    index.write_bytes(load_bundle(index.read_bytes().decode("utf-8"), bundled).encode("utf-8"))
    return {"entries": bundled["entries"], "preloads": bundled["preloads"]}


def load_bundle(html: str, bundled: dict[str, Any]) -> str:
    """index.html loading the bundle: the bundled modules' preloads replaced by the bundle's files
    (where the first of them was), the module script of an entry written elsewhere by its output."""
    inputs = set(bundled["inputs"])
    first = next((m for m in PRELOAD.finditer(html) if m.group(1) in inputs), None)
    if first is None:
        raise BuildError("index.html preloads none of the bundled modules")
    indent = re.match(r"\n([ \t]*)", first.group(0))
    pad = indent.group(1) if indent else ""
    preloads = (
        f"\n{pad}<!-- The page's modules, bundled by the build (buildsys/bundle.py): fetched at once. -->"
        + "".join(f'\n{pad}<link rel="modulepreload" href="{path}">' for path in bundled["preloads"])
    )
    html = html[: first.start()] + BUNDLE_MARK + html[first.start() :]
    # A comment on a group of preloads goes with them when they all go.
    html = PRELOAD_GROUP.sub(lambda m: "" if set(PRELOAD.findall(m.group(2))) <= inputs else m.group(0), html)
    html = PRELOAD.sub(lambda m: "" if m.group(1) in inputs else m.group(0), html)
    html = html.replace(BUNDLE_MARK, preloads, 1)
    for entry, output in bundled["entries"].items():
        if output == entry:
            continue
        script = MODULE_SCRIPT.format(entry)
        if html.count(script) != 1:
            raise BuildError(f"web/index.html must hold {script} exactly once")
        html = html.replace(script, MODULE_SCRIPT.format(output))
    return html


def esbuild_package(lock: Lock) -> Path:
    """The pinned esbuild-wasm package, unpacked once into .cache/ (its folder holding package.json)."""
    name, version = BUNDLER_PACKAGE
    pin = next((p for p in lock.npm if p.name == name), None)
    if pin is None or pin.version != version:
        raise BuildError(
            f"build.lock.json has no pin for the npm package {name} {version}: run `python3 build.py lock`"
        )
    folder = CACHE / "tools" / f"{name}-{version}-{pin.sha256[:16]}"
    if not (folder / "package.json").exists():
        tarball = fetch_pinned(pin)
        folder.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="unpack-", dir=folder.parent) as tmp:
            with tarfile.open(tarball, "r:gz") as tar:
                if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
                    tar.extractall(tmp, filter="data")
                else:
                    tar.extractall(tmp)
            shutil.rmtree(folder, ignore_errors=True)
            (Path(tmp) / "package").replace(folder)
    return folder
