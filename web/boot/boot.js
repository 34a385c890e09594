// @ts-check
// Boots Pyodide from this site's own files, installs py_agent and its dependencies, imports it: the
// steps of the page's start, in order (docs/boot.md follows a visit through them). The other
// modules of web/boot/ do each job: the boot screen (boot-screen.js), what the host did wrong
// (host-faults.js), the runtime (runtime.js), the packages (unpack.js, install.js), the memory
// snapshot and the site's caches (snapshot.js, site-cache.js), the first screen (first-screen.js).
//
// Other modules of the page get the result with
//     import { ready } from "./boot/boot.js";   const { pyodide } = await ready;
// or, from anywhere, `await window.pyAgent.ready`. The page state is on the root element:
// <html data-state="loading|ready|error">; a "py-agent:ready" or "py-agent:error" event is
// dispatched on document when it changes.
//
// Every URL is resolved against this module's folder's parent (the site), so the site works from
// any sub-path. window.pyAgent.timings: each step's milliseconds; window.pyAgent.marks: finer
// points of the boot, in milliseconds since navigation start.

import { BootError, incompleteSiteHint, networkHint, pythonRaised } from "./boot-error.js";
import {
  finishStep,
  formatBytes,
  hasFailed,
  renderProgress,
  setStepStatus,
  showError,
  showHttpsNotice,
  showReady,
  startStep,
  stepProgress,
  timings,
} from "./boot-screen.js";
import { firstScreenShown } from "./first-screen.js";
import { appScriptsFault, checkRuntimeFiles, faultError, hostFault, responseFault } from "./host-faults.js";
import { installPackageFiles } from "./install.js";
import {
  acceptAnyWasmType,
  acceptJsFunctionsInTable,
  afterStart,
  bootPython,
  hideStackSwitching,
  PYTHON_ENV,
  stdlibOptions,
} from "./runtime.js";
import {
  deleteSnapshot,
  enableOffline,
  keepShippedSnapshot,
  makeSnapshot,
  readAhead,
  readSnapshot,
  runtimeFromHttpCache,
  snapshotPlan,
  versionedRuntime,
  versionOf,
} from "./site-cache.js";
import { afterRestore, restoreOptions } from "./snapshot.js";
import { startUnpacking } from "./unpack.js";

export { firstScreenDrawn } from "./first-screen.js";

/** @typedef {import("./messages.js").Manifest} Manifest */
/** @typedef {import("./messages.js").FoundSnapshot} FoundSnapshot */
/** @typedef {import("./runtime.js").Pyodide} Pyodide */
/** @typedef {import("./unpack.js").Unpacking} Unpacking */

const SITE = new URL("../", import.meta.url);
/** @type {Record<string, number>} finer points of the boot: name -> ms since navigation start (window.pyAgent.marks) */
const marks = {};
/**
 * @param {string} name
 * @param {number} [at]
 */
const mark = (name, at = performance.now()) => {
  marks[name] ??= Math.round(at);
};
/** @type {string | null} SHA-256 of manifest.json (site-cache.js, sw.js) */
let siteVersion = null;
/** @type {Promise<void> | null} checkRuntimeFiles' promise, once the boot has started it */
let runtimeCheck = null;
/** @type {FoundSnapshot | null} the shipped snapshot, when Python was restored from it (kept once ready) */
let shippedRestored = null;

/** @param {string} path a file's path in the site */
function siteUrl(path) {
  return new URL(path, SITE).href;
}

// ---- Watching downloads: Resource Timing tells when each same-origin file has arrived ----

/**
 * @param {import("./messages.js").SiteFile[]} files
 * @param {(file: import("./messages.js").SiteFile, entry: PerformanceEntry) => void} onDone
 * @param {Manifest} manifest
 * @returns {() => void} stops watching
 */
function watchDownloads(files, onDone, manifest) {
  const pending = new Map(files.map((f) => [siteUrl(f.file), f]));
  // The runtime's WebAssembly is fetched under its version's URL (site-cache.js, runtimeFromHttpCache).
  const runtime = versionedRuntime(siteUrl, manifest);
  const wasm = runtime && files.find((f) => f.file === runtime.entry.path);
  if (wasm) pending.set(runtime.url, wasm);
  const seen = new Set();
  const observer = new PerformanceObserver((list) => {
    if (hasFailed()) return;
    for (const entry of list.getEntries()) {
      const file = pending.get(entry.name);
      // responseStatus is 0 where the browser does not expose it; only errors are skipped.
      const status = /** @type {PerformanceResourceTiming & {responseStatus?: number}} */ (entry).responseStatus;
      if (!file || seen.has(entry.name) || (status ?? 0) >= 400) continue;
      seen.add(entry.name);
      onDone(file, entry);
    }
  });
  observer.observe({ type: "resource", buffered: true });
  return () => observer.disconnect();
}

