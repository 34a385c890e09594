"""The site after its first visit: offline use (service worker), a new build picked up at the next
visit, and the memory snapshots: the one shipped with the site (built by scripts/snapshot.mjs), which
a first visit restores, and the one a visit makes for the next when the shipped one did not restore
(web/sw.js, web/boot/site-cache.js, web/boot/snapshot.js).

Each test serves its own copy of the site, so that it can change the files or stop the server.
"Offline" is both Playwright's offline mode and the site's server shut down.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM_ARGS
from web_app_helpers import JSPI_CHECK, open_app, serve_folder

OFFLINE_READY_TIMEOUT_MS = 180_000


class Site:
    """A copy of the built site on a static server that can be stopped and restarted."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.base, self._stop = serve_folder(str(folder))

    def stop(self) -> None:
        self._stop()


@pytest.fixture
def site(built_site: Path, tmp_path: Path) -> Iterator[Site]:
    folder = tmp_path / "site"
    shutil.copytree(built_site, folder)
    served = Site(folder)
    yield served
    served.stop()


def without_shipped_snapshot(folder: Path) -> None:
    """The site as if built without its memory snapshot: a first visit starts Python normally and
    makes the snapshot that later visits restore (the path a shipped snapshot that fails takes)."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["snapshot"], "the site was built without its memory snapshot (Node.js)"
    manifest["snapshot"] = None
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


def boot_info(page: Any) -> dict[str, Any]:
    return dict(page.evaluate("() => ({ ...window.pyAgent.boot, stored: undefined })"))


PYDANTIC_CHECK = """() => window.pyAgent.pyodide.runPython(`
from pydantic import BaseModel, ValidationError
class _T(BaseModel):
    x: int
try:
    _T(x="no")
    _r = "no error"
except ValidationError as e:
    _r = f"{e.error_count()} error"
_r`)"""


DELETE_KEPT_SNAPSHOT = """async () => {
  for (const name of (await caches.keys()).filter((k) => k.startsWith("py-agent-site-"))) {
    const cache = await caches.open(name);
    for (const request of (await cache.keys()).filter((r) => r.url.endsWith("/__sw__/snapshot"))) {
      await cache.delete(request);
    }
  }
}"""


def wait_offline_ready(page: Any) -> None:
    """The service worker has every file of the site, and the memory snapshot is kept."""
    page.locator("html[data-offline]").wait_for(state="attached", timeout=OFFLINE_READY_TIMEOUT_MS)
    assert page.get_attribute("html", "data-offline") == "ready", page.evaluate("() => window.pyAgent.offline")
    page.evaluate("async () => { await window.pyAgent.boot.stored; }")


def site_caches(page: Any) -> list[str]:
    return list(page.evaluate("async () => (await caches.keys()).filter((k) => k.startsWith('py-agent-site-'))"))


def manifest_version(folder: Path) -> str:
    return hashlib.sha256((folder / "manifest.json").read_bytes()).hexdigest()


def rebuild_with(folder: Path, changes: dict[str, str]) -> None:
    """A new build of the site: some files changed, and manifest.json lists their new hashes."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    for path, text in changes.items():
        (folder / path).write_text(text, encoding="utf-8")
    for entry in manifest["files"]:
        if entry["path"] in changes:
            data = (folder / entry["path"]).read_bytes()
            entry["size"] = len(data)
            entry["sha256"] = hashlib.sha256(data).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


def reload_ready(page: Any) -> None:
    page.reload()
    page.locator("html[data-app='ready'], html[data-app='error']").wait_for(state="attached", timeout=120_000)
    assert page.get_attribute("html", "data-app") == "ready"


