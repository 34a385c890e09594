// What makes the first visit fast, a second visit faster and the site work offline; used by boot.js.
//
// - The packages: site-packages.bin (the wheels installed and byte-compiled at build time, one
//   gzip'd file) is fetched and inflated while the runtime downloads and Python starts
//   (unpack.js); installing is then writing its files into site-packages, and loading
//   pydantic-core's WebAssembly library from the module compiled meanwhile (installPackageFiles).
// - Memory snapshot (snapshot.js): once the app is ready (not on the way), a worker
//   (snapshot-worker.js) starts a Pyodide of its own with `_makeSnapshot`, installs
//   site-packages.bin, imports py_agent and the app's Python modules, and keeps a snapshot of
//   Python's memory (pyodide.makeMemorySnapshot(), with a record of pydantic-core's WebAssembly
//   library: where it was loaded) in Cache Storage, in the cache of this version of the site (see
//   sw.js: it goes when the version goes). Later visits restore it while the runtime is compiled:
//   no interpreter start, no import; the packages' files (outside that memory) are written into
//   site-packages. A snapshot that does not match (another build, damaged, another function table)
//   is deleted, Python starts normally, and a new snapshot is made.
// - The memory snapshot shipped with the site (manifest.snapshot: made when the site is built, by
//   scripts/snapshot.mjs under Node.js, as the worker makes one): a visit with no kept snapshot (a
//   first visit) restores it the same way, with the same checks, and keeps its bytes once ready
//   (keepShippedSnapshot), so no worker runs; if it does not fit, the steps above.
// - The service worker (sw.js), registered once the page is ready: it caches every file of the
//   site, and later visits are served from that cache (offline too).
// - A scheduler for Pyodide's event loop that runs Python's callbacks in slices of at most 8 ms, so
//   a busy Python (a fast stream) never blocks rendering and input (useResponsiveScheduler).

import { startPyodideInTurn } from "./pyodide-starts.js";
import { startUnpacking } from "./unpack.js";
import { findSnapshot, shippedSnapshot, SNAPSHOT_PATH, snapshotResponse, takeSnapshot } from "./snapshot.js";

export { afterRestore, restoreOptions } from "./snapshot.js";

// Python's environment, at every start and in the snapshot alike. The site ships no pydantic
// plugins: without this, pydantic looks for them among every installed distribution's metadata
// (importlib.metadata, reading the standard library's zip) when it builds its first validator.
export const PYTHON_ENV = { PYDANTIC_DISABLE_PLUGINS: "__all__" };

export const CACHE_PREFIX = "py-agent-site-"; // the service worker's caches: one per version of the site
// What a page (and the snapshot) imports before the app starts: py_agent, pydantic and the app's
// Python side (the standard library modules they need come with their bytecode: stdlibOptions).
export const IMPORT_CODE = () => `
import json, sys
import py_agent, pydantic, py_agent.browser.main
json.dumps({"python": sys.version.split()[0], "py_agent": py_agent.__version__, "pydantic": pydantic.VERSION})
`;

/**
 * loadPyodide's option for the standard library's zip that the page and the snapshot's worker
 * load (manifest.stdlib): built with the site, with bytecode for the modules the page imports
 * (scripts/site_packages.mjs; Pyodide's own python_stdlib.zip has none, so each would be compiled
 * from source at every start). Both must load the same zip: a restored snapshot holds zipimport's
 * index of it.
 */
export function stdlibOptions(manifest, siteUrl) {
  return manifest.stdlib ? { stdLibURL: siteUrl(manifest.stdlib) } : {};
}

// Run once before the snapshot is taken (snapshot-worker.js), so that a restored page has it done:
// what the app's start (py_agent/app/controller.py) would do lazily, without its side effects: the plugin
// modules imported (with the standard library modules they need, from the zip), the model
// catalogue read, the demo model registered; then the validators that py_agent's models and TypeAdapters
// build on first use (defer_build, so that a normal start does not wait for them) built. Whatever
// fails here is left for the page to do (or report) as without a snapshot.
export const WARM_CODE = `
def _py_agent_warm():
    import sys
    from pydantic import BaseModel, TypeAdapter
    from pydantic._internal._mock_val_ser import MockValSer

    try:
        from py_agent.app.plugins import default_plugins
        for build in default_plugins():
            try:
                build()  # imports the plugin's modules
            except Exception:
                pass
    except Exception:
        pass
    try:
        from py_agent.ai import models
        models._load()
    except Exception:
        pass
    try:
        # The app's start registers the demo model again: idempotent, it then only sets its pace
        # (17-48 ms of a warm start's first registration, in the page's timings).
        from py_agent.app.demo import register_demo_model
        register_demo_model()
    except Exception:
        pass

    stack, seen = [BaseModel], set()
    while stack:
        for model in stack.pop().__subclasses__():
            if model in seen:
                continue
            seen.add(model)
            stack.append(model)
            if model.__module__.startswith("py_agent") and isinstance(model.__dict__.get("__pydantic_validator__"), MockValSer):
                try:
                    model.model_rebuild(force=True)
                except Exception:
                    pass
    for name, module in list(sys.modules.items()):
        if name.startswith("py_agent"):
            for value in list(vars(module).values()):
                if isinstance(value, TypeAdapter) and isinstance(value.validator, MockValSer):
                    try:
                        value.rebuild(force=True)
                    except Exception:
                        pass

_py_agent_warm()
del _py_agent_warm
`;