// ---- The steps ----

/** @returns {Promise<Manifest>} */
async function loadManifest() {
  const url = siteUrl("manifest.json");
  let response;
  try {
    response = await fetch(url, { cache: "no-cache" });
  } catch (cause) {
    throw new BootError(`Could not fetch manifest.json: ${cause.message}`, { cause, hint: networkHint() });
  }
  const fault = responseFault("manifest.json", response);
  if (fault) throw faultError([fault]);
  try {
    const bytes = new Uint8Array(await response.arrayBuffer());
    const manifest = JSON.parse(new TextDecoder().decode(bytes));
    siteVersion = await versionOf(bytes);
    return manifest;
  } catch (cause) {
    throw new BootError("manifest.json is not valid JSON", { cause, hint: incompleteSiteHint() });
  }
}

// Pyodide 314 logs a failed WebAssembly compilation and then waits forever. While Python
// starts, the two instantiate functions are wrapped so that such a failure ends the boot.
// `onCompiled` is called once the runtime's WebAssembly is compiled and instantiated.
/** @param {() => void} onCompiled */
function catchWasmFailure(onCompiled) {
  const original = {
    instantiate: WebAssembly.instantiate,
    instantiateStreaming: WebAssembly.instantiateStreaming,
  };
  let fail;
  const failure = new Promise((_, reject) => {
    fail = reject;
  });
  for (const [name, fn] of Object.entries(original)) {
    WebAssembly[name] = async function (...args) {
      try {
        if (name === "instantiateStreaming") mark("runtime compiling"); // Pyodide's loader has run
        const result = await fn.apply(this, args);
        if (name === "instantiateStreaming" || args[0]?.byteLength > 1e6) onCompiled();
        return result;
      } catch (cause) {
        fail(
          new BootError(`pyodide.asm.wasm could not be compiled: ${cause.message}`, {
            cause,
            step: "compile", // even when the other runtime files are still arriving (it is preloaded)
            hint: incompleteSiteHint(),
          }),
        );
        throw cause;
      }
    };
  }
  return { failure, restore: () => Object.assign(WebAssembly, original) };
}

// The compiled WebAssembly.Module of the library at `path` (relative to site-packages) in the
// packages being unpacked (unpack.js), for a restore (snapshot.js).
/**
 * @param {Unpacking} unpacking
 * @returns {(path: string) => Promise<WebAssembly.Module | null>}
 */
function libraryModule(unpacking) {
  return async (path) => {
    for (const { dynlibs } of unpacking.archives) {
      const lib = (await dynlibs).find((d) => d.path === path);
      if (lib) return lib.module;
    }
    throw new Error(`${path} is not among the site's packages`);
  };
}

/**
 * @param {Manifest} manifest
 * @param {Promise<any>} snapshotPromise readSnapshot's (a SnapshotLookup, read field by field)
 * @param {Unpacking} unpacking
 * @returns {Promise<{pyodide: Pyodide, restored: boolean}>}
 */