def test_a_first_visit_restores_the_shipped_snapshot_and_later_visits_too_offline(browser: Any, site: Site) -> None:
    """A new profile restores the memory snapshot shipped with the site (no interpreter start, no
    import, no snapshot made in a worker) and keeps its bytes for the next visit; the app works;
    offline, the next visit restores the kept bytes, and without them the shipped file from the
    service worker's cache."""
    app = open_app(browser, site.base, timezone_id="America/New_York")
    page = app.page
    try:
        boot = boot_info(page)
        assert (boot["snapshot"], boot["from"]) == ("restored", "shipped"), boot
        assert "rejected" not in boot, boot
        assert not any("snapshot-worker.js" in r.url for r in app.requests)  # no snapshot worker
        shipped = json.loads((site.folder / "manifest.json").read_text(encoding="utf-8"))["snapshot"]["file"]
        assert any(r.url == f"{site.base}/{shipped}" for r in app.requests), "the shipped snapshot was not fetched"
        assert page.evaluate(PYDANTIC_CHECK) == "1 error"
        # The interpreter's time zone is this browser's, not the build's (UTC).
        zone = page.evaluate("""() => window.pyAgent.pyodide.runPython(`
import time
[time.timezone, time.altzone, time.daylight, list(time.tzname), time.localtime(0).tm_hour]`).toJs()""")
        assert zone[:3] == [5 * 3600, 4 * 3600, 1] and zone[4] == 19, zone
        assert "0500" in zone[3][0] and "0400" in zone[3][1], zone
        # Nothing of the build machine's Node.js: the program's name and runtime are a page's.
        runtime, program = page.evaluate("""() => window.pyAgent.pyodide.runPython(`
import os, sys
[sys._emscripten_info.runtime, repr((sys.executable, sys.orig_argv, sorted(os.environ.items())))]`).toJs()""")
        assert runtime == page.evaluate("() => navigator.userAgent")
        assert "this.program" in program and "snapshot.mjs" not in program, program
        # A restored Python runs on the thread's own stack too (JSPI_CHECK).
        assert page.evaluate(JSPI_CHECK) == [False, True]

        app.type_and_enter("Show me what this app can do")
        page.locator("#transcript .msg.assistant:not(.streaming) table").wait_for(timeout=60_000)
        app.wait_idle()
        assert (
            page.locator("#transcript .msg.assistant")
            .last.locator("h2", has_text="Hello from the offline demo")
            .count()
            == 1
        )

        wait_offline_ready(page)
        assert page.evaluate("() => window.pyAgent.boot.stored") == "made"
        site.stop()
        page.context.set_offline(True)
        reload_ready(page)
        assert page.evaluate("() => !!navigator.serviceWorker.controller")
        boot = boot_info(page)
        assert (boot["snapshot"], boot["from"]) == ("restored", "kept"), boot
        assert page.evaluate(PYDANTIC_CHECK) == "1 error"

        page.evaluate(DELETE_KEPT_SNAPSHOT)
        reload_ready(page)
        boot = boot_info(page)
        assert (boot["snapshot"], boot["from"]) == ("restored", "shipped"), boot
        assert page.evaluate(PYDANTIC_CHECK) == "1 error"
        assert not [line for line in app.console if line.startswith("error:")], app.console
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()


@pytest.mark.parametrize(
    ("kind", "reason"),
    [("damaged", "shipped snapshot"), ("table", "function table"), ("build", "another build")],
)
def test_a_shipped_snapshot_that_does_not_match_means_a_normal_start(
    browser: Any, site: Site, kind: str, reason: str
) -> None:
    """A shipped snapshot whose bytes differ from the manifest's sha256, or whose record does not
    match this runtime or this build, is left out: Python starts normally, the app works, and a
    snapshot is made for the next visit, which restores it."""
    manifest_path = site.folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    shipped = manifest["snapshot"]
    if kind == "damaged":
        path = site.folder / shipped["file"]
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
        # The site's file list has the damaged bytes (so the service worker keeps them): only the
        # snapshot's own sha256 tells.
        entry = next(f for f in manifest["files"] if f["path"] == shipped["file"])
        entry["sha256"] = hashlib.sha256(data).hexdigest()
    elif kind == "table":
        shipped["record"]["tableAtStart"] += 1
    else:
        shipped["record"]["bundle"] = "0" * 64
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")

    app = open_app(browser, site.base)
    page = app.page
    try:
        boot = boot_info(page)
        assert boot["snapshot"] in ("pending", "made") and boot["from"] is None, boot
        assert reason in (boot.get("rejected") or ""), boot
        app.type_and_enter("Show me what this app can do")
        page.locator("#transcript .msg.assistant:not(.streaming) table").wait_for(timeout=60_000)
        app.wait_idle()
        wait_offline_ready(page)
        assert page.evaluate("() => window.pyAgent.boot.snapshot") == "made"

        reload_ready(page)
        boot = boot_info(page)
        assert (boot["snapshot"], boot["from"]) == ("restored", "kept"), boot
        assert page.evaluate(PYDANTIC_CHECK) == "1 error"
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()


