// What makes a second visit fast and the site work offline; used by boot.js.
//
// - Memory snapshot: the first visit starts Python with `_makeSnapshot`, imports the standard
//   library modules that installing and importing py_agent need, and keeps a snapshot of
//   Python's memory (pyodide.makeMemorySnapshot(), ~30 MB) in Cache Storage, in the cache of this
//   version of the site (see sw.js: it goes when the version goes). Later visits pass it to
//   loadPyodide as `_loadSnapshot`, which skips starting the interpreter. Taken before any
//   package is installed: the packages' files and pydantic-core's WebAssembly library live
//   outside that memory, so they are installed at every visit. A snapshot that does not load
//   is deleted, and Python starts normally.
// - Wheels fetched while Python starts: their bytes (checked against the manifest's sha256 by
//   Subresource Integrity) are handed to pyodide.loadPackage instead of a second request.
// - Precompiled bytecode: build.py byte-compiles the site's packages with the same runtime
//   (scripts/pycache.mjs); the bundle is written into site-packages before `import py_agent`.
// - The service worker (sw.js), registered once the page is ready: it caches every file of the
//   site, and later visits are served from that cache (offline too).
// - A scheduler for Pyodide's event loop that runs Python's callbacks in slices of at most 8 ms, so
//   a busy Python (a fast stream) never blocks rendering and input (useResponsiveScheduler).

const SNAPSHOT_PATH = "__sw__/snapshot";
const CACHE_PREFIX = "py-agent-site-"; // the service worker's caches: one per version of the site
// The standard library modules that installing the wheels and importing py_agent add to what
// Pyodide itself imports at start (measured under Node); a name that no longer exists is skipped.
const PREIMPORT = [
  "email", "importlib.metadata", "tarfile", "datetime", "decimal", "fractions", "hmac", "ipaddress",
  "numbers", "secrets", "sysconfig", "urllib.parse", "uuid", "zoneinfo",
];

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

function base64(hexText) {
  return btoa(String.fromCharCode(...hexText.match(/../g).map((h) => parseInt(h, 16))));
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

/** loadPyodide options: restore `snapshot`, or (with a version to keep it under) make one. */
export function snapshotOptions(version, snapshot) {
  if (snapshot) return { _loadSnapshot: snapshot };
  return version && snapshotsWanted() ? { _makeSnapshot: true } : {};
}

// ?no-snapshot turns snapshots off for this visit (to compare, or to rule them out).
function snapshotsWanted() {
  return !new URLSearchParams(location.search).has("no-snapshot");
}

/**
 * Right after loadPyodide: reseed a restored interpreter, or take and keep the snapshot; then a
 * scheduler that keeps the page responsive (below; after the snapshot, which must not hold it).
 */
export function afterStart(pyodide, version, snapshot, siteUrl) {
  try {
    return startOrSnapshot(pyodide, version, snapshot, siteUrl);
  } finally {
    useResponsiveScheduler(pyodide);
  }
}

function startOrSnapshot(pyodide, version, snapshot, siteUrl) {
  if (snapshot) {
    // Every restore starts from the same memory: give `random` a fresh seed.
    pyodide.runPython("import random as _r; _r.seed(); del _r");
    return { snapshot: "restored" };
  }
  if (!version || !snapshotsWanted()) return { snapshot: "none" };
  let bytes;
  try {
    // Any other error than a missing module (a damaged standard library) fails the boot.
    pyodide.runPython(`
import importlib as _i
for _m in ${JSON.stringify(PREIMPORT)}:
    try:
        _i.import_module(_m)
    except ModuleNotFoundError:
        pass
del _i, _m
`);
  } catch (error) {
    useRealGlobals(pyodide);
    throw error;
  }
  try {
    bytes = pyodide.makeMemorySnapshot();
  } catch (error) {
    console.warn("py-agent: no memory snapshot:", error);
    return { snapshot: "failed" };
  } finally {
    useRealGlobals(pyodide);
  }
  const stored = caches
    .open(CACHE_PREFIX + version)
    .then((cache) =>
      cache.put(snapshotKey(siteUrl), new Response(bytes, { headers: { "content-type": "application/octet-stream" } })),
    )
    .catch((error) => console.warn("py-agent: the memory snapshot could not be kept:", error));
  return { snapshot: "made", stored };
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

// With `_makeSnapshot`, Pyodide gives Python the page's globals wrapped in a Proxy that records
// the path of every object Python takes from them (so that a snapshot can name them). Getters of
// the DOM refuse such a Proxy as `this` (js.sessionStorage: "Illegal invocation"), so once the
// snapshot is taken, `js` is the real globalThis again. What Pyodide's own modules took before
// (setTimeout, fetch, ...) stays wrapped: functions work through the Proxy.
function useRealGlobals(pyodide) {
  pyodide._api.config.jsglobals = globalThis;
  pyodide.registerJsModule("js", globalThis);
  pyodide.runPython("import sys as _s; _s.modules.pop('js', None); del _s");
}

/**
 * Starts fetching files of the manifest now (wheels, the bytecode bundle), with their sha256 as
 * Subresource Integrity. `during(fn)` runs fn with those responses handed to Pyodide's fetch of
 * the same URLs; `take(file)` returns the response for one of them.
 */
export function prefetch(files, siteUrl) {
  const pending = new Map();
  for (const file of files) {
    const url = siteUrl(file.file);
    const response = fetch(url, { integrity: `sha256-${base64(file.sha256)}` });
    response.catch(() => {}); // a failure is reported by whoever asks for the file
    pending.set(url, response);
  }
  const take = (url) => {
    const response = pending.get(url);
    pending.delete(url);
    return response;
  };
  async function during(fn) {
    const original = globalThis.fetch;
    globalThis.fetch = function (input, init) {
      const url = input instanceof Request ? input.url : String(input);
      if (pending.has(url) && (!init?.method || init.method === "GET")) return take(url);
      return original.call(this, input, init);
    };
    try {
      return await fn();
    } finally {
      globalThis.fetch = original;
    }
  }
  return { during, take: (file) => take(siteUrl(file)) ?? fetch(siteUrl(file)) };
}

/**
 * Writes the bundle of precompiled bytecode (scripts/pycache.mjs, built with the site) into
 * site-packages: checked-hash .pyc files, so Python imports without compiling the sources (and
 * still compiles a source whose hash differs). Returns the number of files, or an error text:
 * without it the page works, only slower.
 */
export async function installPycache(pyodide, responsePromise) {
  try {
    const response = await responsePromise;
    if (!response.ok) return `HTTP ${response.status}`;
    let bytes = new Uint8Array(await response.arrayBuffer());
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      bytes = new Uint8Array(await new Response(stream).arrayBuffer());
    }
    const first = bytes.indexOf(10);
    const second = bytes.indexOf(10, first + 1);
    const decoder = new TextDecoder();
    if (decoder.decode(bytes.subarray(0, first)) !== "py-agent-pycache 1") return "unknown format";
    const index = JSON.parse(decoder.decode(bytes.subarray(first + 1, second)));
    const root = pyodide._api.sitepackages;
    const folders = new Set();
    let offset = second + 1;
    for (const [path, size] of index) {
      const target = `${root}/${path}`;
      const folder = target.slice(0, target.lastIndexOf("/"));
      if (!folders.has(folder)) {
        pyodide.FS.mkdirTree(folder);
        folders.add(folder);
      }
      pyodide.FS.writeFile(target, bytes.subarray(offset, offset + size));
      offset += size;
    }
    return index.length;
  } catch (error) {
    return String(error?.message ?? error);
  }
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