async function startPython(manifest, snapshotPromise, unpacking) {
  const runtimeBytes = manifest.runtime.reduce((sum, f) => sum + f.size, 0);
  let arrived = 0;
  let compileStarted = false;
  const stopWatching = watchDownloads(
    manifest.runtime,
    (file) => {
      arrived += file.size;
      stepProgress.download = arrived / runtimeBytes;
      setStepStatus("download", "active", `${formatBytes(arrived)} of ${formatBytes(runtimeBytes)}`);
      renderProgress();
      if (arrived >= runtimeBytes && !compileStarted) {
        compileStarted = true;
        finishStep("download", formatBytes(runtimeBytes));
        startStep("compile");
      }
    },
    manifest,
  );
  setStepStatus("download", "active", `0 of ${formatBytes(runtimeBytes)}`);

  const indexURL = siteUrl(manifest.index_url);
  let loadPyodide;
  const loader = `${manifest.index_url}pyodide.js`;
  try {
    ({ loadPyodide } = await import(siteUrl(loader)));
  } catch (cause) {
    stopWatching();
    const fault = await hostFault(siteUrl, {
      file: loader,
      size: manifest.runtime.find((f) => f.file === loader)?.size,
    });
    if (fault) throw faultError([fault], "download");
    throw new BootError(`Could not load ${loader}: ${cause.message}`, {
      cause,
      hint: incompleteSiteHint(),
    });
  }
  const stderr = [];
  const wasm = catchWasmFailure(() => {
    mark("runtime compiled");
    unpacking.compile();
  });
  const showStackSwitching = hideStackSwitching();
  const restoreTableSet = acceptJsFunctionsInTable();
  const restoreFetch = runtimeFromHttpCache(siteUrl, manifest);
  let pyodide;
  let restored = false;
  const snapshot = await snapshotPromise; // its record: its bytes are read while the runtime compiles
  await firstScreen();
  snapshot?.read?.then(
    () => mark("snapshot read"),
    () => {},
  );
  if (snapshot?.stale) {
    console.info(`py-agent: ${snapshot.stale}, left out: Python starts normally`);
    window.pyAgent.boot.rejected = snapshot.stale;
  } else if (snapshot?.keptStale) {
    console.info(`py-agent: ${snapshot.keptStale}, left out: the site's shipped snapshot is used`);
    window.pyAgent.boot.rejected = snapshot.keptStale;
  }
  const options = {
    indexURL,
    lockFileURL: siteUrl(manifest.lock_file),
    packageBaseUrl: indexURL,
    ...stdlibOptions(manifest, siteUrl),
    env: { ...PYTHON_ENV },
    stdout: (line) => console.log(line),
    stderr: (line) => {
      stderr.push(line);
      console.warn(line);
    },
  };
  try {
    if (snapshot?.meta) {
      try {
        unpacking.compile(); // pydantic-core's library, needed before the memory is restored
        const restore = await restoreOptions(
          snapshot,
          siteUrl(`${manifest.index_url}pyodide.asm.js`),
          libraryModule(unpacking),
          () => mark("runtime instantiated"),
        );
        pyodide = await Promise.race([loadPyodide({ ...options, ...restore }), wasm.failure]);
        afterRestore(pyodide, snapshot);
        restored = true;
      } catch (cause) {
        if (cause instanceof BootError) throw cause;
        console.warn("py-agent: the memory snapshot did not load; starting Python without it:", cause);
        window.pyAgent.boot.rejected = `${snapshot.source} snapshot: ${cause?.message ?? cause}`;
        if (snapshot.source === "kept") await deleteSnapshot(siteVersion, siteUrl);
        pyodide = null;
      }
    }
    pyodide ??= await Promise.race([loadPyodide(options), wasm.failure]);
  } catch (cause) {
    if (cause instanceof BootError) throw cause;
    throw new BootError(`Python could not start: ${cause.message}`, {
      cause,
      step: "compile", // even when Resource Timing has not reported every runtime file yet
      detail: stderr.join("\n"),
      hint:
        `A runtime file may be damaged (for example a truncated pyodide.asm.wasm or ${manifest.stdlib ?? "python_stdlib.zip"}). ` +
        incompleteSiteHint(),
    });
  } finally {
    wasm.restore();
    showStackSwitching();
    restoreTableSet();
    restoreFetch();
    stopWatching();
    unpacking.compile();
  }
  mark("python started");
  if (!compileStarted) {
    // Files came from a cache that Resource Timing did not report: the download is over anyway.
    finishStep("download", formatBytes(runtimeBytes));
    startStep("compile");
  }
  window.pyAgent.boot.snapshot = restored ? "restored" : snapshotPlan(siteVersion, manifest);
  window.pyAgent.boot.from = restored ? snapshot.source : null;
  if (restored && snapshot.source === "shipped") shippedRestored = snapshot;
  try {
    afterStart(pyodide);
  } catch (cause) {
    throw pythonRaised(cause);
  }
  finishStep("compile", restored ? "from the memory snapshot" : undefined);
  return { pyodide, restored };
}

/**
 * @param {Pyodide} pyodide
 * @param {Manifest} manifest
 * @param {Unpacking} unpacking
 * @param {boolean} restored
 */