def test_works_offline_after_the_first_visit(browser: Any, site: Site) -> None:
    without_shipped_snapshot(site.folder)
    app = open_app(browser, site.base)
    page = app.page
    try:
        # The snapshot for the next visit is made once the app is ready, in a worker.
        assert page.evaluate("() => window.pyAgent.boot.snapshot") in ("pending", "made")
        wait_offline_ready(page)
        assert page.evaluate("() => window.pyAgent.boot.snapshot") == "made"
        assert site_caches(page) == [f"py-agent-site-{manifest_version(site.folder)}"]

        site.stop()
        page.context.set_offline(True)
        requests_before, console_before = len(app.requests), len(app.console)
        reload_ready(page)
        # Served by the service worker; Python restored from the memory snapshot.
        assert page.evaluate("() => !!navigator.serviceWorker.controller")
        assert page.evaluate("() => window.pyAgent.boot.snapshot") == "restored"
        served = [r.url for r in app.requests[requests_before:] if r.url.startswith(site.base)]
        assert served, "the reload made no request to the site at all"
        assert not [line for line in app.console[console_before:] if line.startswith("error:")], app.console

        # The offline demo model answers.
        app.type_and_enter("Show me what this app can do")
        page.locator("#transcript .msg.assistant:not(.streaming) table").wait_for(timeout=60_000)
        app.wait_idle()
        reply = page.locator("#transcript .msg.assistant").last
        assert reply.locator("h2", has_text="Hello from the offline demo").count() == 1
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()


WASM_FETCHES = """() => performance.getEntriesByType("resource")
  .map((e) => new URL(e.name))
  .filter((url) => url.pathname.endsWith("/pyodide/pyodide.asm.wasm") && url.search !== "?check")
  .map((url) => performance.getEntriesByName(url.href).map((e) => ({
    url: url.pathname.split("/").slice(-2).join("/") + url.search,
    from: { cache: "HTTP cache", "cache-storage": "service worker", "": "network" }[e.deliveryType] ?? e.deliveryType,
  }))[0])"""


def visit(context: Any, base: str) -> tuple[Any, list[str]]:
    """A new page of the app, ready; and the errors its console shows (filled as they come)."""
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(base + "/?demo-tps=0")
    page.locator("html[data-app='ready'], html[data-app='error']").wait_for(state="attached", timeout=120_000)
    assert page.get_attribute("html", "data-app") == "ready"
    return page, errors