/**
 * WebAssembly's streaming compilation refuses a response that is not typed application/wasm,
 * which some hosts send as application/octet-stream: such a response is compiled from its bytes
 * instead (Pyodide itself has no such fallback). Installed once per global scope (page, worker).
 */
export function acceptAnyWasmType(scope = globalThis) {
  const wasm = scope.WebAssembly;
  if (!wasm?.instantiateStreaming || wasm.instantiateStreaming.acceptsAnyType) return;
  const typed = (response) =>
    !response?.ok ||
    (response.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase() === "application/wasm";
  const { instantiateStreaming, compileStreaming } = wasm;
  wasm.instantiateStreaming = async (source, imports) => {
    const response = await source;
    if (typed(response)) return instantiateStreaming.call(wasm, response, imports);
    return wasm.instantiate(await response.arrayBuffer(), imports);
  };
  wasm.compileStreaming = async (source) => {
    const response = await source;
    if (typed(response)) return compileStreaming.call(wasm, response);
    return wasm.compile(await response.arrayBuffer());
  };
  wasm.instantiateStreaming.acceptsAnyType = true;
}

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** SHA-256 of manifest.json's bytes: the version of the site (as sw.js names it), or null. */
export async function versionOf(bytes) {
  if (!globalThis.crypto?.subtle || !globalThis.caches) return null; // not a secure context
  return hex(await crypto.subtle.digest("SHA-256", bytes));
}

// ?no-snapshot turns snapshots off for this visit (to compare, or to rule them out).
function snapshotsWanted() {
  return !new URLSearchParams(location.search).has("no-snapshot");
}

/**
 * The memory snapshot kept for this version of the site (snapshot.js, findSnapshot): null when
 * there is none (or snapshots are off); {stale: reason} when it was of another build (deleted);
 * else {meta, bytes, read}, its bytes being read. `ahead`: web/boot/read-ahead.js reading it (readAhead),
 * or null.
 */
export async function readSnapshot(version, siteUrl, manifest, ahead = null) {
  if (!snapshotsWanted() || !manifest.site_packages) return null;
  let kept = null;
  if (version) {
    kept = ahead ? await keptAhead(ahead) : undefined;
    if (kept === undefined) {
      try {
        const cache = await caches.open(CACHE_PREFIX + version);
        kept = await findSnapshot(cache, siteUrl(SNAPSHOT_PATH), {
          version,
          bundleSha256: manifest.site_packages.sha256,
        });
      } catch (error) {
        kept = { stale: `the snapshot could not be read (${error?.message ?? error})` };
      }
    }
  }
  if (kept?.meta) return kept;
  // None kept (a first visit, or the kept one was of another build): the one shipped with the site.
  const shipped = shippedSnapshot(manifest, siteUrl);
  if (!shipped?.meta) return kept ?? shipped;
  if (kept?.stale) shipped.keptStale = kept.stale;
  return shipped;
}

// The kept snapshot as web/boot/read-ahead.js found it (findSnapshot's result), or undefined when the
// worker did not read it (the page then reads it itself). Its bytes are copied into a buffer
// given to Pyodide at once, which then does not wait for them before instantiating the runtime.
async function keptAhead(ahead) {
  const record = await ahead.snapshotRecord;
  if (record.error) return undefined;
  if (!record.meta) return record.stale ? { stale: record.stale } : null;
  const bytes = new Uint8Array(record.meta.size);
  const read = ahead.snapshotBytes.then((read) => {
    if (read.error) throw new Error(read.error);
    bytes.set(read.bytes);
    read.bytes = null; // the worker's copy goes now, not with the boot's other objects
  });
  read.catch(() => {}); // reported by whoever restores it
  return { meta: record.meta, bytes, read, source: "kept" };
}

/**
 * On a later visit (one the service worker answers), a worker (read-ahead.js) that reads the
 * kept snapshot and site-packages.bin off the page's thread: {snapshotRecord, snapshotBytes,
 * bundle}, promises of its messages (each settles, with an `error` if that read did not work), for
 * readSnapshot and startUnpacking; null when there is no such worker.
 */
export function readAhead(version, siteUrl, manifest) {
  if (!version || !manifest.site_packages || !navigator.serviceWorker?.controller) return null;
  let worker;
  try {
    worker = new Worker(siteUrl("boot/read-ahead.js"), { type: "module", name: "py-agent read-ahead" });
  } catch {
    return null;
  }
  const wanted = snapshotsWanted();
  const settle = {};
  const kinds = ["snapshot-record", "snapshot-bytes", "bundle"];
  const read = Object.fromEntries(kinds.map((kind) => [kind, new Promise((resolve) => (settle[kind] = resolve))]));
  const done = (data) => {
    if (!settle[data.kind]) return;
    settle[data.kind](data);
    delete settle[data.kind];
    if (data.kind === "snapshot-record" && !data.meta) done({ kind: "snapshot-bytes", error: "no snapshot" });
    if (!Object.keys(settle).length) worker.terminate();
  };
  if (!wanted) done({ kind: "snapshot-record", error: "not wanted" });
  worker.onmessage = ({ data }) => done(data);
  worker.onerror = (event) => {
    event.preventDefault();
    for (const kind of Object.keys(settle)) done({ kind, error: "the read-ahead worker failed" });
  };
  worker.postMessage({ manifest, version, snapshot: wanted });
  return { snapshotRecord: read["snapshot-record"], snapshotBytes: read["snapshot-bytes"], bundle: read.bundle };
}

export async function deleteSnapshot(version, siteUrl) {
  try {
    await (await caches.open(CACHE_PREFIX + version)).delete(siteUrl(SNAPSHOT_PATH));
  } catch {
    // nothing to delete
  }
}

/**
 * Once the page is ready, after a restore from the snapshot shipped with the site: keeps its
 * (inflated, checked) bytes in Cache Storage as a made one is kept, so that later visits read them
 * as they are instead of inflating the shipped file again. Resolves to "made" or "failed: <reason>"
 * (later visits then restore the shipped file again).
 */
export async function keepShippedSnapshot(version, siteUrl, { meta, bytes }) {
  try {
    if (!version) throw new Error("not a secure context");
    const cache = await caches.open(CACHE_PREFIX + version);
    await cache.put(siteUrl(SNAPSHOT_PATH), snapshotResponse({ meta: { ...meta, version }, bytes }));
    return "made";
  } catch (error) {
    return `failed: ${error?.message ?? error}`;
  }
}

/** What boot.snapshot starts as when Python starts normally: "pending" if a snapshot will be made. */
export function snapshotPlan(version, manifest) {
  return version && snapshotsWanted() && manifest.site_packages ? "pending" : "none";
}

/** Right after loadPyodide: the scheduler that keeps the page responsive (below). */
export function afterStart(pyodide) {
  useResponsiveScheduler(pyodide);
}

/**
 * Once the page is ready (and was not restored from a snapshot): makes the snapshot for the next
 * visit in a worker (snapshot-worker.js), off the page's thread. Resolves to "made" or
 * "failed: <reason>" (a visit without a snapshot starts Python normally, and tries again).
 */
export function makeSnapshot(version, siteUrl, manifest) {
  return startPyodideInTurn(() => snapshotInWorker(version, siteUrl, manifest));
}

function snapshotInWorker(version, siteUrl, manifest) {
  return new Promise((resolve) => {
    let worker;
    try {
      worker = new Worker(siteUrl("boot/snapshot-worker.js"), { type: "module", name: "py-agent snapshot" });
    } catch (error) {
      resolve(`failed: ${error.message ?? error}`);
      return;
    }
    const done = (status) => {
      worker.terminate();
      if (status !== "made") console.warn(`py-agent: no memory snapshot for the next visit: ${status}`);
      resolve(status);
    };
    worker.onmessage = ({ data }) => done(data?.ok ? "made" : `failed: ${data?.error}`);
    worker.onerror = (event) => {
      event.preventDefault();
      done(`failed: ${event.message || "the worker did not start"}`);
    };
    worker.postMessage({
      site: siteUrl("./"),
      manifest,
      version,
      cacheName: CACHE_PREFIX + version,
      key: siteUrl(SNAPSHOT_PATH),
    });
  });
}

// Pyodide's event loop runs each asyncio callback from a message on one shared MessageChannel,
// one message per callback, and each message runs every callback queued so far; the Python code
// then runs in promise reactions (microtasks) after it. When Python is busy (a fast stream: many
// callbacks per delta), messages pile up and Chrome delivers them back to back, each with its
// microtasks: no rendering, no timers, no input for hundreds of ms. Replaced by: one message in
// flight; its task runs the queued callbacks one at a time in a chain of microtasks (so what each
// starts in Python has run, and is counted, before the next one) until TASK_BUDGET_MS have passed;
// the rest waits for the next message, a new task: the browser renders and handles input in
// between. The order is kept; delays over 2 ms still use setTimeout, as Pyodide does.
const TASK_BUDGET_MS = 8;

function useResponsiveScheduler(pyodide) {
  const queue = [];
  let posted = false; // a message is on its way
  let draining = false; // a chain of microtasks is running the queue
  let taskStart = 0;
  const channel = new MessageChannel();
  const drain = () => {
    if (!queue.length) {
      draining = false;
      return;
    }
    if (performance.now() - taskStart >= TASK_BUDGET_MS) {
      draining = false;
      posted = true;
      channel.port2.postMessage(0);
      return;
    }
    try {
      queue.shift()(); // queues its promise reactions (the Python code) before the next drain
    } catch (error) {
      reportError(error);
    }
    queueMicrotask(drain);
  };
  channel.port1.onmessage = () => {
    posted = false;
    draining = true;
    taskStart = performance.now();
    drain();
  };
  function scheduleCallback(callback, delay = 0) {
    if (delay > 2) return setTimeout(callback, delay);
    queue.push(callback);
    if (!draining && !posted) {
      posted = true;
      channel.port2.postMessage(0);
    }
  }
  pyodide._api.scheduleCallback = scheduleCallback;
  const webloop = pyodide.pyimport("pyodide.webloop");
  webloop.scheduleCallback = scheduleCallback;
  webloop.destroy();
}

// ---- The packages, unpacked in JavaScript (unpack.js) ----

export { startUnpacking };

/**
 * The memory snapshot of a Pyodide started with `_makeSnapshot` (just now: `tableAtStart` is its
 * function table's length then), once it has installed the unpacked site-packages.bin
 * (`unpacking`: startUnpacking's), imported py_agent and the app's Python modules (IMPORT_CODE) and
 * built the validators a page builds on first use (WARM_CODE): {meta, bytes} (snapshot.js
 * takeSnapshot). Made so by the page's worker (snapshot-worker.js) and by the build
 * (scripts/snapshot.mjs), which must make the same snapshot.
 */
export async function snapshotAfterImport(pyodide, { tableAtStart, unpacking, manifest, version }) {
  // The libraries are loaded from their files by dlopen (no module compiled beforehand: that
  // path instantiates them without a dlopen handle, where the loader records their bases).
  const archives = await Promise.all(
    unpacking.archives.map(async ({ files, dynlibs }) => ({
      files: await files,
      dynlibs: (await dynlibs).map(({ path }) => ({ path, module: null })),
    })),
  );
  await installPackageFiles(
    pyodide,
    archives,
    manifest.wheels.map((w) => w.name),
  );
  pyodide.runPython(IMPORT_CODE());
  pyodide.runPython(WARM_CODE);
  return takeSnapshot(pyodide, { tableAtStart, version, bundleSha256: manifest.site_packages.sha256 });
}

/**
 * Writes the unpacked archives (startUnpacking: [{files, dynlibs}]) into site-packages, as
 * Pyodide's loadPackage would install the packages `names`: their files (with an INSTALLER and a
 * PYODIDE_SOURCE file in each .dist-info), their dynamic libraries loaded (from the modules
 * compiled meanwhile), `pyodide.loadedPackages` updated. After a restore (`restored`), only the
 * files: the rest is in the snapshot.
 */
export async function installPackageFiles(pyodide, archives, names, { restored = false } = {}) {
  const { FS } = pyodide;
  const root = pyodide._api.sitepackages;
  const folders = new Set();
  const write =
    memfsWriter(FS, root) ??
    ((path, data) => {
      const target = `${root}/${path}`;
      const folder = target.slice(0, target.lastIndexOf("/"));
      if (!folders.has(folder)) {
        FS.mkdirTree(folder);
        folders.add(folder);
      }
      FS.writeFile(target, data, { canOwn: true });
    });
  for (const { files } of archives) {
    const written = new Set();
    for (const [path, data] of files) {
      write(path, data);
      written.add(path);
    }
    // A wheel (the bundle has them already, written by loadPackage at build time).
    for (const distInfo of new Set(
      files.map(([path]) => path.split("/")[0]).filter((top) => top.endsWith(".dist-info")),
    )) {
      if (!written.has(`${distInfo}/INSTALLER`)) write(`${distInfo}/INSTALLER`, "pyodide.loadPackage");
      if (!written.has(`${distInfo}/PYODIDE_SOURCE`)) write(`${distInfo}/PYODIDE_SOURCE`, "pyodide");
    }
  }
  // Restored from the snapshot: the libraries are loaded, the packages imported (snapshot.js).
  if (restored) {
    pyodide._api.importlib.invalidate_caches();
    return;
  }
  // Emscripten's preload plugin for .so files: instantiates a (compiled) module and keeps its
  // exports, which dlopen of that path then uses instead of compiling the file again.
  const plugin = pyodide._module.preloadPlugins?.find((p) => p.canHandle?.("x.so"));
  for (const { dynlibs } of archives) {
    for (const { path, module } of dynlibs) {
      const target = `${root}/${path}`;
      const compiled = await module;
      if (plugin && compiled) {
        try {
          await plugin.handle(compiled, target);
        } catch (error) {
          console.warn(`py-agent: ${path}: the compiled module did not load, compiling the file:`, error);
        }
      }
      await pyodide._api.loadDynlib(target);
    }
  }
  for (const name of names) pyodide.loadedPackages[name] = "default channel";
  pyodide._api.importlib.invalidate_caches();
}

// Writes files under `root` as nodes of its in-memory file system (Emscripten's MEMFS), each
// created in its folder's node, instead of FS.writeFile's walk of the whole path per file: that
// walk (normalizing, splitting and looking up every component, then open, chmod, write, close)
// took ~50-80 ms of the page's thread for site-packages' ~450 files at every start (Chromium
// profiles of a warm visit). The same nodes as FS.writeFile(path, bytes, {canOwn: true}) and
// FS.mkdirTree make (modes 0o100666 and 0o40777, the bytes owned, not copied). Null when `root`
// is not a MEMFS folder; a path that exists already is written by FS.writeFile.
export function memfsWriter(FS, root) {
  const MEMFS = FS.filesystems?.MEMFS;
  let top;
  try {
    top = FS.lookupPath(root).node;
  } catch {
    return null;
  }
  if (!MEMFS?.createNode || top.mount?.type !== MEMFS || !FS.isDir(top.mode)) return null;
  const FILE = 0o100666;
  const FOLDER = 0o40777;
  const folders = new Map([["", top]]);
  const encoder = new TextEncoder();
  const folder = (path) => {
    let node = folders.get(path);
    if (node) return node;
    const cut = path.lastIndexOf("/");
    const parent = folder(cut < 0 ? "" : path.slice(0, cut));
    const name = path.slice(cut + 1);
    node = Object.hasOwn(parent.contents, name) ? parent.contents[name] : MEMFS.createNode(parent, name, FOLDER, 0);
    if (!FS.isDir(node.mode)) throw new Error(`${root}/${path} is not a folder`);
    folders.set(path, node);
    return node;
  };
  return (path, data) => {
    const cut = path.lastIndexOf("/");
    const parent = folder(cut < 0 ? "" : path.slice(0, cut));
    const name = path.slice(cut + 1);
    const bytes = typeof data === "string" ? encoder.encode(data) : data;
    if (Object.hasOwn(parent.contents, name)) {
      FS.writeFile(`${root}/${path}`, bytes, { canOwn: true });
      return;
    }
    const node = MEMFS.createNode(parent, name, FILE, 0);
    node.contents = bytes;
    node.usedBytes = bytes.length;
  };
}

/**
 * Registers sw.js for the site's folder and asks it to cache the whole site. Resolves to
 * "ready" (the site works offline), "unsupported" or "failed: <reason>".
 */
export async function enableOffline(siteUrl) {
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return "unsupported";
  try {
    await navigator.serviceWorker.register(siteUrl("sw.js"), { scope: siteUrl("./") });
    const registration = await navigator.serviceWorker.ready;
    const reply = await new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = (event) => resolve(event.data);
      registration.active.postMessage({ type: "cache-site" }, [channel.port2]);
    });
    return reply?.ok ? "ready" : `failed: ${reply?.error}`;
  } catch (error) {
    return `failed: ${error.message ?? error}`;
  }
}