async function installPackages(pyodide, manifest, unpacking, restored) {
  startStep("install");
  const wheels = manifest.wheels;
  const { archives } = unpacking;
  let unpacked = 0;
  for (const { files } of archives) {
    files.then(
      () => {
        unpacked += 1;
        stepProgress.install = unpacked / archives.length;
        setStepStatus("install", "active", `${unpacked} of ${archives.length}`);
        renderProgress();
      },
      () => {},
    );
  }
  const results = await Promise.allSettled(
    archives.map(async ({ files, dynlibs }) => ({
      files: await files,
      dynlibs: await dynlibs,
    })),
  );
  mark("unpacked");
  const broken = results
    .map((r, i) => [archives[i].source, r.status === "rejected" ? r.reason : null])
    .filter(([, reason]) => reason);
  if (broken.length) {
    // Tell a missing file from one whose bytes do not match their sha256 in the manifest.
    const faults = (await Promise.all(broken.map(([source]) => hostFault(siteUrl, source)))).filter(Boolean);
    if (faults.length) throw faultError(faults);
    const problems = broken.map(([source, reason]) =>
      reason.status || reason.name !== "TypeError"
        ? `${source.file} could not be unpacked (${reason.message})`
        : `${source.file} does not match its sha256 in manifest.json`,
    );
    throw new BootError(`Could not install the packages: ${problems.join("; ")}`, {
      detail: broken.map(([source, reason]) => `${source.file}: ${reason.message}`).join("\n"),
      hint: incompleteSiteHint(),
    });
  }
  try {
    await installPackageFiles(
      pyodide,
      results.map((r) => /** @type {PromiseFulfilledResult<any>} */ (r).value),
      wheels.map((w) => w.name),
      { restored },
    );
  } catch (cause) {
    throw new BootError(`Could not install the packages: ${cause.message}`, {
      cause,
      detail: cause.stack ?? "",
      hint: incompleteSiteHint(),
    });
  }
  mark("installed");
  if (!manifest.site_packages) {
    console.warn(
      "py-agent: no site-packages.bin (a site built without Node.js): the wheels were unzipped, and imports compile the sources",
    );
  }
  finishStep("install", `${wheels.length} packages`);
}

/**
 * @param {Pyodide} pyodide
 * @param {boolean} restored
 */
async function importPyAgent(pyodide, restored) {
  startStep("import");
  try {
    // After a restore, already imported (in the snapshot).
    const versions = bootPython(pyodide, "import_app");
    finishStep("import", restored ? "from the memory snapshot" : undefined);
    mark("imported");
    return { ...JSON.parse(versions), pyodide: pyodide.version };
  } catch (cause) {
    throw pythonRaised(cause);
  }
}

async function firstScreen() {
  mark("waiting for the first screen");
  await firstScreenShown();
  mark("first screen");
}

// The runtime's JavaScript (pyodide/pyodide.asm.js, 1.2 MB), which Pyodide's loader imports once
// Python's start has waited for the first screen: preloaded by web/boot/early.js as soon as it has
// drawn the first screen, and here once a first screen is painted (when early.js did not draw
// it), not with the page's head. Parsed meanwhile, on the renderer's background threads, it held up
// the delivery of the first screen's own files (Chromium traces: 110-320 ms of its parse before the
// first screen). (On a first visit, web/boot/early-start.js preloads it at once: it comes from the
// network then.)
firstScreenShown().then(() => {
  const link = document.createElement("link");
  link.rel = "modulepreload";
  link.href = siteUrl("pyodide/pyodide.asm.js"); // as index.html preloads pyodide/pyodide.js
  document.head.append(link);
});

async function boot() {
  mark("boot");
  startStep("download");
  const manifest = await loadManifest();
  mark("manifest");
  // A later visit reads the kept snapshot and the packages in a worker (read-ahead.js).
  const ahead = readAhead(siteVersion, siteUrl, manifest);
  const snapshot = readSnapshot(siteVersion, siteUrl, manifest, ahead);
  // The packages are fetched and unpacked while Python starts (unpack.js).
  const unpacking = startUnpacking(manifest, siteUrl, mark, ahead?.bundle);
  // The check runs beside the download; whichever fails first is reported, but a failure to
  // start waits for the check: a missing or damaged file explains it better.
  const check = checkRuntimeFiles(siteUrl, manifest);
  runtimeCheck = check;
  const python = startPython(manifest, snapshot, unpacking).catch(async (error) => {
    await check;
    throw error;
  });
  const [, { pyodide, restored }] = await Promise.all([check, python]);
  await installPackages(pyodide, manifest, unpacking, restored);
  const versions = await importPyAgent(pyodide, restored);
  return { pyodide, manifest, versions };
}

window.pyAgent = {
  state: "loading",
  pyodide: null,
  manifest: null,
  versions: null,
  error: null,
  readyAt: null,
  timings,
  marks,
  // How this boot went (site-cache.js, snapshot.js): {snapshot: "restored"|"none"|"pending", then "made"|"failed";
  // from: the snapshot restored, "kept" (made after an earlier visit) or "shipped" (with the site);
  // stored: a promise, settled once the snapshot for the next visit is kept; rejected: why a kept
  // snapshot was not restored (another build, damaged, a mismatch), when it was not}
  boot: {},
  offline: null, // a promise: "ready" once the service worker has cached the whole site
  needsHttps: [], // once ready: the features left out because the page is not in a secure context
};