def test_a_later_visit_reads_the_runtimes_webassembly_from_the_http_cache(
    browser: Any, chromium_path: str, site: Site, tmp_path: Path
) -> None:
    """Chromium keeps V8's compiled code of a WebAssembly module fetched through the HTTP cache, not
    of one a service worker answers from Cache Storage: pyodide.asm.wasm is fetched under its
    version's URL, from the network on a first visit (the preload's request) and from the HTTP
    cache on later ones (web/boot/site-cache.js, runtimeFromHttpCache), when the service worker
    says it is there. Not there (a cleared cache), it comes from the service worker as the other
    files do, without a failed request."""
    files = {f["path"]: f for f in json.loads((site.folder / "manifest.json").read_text(encoding="utf-8"))["files"]}
    versioned = f"pyodide/pyodide.asm.wasm?v={files['pyodide/pyodide.asm.wasm']['sha256'][:16]}"
    plain = "pyodide/pyodide.asm.wasm"
    context = browser.browser_type.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True
    )
    try:
        first, _ = visit(context, site.base)
        assert first.evaluate(WASM_FETCHES) == [{"url": versioned, "from": "network"}]
        wait_offline_ready(first)
        first.close()

        later, errors = visit(context, site.base)
        assert later.evaluate("() => window.pyAgent.boot.snapshot") == "restored"
        assert later.evaluate(WASM_FETCHES) == [{"url": versioned, "from": "HTTP cache"}]
        assert not errors, errors
        later.close()

        # A new build with the same runtime: the same URL, still in the HTTP cache.
        css = (site.folder / "app.css").read_text(encoding="utf-8")
        rebuild_with(site.folder, {"app.css": css + "\n/* another build */\n"})
        updated, errors = visit(context, site.base)
        assert updated.evaluate(WASM_FETCHES) == [{"url": versioned, "from": "HTTP cache"}]
        assert not errors, errors
        updated.close()

        # The HTTP cache cleared: from the service worker's cache, without the version.
        cleared = context.new_page()
        context.new_cdp_session(cleared).send("Network.clearBrowserCache")
        cleared.close()
        after, errors = visit(context, site.base)
        assert after.evaluate(WASM_FETCHES) == [{"url": plain, "from": "service worker"}]
        assert after.evaluate("() => window.pyAgent.boot.snapshot") == "restored"
        assert not errors, errors
    finally:
        context.close()


def test_a_new_build_is_used_at_the_next_visit(browser: Any, site: Site) -> None:
    without_shipped_snapshot(site.folder)
    app = open_app(browser, site.base)
    page = app.page
    try:
        wait_offline_ready(page)
        first = manifest_version(site.folder)
        assert site_caches(page) == [f"py-agent-site-{first}"]

        # A new build: index.html carries a marker, app.css a new rule.
        index = (site.folder / "index.html").read_text(encoding="utf-8")
        css = (site.folder / "app.css").read_text(encoding="utf-8")
        rebuild_with(
            site.folder,
            {
                "index.html": index.replace("<head>", '<head>\n  <meta name="py-agent-test-build" content="2">', 1),
                "app.css": css + "\n:root { --py-agent-test-build: 2; }\n",
            },
        )
        second = manifest_version(site.folder)
        assert second != first

        # The next visit gets the new build at once, without clearing anything.
        reload_ready(page)
        assert page.locator("meta[name='py-agent-test-build']").count() == 1
        value = page.evaluate(
            "() => getComputedStyle(document.documentElement).getPropertyValue('--py-agent-test-build')"
        )
        assert value.strip() == "2"
        # A new version of the site: a new memory snapshot, a new cache; the old one is deleted.
        wait_offline_ready(page)
        assert page.evaluate("() => window.pyAgent.boot.snapshot") == "made"
        assert site_caches(page) == [f"py-agent-site-{second}"]

        # And offline, it is still the new build.
        site.stop()
        page.context.set_offline(True)
        reload_ready(page)
        assert page.locator("meta[name='py-agent-test-build']").count() == 1
        assert page.evaluate("() => window.pyAgent.boot.snapshot") == "restored"
    finally:
        page.context.close()


# Changes the kept memory snapshot (web/boot/snapshot.js) in the page's cache: "damaged" flips a byte of
# its body, "build" makes its record another build's, "table" records another function table.
TAMPER_SNAPSHOT = """async (kind) => {
  const names = (await caches.keys()).filter((k) => k.startsWith("py-agent-site-"));
  if (names.length !== 1) throw new Error(`caches: ${names}`);
  const cache = await caches.open(names[0]);
  const [request] = (await cache.keys()).filter((r) => r.url.endsWith("/__sw__/snapshot"));
  const response = await cache.match(request);
  const meta = JSON.parse(response.headers.get("x-py-agent-snapshot"));
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (kind === "damaged") bytes[bytes.length >> 1] ^= 0xff;
  if (kind === "build") meta.version = "0".repeat(64);
  if (kind === "table") meta.tableAtStart += 1;
  await cache.put(request, new Response(bytes, {
    headers: { "content-type": "application/octet-stream", "x-py-agent-snapshot": JSON.stringify(meta) },
  }));
}"""


