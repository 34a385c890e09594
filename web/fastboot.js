// What makes the first visit fast, a second visit faster and the site work offline; used by boot.js.
//
// - The packages: site-packages.bin (the wheels installed and byte-compiled at build time, one
//   gzip'd file) is fetched and inflated while the runtime downloads and Python starts
//   (unpack.js); installing is then writing its files into site-packages, and loading
//   pydantic-core's WebAssembly library from the module compiled meanwhile (installPackageFiles).
// - Memory snapshot: once the app is ready (not on the way), a worker (snapshot-worker.js) starts
//   a Pyodide of its own with `_makeSnapshot`, imports the standard library modules that
//   importing py_agent needs, and keeps a snapshot of Python's memory
//   (pyodide.makeMemorySnapshot(), ~30 MB) in Cache Storage, in the cache of this version of the
//   site (see sw.js: it goes when the version goes). Later visits pass it to loadPyodide as
//   `_loadSnapshot`, which skips starting the interpreter. It holds no package: the packages'
//   files and pydantic-core's WebAssembly library live outside that memory, so they are installed
//   at every visit. A snapshot that does not load is deleted, and Python starts normally.
// - The service worker (sw.js), registered once the page is ready: it caches every file of the
//   site, and later visits are served from that cache (offline too).
// - A scheduler for Pyodide's event loop that runs Python's callbacks in slices of at most 8 ms, so
//   a busy Python (a fast stream) never blocks rendering and input (useResponsiveScheduler).

import { startUnpacking } from "./unpack.js";

// Python's environment, at every start and in the snapshot alike. The site ships no pydantic
// plugins: without this, pydantic looks for them among every installed distribution's metadata
// (importlib.metadata, reading the standard library's zip) when it builds its first validator.
export const PYTHON_ENV = { PYDANTIC_DISABLE_PLUGINS: "__all__" };

const SNAPSHOT_PATH = "__sw__/snapshot";
const CACHE_PREFIX = "py-agent-site-"; // the service worker's caches: one per version of the site
// The standard library modules that importing py_agent and the app's start add to what Pyodide
// itself imports at start (measured under Node; the wheels are installed by JavaScript, which
// imports nothing); a name that no longer exists is skipped.
const PREIMPORT = [
  "datetime", "decimal", "email", "fractions", "hmac", "ipaddress", "numbers", "secrets", "sysconfig",
  "urllib.parse", "uuid", "zoneinfo",
];

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** SHA-256 of manifest.json's bytes: the version of the site (as sw.js names it), or null. */
export async function versionOf(bytes) {
  if (!globalThis.crypto?.subtle || !globalThis.caches) return null; // not a secure context
  return hex(await crypto.subtle.digest("SHA-256", bytes));
}

function snapshotKey(siteUrl) {
  return siteUrl(SNAPSHOT_PATH);
}

/** The snapshot kept for this version of the site, or null. */
export async function readSnapshot(version, siteUrl) {
  if (!version || !snapshotsWanted()) return null;
  try {
    const response = await (await caches.open(CACHE_PREFIX + version)).match(snapshotKey(siteUrl));
    return response ? new Uint8Array(await response.arrayBuffer()) : null;
  } catch {
    return null;
  }
}

export async function deleteSnapshot(version, siteUrl) {
  try {
    await (await caches.open(CACHE_PREFIX + version)).delete(snapshotKey(siteUrl));
  } catch {
    // nothing to delete
  }
}

/** loadPyodide options: restore `snapshot` (the snapshot for the next visit is made later). */
export function snapshotOptions(snapshot) {
  return snapshot ? { _loadSnapshot: snapshot } : {};
}

// ?no-snapshot turns snapshots off for this visit (to compare, or to rule them out).
function snapshotsWanted() {
  return !new URLSearchParams(location.search).has("no-snapshot");
}

/**
 * Right after loadPyodide: reseed a restored interpreter; then a scheduler that keeps the page
 * responsive (below).
 */
export function afterStart(pyodide, version, snapshot) {
  try {
    if (snapshot) {
      // Every restore starts from the same memory: give `random` a fresh seed.
      pyodide.runPython("import random as _r; _r.seed(); del _r");
      return { snapshot: "restored" };
    }
    return { snapshot: version && snapshotsWanted() ? "pending" : "none" };
  } finally {
    useResponsiveScheduler(pyodide);
  }
}

/**
 * Once the page is ready (and was not restored from a snapshot): makes the snapshot for the next
 * visit in a worker (snapshot-worker.js), off the page's thread. Resolves to "made" or
 * "failed: <reason>" (a visit without a snapshot starts Python normally, and tries again).
 */
export function makeSnapshot(version, siteUrl, indexURL, lockFileURL) {
  return new Promise((resolve) => {
    let worker;
    try {
      worker = new Worker(siteUrl("snapshot-worker.js"), { type: "module", name: "py-agent snapshot" });
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
      indexURL, lockFileURL, env: PYTHON_ENV, cacheName: CACHE_PREFIX + version, key: snapshotKey(siteUrl),
      preimport: PREIMPORT,
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
 * Writes the unpacked archives (startUnpacking: [{files, dynlibs}]) into site-packages, as
 * Pyodide's loadPackage would install the packages `names`: their files (with an INSTALLER and a
 * PYODIDE_SOURCE file in each .dist-info), their dynamic libraries loaded (from the modules
 * compiled meanwhile), `pyodide.loadedPackages` updated.
 */
export async function installPackageFiles(pyodide, archives, names) {
  const { FS } = pyodide;
  const root = pyodide._api.sitepackages;
  const folders = new Set();
  const write = (path, data) => {
    const target = `${root}/${path}`;
    const folder = target.slice(0, target.lastIndexOf("/"));
    if (!folders.has(folder)) {
      FS.mkdirTree(folder);
      folders.add(folder);
    }
    FS.writeFile(target, data, { canOwn: true });
  };
  for (const { files } of archives) {
    const written = new Set();
    for (const [path, data] of files) {
      write(path, data);
      written.add(path);
    }
    // A wheel (the bundle has them already, written by loadPackage at build time).
    for (const distInfo of new Set(files.map(([path]) => path.split("/")[0]).filter((top) => top.endsWith(".dist-info")))) {
      if (!written.has(`${distInfo}/INSTALLER`)) write(`${distInfo}/INSTALLER`, "pyodide.loadPackage");
      if (!written.has(`${distInfo}/PYODIDE_SOURCE`)) write(`${distInfo}/PYODIDE_SOURCE`, "pyodide");
    }
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