// A host that serves .wasm without application/wasm (as application/octet-stream) still works.
acceptAnyWasmType();

/** @param {any} event an ErrorEvent or a PromiseRejectionEvent */
function onUnexpected(event) {
  if (document.documentElement.dataset.state !== "loading") return;
  const error = event.reason ?? event.error ?? new Error(event.message ?? "unknown error");
  // Pyodide's loader lets a failed download go unhandled ("request failed"): the runtime files'
  // check, when it finds what the host did wrong, explains it better, so it is waited for (and
  // its error, which ends the boot, shown first).
  Promise.resolve(runtimeCheck)
    .catch(() => {})
    .then(() => new Promise((resolve) => setTimeout(resolve, 0)))
    .then(() => {
      if (document.documentElement.dataset.state === "loading") {
        showError(error instanceof Error ? error : new Error(String(error)));
      }
    });
}
window.addEventListener("error", onUnexpected);
window.addEventListener("unhandledrejection", onUnexpected);

// When the app (app.js) never started, its scripts may not have loaded: reported as a boot error,
// naming the file, if a host fault explains it (host-faults.js).
/** @param {Manifest} manifest */
async function checkAppScripts(manifest) {
  if (document.documentElement.dataset.app !== "loading") return;
  const error = await appScriptsFault(siteUrl, manifest);
  if (error && document.documentElement.dataset.app === "loading") {
    window.pyAgent.error = error;
    /** @type {HTMLElement} */ (document.getElementById("boot-ready")).hidden = true;
    showError(error);
  }
}

// Once the app (web/app.js) is ready or has failed, or after 10 s without it: what the page does
// for the next visit waits until then, so that it does not slow the first screen.
function appSettled() {
  const root = document.documentElement;
  const settled = () => root.dataset.app && root.dataset.app !== "loading";
  return new Promise((resolve) => {
    if (settled()) return resolve();
    const timer = setTimeout(done, 10_000);
    const observer = new MutationObserver(() => settled() && done());
    observer.observe(root, { attributes: true, attributeFilter: ["data-app"] });
    function done() {
      clearTimeout(timer);
      observer.disconnect();
      resolve();
    }
  }).then(() => new Promise((resolve) => setTimeout(resolve, 0)));
}

export const ready = boot().then(
  (result) => {
    Object.assign(window.pyAgent, result);
    showReady(result.versions);
    document.dispatchEvent(new CustomEvent("py-agent:ready", { detail: result }));
    const settled = appSettled();
    if (window.pyAgent.needsHttps.length) settled.then(() => showHttpsNotice(window.pyAgent.needsHttps));
    settled.then(() => checkAppScripts(result.manifest));
    // <html data-offline="ready|unsupported|failed..."> once the service worker has the whole site.
    window.pyAgent.offline = settled
      .then(() => enableOffline(siteUrl))
      .then((status) => {
        document.documentElement.dataset.offline = status.split(":")[0];
        if (status.startsWith("failed")) console.warn(`py-agent: offline use: ${status}`);
        return status;
      });
    // The memory snapshot for the next visit (boot.snapshot: "pending", then "made" or "failed"),
    // or the shipped one this visit restored, kept as it is (its bytes are let go once kept).
    if (shippedRestored) {
      window.pyAgent.boot.stored = settled
        .then(() => keepShippedSnapshot(siteVersion, siteUrl, shippedRestored))
        .then((status) => {
          shippedRestored = null;
          if (status !== "made")
            console.warn(`py-agent: the shipped snapshot was not kept for the next visit: ${status}`);
          return status;
        });
    } else if (window.pyAgent.boot.snapshot === "pending") {
      const { manifest } = result;
      window.pyAgent.boot.stored = settled
        .then(() => makeSnapshot(siteVersion, siteUrl, manifest))
        .then((status) => {
          window.pyAgent.boot.snapshot = status.split(":")[0];
          return status;
        });
    }
    return result;
  },
  (error) => {
    window.pyAgent.error = error;
    showError(error);
    document.dispatchEvent(new CustomEvent("py-agent:error", { detail: error }));
    throw error;
  },
);
window.pyAgent.ready = ready;
// A failed boot is shown on the page; keep the rejection from also counting as unhandled.
ready.catch(() => {});