@pytest.mark.parametrize(
    ("kind", "reason"),
    [("damaged", "damaged"), ("build", "another build"), ("table", "function table")],
)
def test_a_snapshot_that_does_not_match_means_a_normal_start(browser: Any, site: Site, kind: str, reason: str) -> None:
    """A damaged snapshot, one of another build, or one whose function table differs is left out:
    Python starts normally, the app works, and a new snapshot is made for the next visit."""
    without_shipped_snapshot(site.folder)
    app = open_app(browser, site.base)
    page = app.page
    try:
        wait_offline_ready(page)
        assert page.evaluate("() => window.pyAgent.boot.snapshot") == "made"
        page.evaluate(TAMPER_SNAPSHOT, kind)

        reload_ready(page)
        boot = page.evaluate("() => ({ ...window.pyAgent.boot, stored: undefined })")
        assert boot["snapshot"] in ("pending", "made"), boot
        assert reason in (boot["rejected"] or ""), boot
        assert page.evaluate("() => window.pyAgent.state") == "ready"
        wait_offline_ready(page)
        assert page.evaluate("() => window.pyAgent.boot.snapshot") == "made"

        # The new snapshot restores, and pydantic-core works in it.
        reload_ready(page)
        assert page.evaluate("() => window.pyAgent.boot.snapshot") == "restored"
        assert page.evaluate(PYDANTIC_CHECK) == "1 error"
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()


# Replaces the service worker's copy of web/boot/read-ahead.js with a script that fails as it starts.
BREAK_READ_AHEAD = """async () => {
  for (const name of (await caches.keys()).filter((k) => k.startsWith("py-agent-site-"))) {
    const cache = await caches.open(name);
    for (const request of (await cache.keys()).filter((r) => r.url.endsWith("/read-ahead.js"))) {
      await cache.put(request, new Response('throw new Error("broken on purpose");', {
        headers: { "content-type": "text/javascript" },
      }));
    }
  }
}"""

# Every file and folder under site-packages: {path: [mode, size, sha256]} (a folder: 0 and the hash of b"").
SITE_PACKAGES_TREE = """() => window.pyAgent.pyodide.runPython(`
import hashlib, json, os, site
_root = site.getsitepackages()[0]
_tree = {}
for _folder, _dirs, _files in os.walk(_root):
    for _name in _dirs + _files:
        _path = os.path.join(_folder, _name)
        _st = os.stat(_path)
        _data = b"" if _name in _dirs else open(_path, "rb").read()
        _tree[os.path.relpath(_path, _root)] = [_st.st_mode, _st.st_size if _data else 0, hashlib.sha256(_data).hexdigest()]
json.dumps(_tree)`)"""


