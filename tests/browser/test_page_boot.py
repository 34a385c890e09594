"""The page boots Pyodide from the site's own files, installs and imports py_agent.

Each test serves static/ (or a copy of it) with a plain static file server and opens it in
headless Chromium.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from web_app_helpers import JSPI_CHECK

import build

Serve = Callable[[Path], str]
Visit = Callable[[str], object]


def manifest(site: Path) -> dict[str, object]:
    return json.loads((site / "manifest.json").read_text(encoding="utf-8"))


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def test_page_boots_and_imports_py_agent(built_site: Path, serve: Serve, visit) -> None:
    run = visit(serve(built_site) + "/")
    shown_error = run.page.locator("#boot-error").inner_text() if run.state == "error" else ""
    assert run.state == "ready", f"page state {run.state}: {shown_error}\nconsole: {run.console}"

    info = manifest(built_site)
    assert run.page.locator("#version-py-agent").inner_text() == build.py_agent_version()
    assert run.page.locator("#version-pyodide").inner_text() == info["pyodide_version"]
    assert run.page.locator("#version-python").inner_text() == info["python_version"]
    # The boot screen shows "Ready" (then the app replaces it).
    assert run.page.locator("#boot-ready").get_attribute("hidden") is None
    steps = run.page.locator("#boot-steps li")
    assert [steps.nth(i).get_attribute("data-status") for i in range(steps.count())] == ["done"] * 4

    # The booted interpreter is exposed to the page's other modules, with py_agent imported.
    version = run.page.evaluate("() => window.pyAgent.pyodide.runPython('import py_agent; py_agent.__version__')")
    assert version == build.py_agent_version()
    # Python runs on the thread's own stack: no WebAssembly stack switching (JSPI), whose stacks
    # Chromium's heap profiler walks off (docs/web-architecture.md, "A crash that is Chromium's");
    # the page's WebAssembly has it back once Python has started.
    assert run.page.evaluate(JSPI_CHECK) == [False, True]

    errors = [text for kind, text in run.console if kind == "error"]
    assert not errors and not run.page_errors, f"console errors: {errors} page errors: {run.page_errors}"


def test_every_request_stays_on_the_page_origin(built_site: Path, serve: Serve, visit) -> None:
    base = serve(built_site)
    run = visit(base + "/")
    assert run.state == "ready"
    assert run.requests, "no request was recorded"
    foreign = [url for url in run.requests if origin(url) != base]
    assert not foreign, f"requests to other origins: {foreign}"
    # The runtime and the packages (site-packages.bin, or each wheel without it) came from the site itself.
    info = manifest(built_site)
    packages = [info["site_packages"]] if info["site_packages"] else info["wheels"]
    # (The runtime's WebAssembly under its version's URL: web/boot/site-cache.js, runtimeFromHttpCache.)
    loaded = {url.split("?v=")[0] for url in run.requests}
    for item in [*info["runtime"], *packages]:  # type: ignore[misc]
        assert f"{base}/{item['file']}" in loaded, f"{item['file']} was not loaded"


def test_site_works_from_a_sub_path(built_site: Path, serve: Serve, visit, tmp_path: Path) -> None:
    host_root = tmp_path / "host"
    sub = host_root / "some" / "sub" / "path"
    sub.parent.mkdir(parents=True)
    os.symlink(built_site, sub, target_is_directory=True)
    base = serve(host_root)
    run = visit(f"{base}/some/sub/path/")
    assert run.state == "ready", run.page.locator("#boot-error").inner_text()
    outside = [url for url in run.requests if not url.startswith(f"{base}/some/sub/path/")]
    assert not outside, f"requests outside the sub-path: {outside}"


def flip_bytes(path: Path, offsets: tuple[int, ...] = (0, 1, 2, 3)) -> None:
    """Damage a file without changing its size (so only its content, or its hash, tells)."""
    data = bytearray(path.read_bytes())
    for offset in offsets:
        data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def flip_tail(path: Path) -> None:
    """Damage a zip's directory (its last 4 kB, but the end record), keeping its size."""
    size = path.stat().st_size
    flip_bytes(path, tuple(range(size - 4000, size - 22, 7)))


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])


def packages_file(site: Path) -> str:
    """What the page installs the packages from: site-packages.bin (built with Node.js)."""
    bundle = manifest(site)["site_packages"]
    assert bundle, "the site was built without site-packages.bin"
    return bundle["file"]  # type: ignore[index]


def stdlib_file(site: Path) -> str:
    """The standard library's zip the page loads (and the one damaged below)."""
    return str(manifest(site)["stdlib"])


BREAKAGES = {
    # id: (how the copy of the site is broken, the steps that may fail, words the error must show,
    # or functions of the site that give them)
    "missing-wasm": (lambda s: (s / "pyodide/pyodide.asm.wasm").unlink(), {"download"}, ["pyodide.asm.wasm", "404"]),
    "missing-loader": (lambda s: (s / "pyodide/pyodide.js").unlink(), {"download"}, ["pyodide.js"]),
    "corrupt-wasm": (lambda s: flip_bytes(s / "pyodide/pyodide.asm.wasm"), {"compile"}, ["pyodide.asm.wasm"]),
    # The standard library's zip the page loads (manifest "stdlib": the site's own, with bytecode,
    # when built with Node.js; Pyodide's python_stdlib.zip otherwise).
    "truncated-stdlib": (lambda s: truncate(s / stdlib_file(s)), {"download"}, [stdlib_file]),
    # Same size, damaged content: Python fails to start or to import, depending on what was hit
    # (its zip directory, at the end).
    "corrupt-stdlib": (
        lambda s: flip_tail(s / stdlib_file(s)),
        {"compile", "import"},
        ["Python"],
    ),
    "packages-hash-mismatch": (
        lambda s: flip_bytes(s / packages_file(s), (100, 101)),
        {"install"},
        ["site-packages.bin", "sha256"],
    ),
    "missing-packages": (lambda s: (s / packages_file(s)).unlink(), {"install"}, ["site-packages.bin", "404"]),
}
# Visited with a normal start (`?no-snapshot`): a restored memory snapshot holds zipimport's index
# of the standard library's zip, so Python never reads the damaged zip directory (and works).
NORMAL_START = {"corrupt-stdlib"}


@pytest.mark.parametrize("breakage", list(BREAKAGES))
def test_broken_site_shows_a_visible_error(
    breakage: str, built_site: Path, serve: Serve, visit, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    damage, failed_steps, words = BREAKAGES[breakage]
    damage(site)

    run = visit(serve(site) + "/" + ("?no-snapshot" if breakage in NORMAL_START else ""))
    assert run.state == "error"
    error_box = run.page.locator("#boot-error")
    assert error_box.is_visible()
    message = error_box.inner_text()
    for word in (w(site) if callable(w) else w for w in words):
        assert word in message, f"{word!r} not in the error shown:\n{message}"
    failed = run.page.locator("#boot-steps li[data-status='failed']")
    assert failed.count() == 1, message
    assert failed.get_attribute("data-step") in failed_steps, message
    assert run.page.locator("#boot-ready").is_hidden()