def bundle_files(folder: Path) -> dict[str, bytes]:
    """The files in the site's site-packages.bin (web/boot/unpack.js reads the same format)."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    raw = gzip.decompress((folder / manifest["site_packages"]["file"]).read_bytes())
    head, listing, body = raw.split(b"\n", 2)
    assert head == b"py-agent-site-packages 1"
    files, at = {}, 0
    for path, size in json.loads(listing):
        files[path] = body[at : at + size]
        at += size
    return files


def test_a_later_visit_reads_the_snapshot_and_the_packages_in_a_worker(browser: Any, site: Site) -> None:
    """A later visit reads the kept snapshot and site-packages.bin in a worker (web/boot/read-ahead.js),
    restores from them and writes every file of the packages as they are; with that worker broken,
    the page reads them itself and works the same."""
    app = open_app(browser, site.base)
    page = app.page
    try:
        wait_offline_ready(page)
        expected = bundle_files(site.folder)
        for broken in (False, True):
            if broken:
                page.evaluate(BREAK_READ_AHEAD)
            reload_ready(page)
            boot = boot_info(page)
            assert (boot["snapshot"], boot["from"]) == ("restored", "kept"), boot
            marks = page.evaluate("() => window.pyAgent.marks")
            bundle = "pyodide/site-packages.bin"
            assert (f"{bundle} read ahead" in marks, f"{bundle} arrived" in marks) == (not broken, broken), marks
            assert page.evaluate(PYDANTIC_CHECK) == "1 error"

            tree = json.loads(page.evaluate(SITE_PACKAGES_TREE))
            for path, data in expected.items():
                assert tree.get(path) == [0o100666, len(data), hashlib.sha256(data).hexdigest()], path
            folders = {str(Path(p).parent) for p in expected} - {"."}
            for folder in folders:
                assert tree.get(folder, [None])[0] == 0o40777, folder
            # A module that no start imports, from the files written at this start.
            imported = page.evaluate("""() => window.pyAgent.pyodide.runPython(`
import importlib, sys
_name = "annotated_types.test_cases"
_before = _name in sys.modules
[_before, any(True for _ in importlib.import_module(_name).cases())]`).toJs()""")
            assert imported == [False, True]
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()


# The files web/boot/install.js's memfsWriter writes and those FS.writeFile and FS.mkdirTree write (what
# Pyodide's own install does) for the same paths, read back by Python: the same tree.
WRITERS = """async () => {
  const { memfsWriter } = await import(new URL("boot/install.js", document.baseURI).href);
  const { FS } = window.pyAgent.pyodide;
  const files = [
    ["a.py", new TextEncoder().encode("A = 1\\n")],
    ["pkg/__init__.py", new Uint8Array(0)],
    ["pkg/sub/deep/mod.py", new TextEncoder().encode("X = 'deep'\\n")],
    ["pkg/sub/data.bin", new Uint8Array([0, 1, 2, 255])],
    ["pkg-1.0.dist-info/INSTALLER", "pyodide.loadPackage"],
    ["a.py", new TextEncoder().encode("A = 2\\n")],  // again: replaced
  ];
  for (const root of ["/tmp/writer-fs", "/tmp/writer-memfs"]) {
    FS.mkdirTree(`${root}/pkg`);  // a folder that is there already
    FS.writeFile(`${root}/pkg/old.py`, "OLD = True\\n");
  }
  for (const [path, data] of files) {
    const target = `/tmp/writer-fs/${path}`;
    FS.mkdirTree(target.slice(0, target.lastIndexOf("/")));
    FS.writeFile(target, typeof data === "string" ? data : data.slice(), { canOwn: true });
  }
  const write = memfsWriter(FS, "/tmp/writer-memfs");
  if (!write) return "no writer";
  for (const [path, data] of files) write(path, typeof data === "string" ? data : data.slice());
  return window.pyAgent.pyodide.runPython(`
import json, os, sys
def _tree(root):
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            st = os.stat(path)
            out[os.path.relpath(path, root)] = [st.st_mode, None if name in dirs else open(path, "rb").read().hex()]
    return out
sys.path.insert(0, "/tmp/writer-memfs")
import pkg.sub.deep.mod as _m
sys.path.pop(0)
json.dumps([_tree("/tmp/writer-fs"), _tree("/tmp/writer-memfs"), _m.X])`);
}"""


def test_the_packages_files_are_written_as_pyodide_writes_them(browser: Any, site: Site) -> None:
    app = open_app(browser, site.base)
    try:
        result = app.page.evaluate(WRITERS)
        assert result != "no writer"
        by_fs, by_memfs, imported = json.loads(result)
        assert by_memfs == by_fs
        assert by_fs["a.py"] == [0o100666, b"A = 2\n".hex()]
        assert by_fs["pkg/sub/deep"][0] == 0o40777
        assert "pkg/old.py" in by_memfs
        assert imported == "deep"
    finally:
        app.page.context.close()
