// Boots Pyodide from this site's own files, installs py_agent and its dependencies, imports it.
//
// All boot logic lives here. Other modules of the page get the result with
//     import { ready } from "./boot.js";   const { pyodide } = await ready;
// or, from anywhere, `await window.pyAgent.ready`. The page state is on the root element:
// <html data-state="loading|ready|error">; a "py-agent:ready" or "py-agent:error" event is
// dispatched on document when it changes.
//
// Every URL is resolved against this module's own URL, so the site works from any sub-path.
// The packages are installed from site-packages.bin (built by build.py: the wheels installed and
// byte-compiled), fetched with its sha256 from manifest.json as Subresource Integrity, so the
// browser rejects a file whose hash differs; it is fetched and unpacked while Python starts
// (unpack.js). Faster first and later visits and offline use (the memory snapshot, made in a
// worker once the app is ready; the service worker): see fastboot.js.
// window.pyAgent.timings: each step's milliseconds; window.pyAgent.marks: finer points of the
// boot, in milliseconds since navigation start.

import {
  afterRestore, afterStart, deleteSnapshot, enableOffline, IMPORT_CODE, installPackageFiles, makeSnapshot,
  PYTHON_ENV, readSnapshot, restoreOptions, snapshotPlan, startUnpacking, stdlibOptions, versionOf,
} from "./fastboot.js";

const SITE = new URL("./", import.meta.url);
const STEPS = ["download", "compile", "install", "import"];
const STEP_LABELS = {
  download: "Downloading the Python runtime",
  compile: "Compiling and starting Python",
  install: "Installing py_agent and its packages",
  import: "Importing py_agent",
};
// Share of the progress bar that each step fills.
const STEP_WEIGHTS = { download: 45, compile: 30, install: 15, import: 10 };

class BootError extends Error {
  constructor(message, { step, hint = "", detail = "", cause } = {}) {
    super(message, { cause });
    this.name = "BootError";
    this.step = step; // the step that failed, when it is not the current one
    this.hint = hint;
    this.detail = detail;
  }
}

const $ = (id) => document.getElementById(id);
const startedAt = performance.now();
let currentStep = null;
let failed = false;
const stepProgress = Object.fromEntries(STEPS.map((s) => [s, 0]));
const stepStarted = {};
const timings = {}; // step -> milliseconds, exposed as window.pyAgent.timings
const marks = {}; // finer points of the boot: name -> ms since navigation start (window.pyAgent.marks)
const mark = (name, at = performance.now()) => {
  marks[name] ??= Math.round(at);
};
let siteVersion = null; // SHA-256 of manifest.json (fastboot.js, sw.js)

function siteUrl(path) {
  return new URL(path, SITE).href;
}

function formatBytes(n) {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1e3))} kB`;
}

function stepItem(step) {
  return document.querySelector(`#boot-steps li[data-step="${step}"]`);
}

function setStepStatus(step, status, detail) {
  const item = stepItem(step);
  if (!item) return;
  item.dataset.status = status;
  const words = { pending: "waiting", active: "in progress", done: "done", failed: "failed" };
  item.querySelector(".status").textContent = words[status];
  if (status === "active") item.setAttribute("aria-current", "step");
  else item.removeAttribute("aria-current");
  if (detail !== undefined) item.querySelector(".detail").textContent = detail;
}

function renderProgress() {
  const total = STEPS.reduce((sum, s) => sum + STEP_WEIGHTS[s] * Math.min(1, stepProgress[s]), 0);
  $("boot-progress").value = Math.round(total);
}

function startStep(step) {
  if (failed) return;
  if (currentStep) finishStep(currentStep);
  currentStep = step;
  stepStarted[step] = performance.now();
  setStepStatus(step, "active");
  $("boot-status").textContent = `${STEP_LABELS[step]}…`;
  renderProgress();
}

function finishStep(step, detail) {
  if (failed || step in timings) return;
  stepProgress[step] = 1;
  timings[step] = Math.round(performance.now() - (stepStarted[step] ?? startedAt));
  setStepStatus(step, "done", detail);
  renderProgress();
}

function setState(state) {
  document.documentElement.dataset.state = state;
  window.pyAgent.state = state;
  $("boot")?.setAttribute("aria-busy", String(state === "loading"));
}

// ---- Watching downloads: Resource Timing tells when each same-origin file has arrived ----

function watchDownloads(files, onDone) {
  const pending = new Map(files.map((f) => [siteUrl(f.file), f]));
  const seen = new Set();
  const observer = new PerformanceObserver((list) => {
    if (failed) return;
    for (const entry of list.getEntries()) {
      const file = pending.get(entry.name);
      // responseStatus is 0 where the browser does not expose it; only errors are skipped.
      if (!file || seen.has(entry.name) || entry.responseStatus >= 400) continue;
      seen.add(entry.name);
      onDone(file, entry);
    }
  });
  observer.observe({ type: "resource", buffered: true });
  return () => observer.disconnect();
}

// ---- The steps ----

async function loadManifest() {
  const url = siteUrl("manifest.json");
  let response;
  try {
    response = await fetch(url, { cache: "no-cache" });
  } catch (cause) {
    throw new BootError(`Could not fetch manifest.json: ${cause.message}`, { cause, hint: networkHint() });
  }
  if (!response.ok) {
    throw new BootError(`manifest.json: HTTP ${response.status}`, { hint: incompleteSiteHint() });
  }
  try {
    const bytes = new Uint8Array(await response.arrayBuffer());
    const manifest = JSON.parse(new TextDecoder().decode(bytes));
    siteVersion = await versionOf(bytes);
    return manifest;
  } catch (cause) {
    throw new BootError("manifest.json is not valid JSON", { cause, hint: incompleteSiteHint() });
  }
}

async function headProblem({ file, size }) {
  // Returns what is wrong with one file of the site, judged by a HEAD request, or null.
  let r;
  try {
    // "?check": not the URL that index.html preloads (a HEAD request would not use the preload,
    // and the browser would warn about it).
    r = await fetch(`${siteUrl(file)}?check`, { method: "HEAD", cache: "no-cache" });
  } catch (cause) {
    return `${file} (${cause.message})`;
  }
  if (!r.ok) return `${file} is missing (HTTP ${r.status})`;
  const length = r.headers.get("content-length");
  if (size !== undefined && length !== null && !r.headers.get("content-encoding") && Number(length) !== size) {
    return `${file} is damaged (${length} bytes, expected ${size})`;
  }
  return null;
}

async function checkRuntimeFiles(manifest) {
  // A HEAD request per file, beside the real download, turns a missing or truncated file into
  // a clear message instead of an opaque failure deep inside the WebAssembly loader.
  const problems = (await Promise.all(manifest.runtime.map(headProblem))).filter(Boolean);
  if (problems.length) {
    throw new BootError(`Broken runtime: ${problems.join("; ")}`, { step: "download", hint: incompleteSiteHint() });
  }
}

// Pyodide 314 logs a failed WebAssembly compilation and then waits forever. While Python
// starts, the two instantiate functions are wrapped so that such a failure ends the boot.
// `onCompiled` is called once the runtime's WebAssembly is compiled and instantiated.
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
        const result = await fn.apply(this, args);
        if (name === "instantiateStreaming" || args[0]?.byteLength > 1e6) onCompiled();
        return result;
      } catch (cause) {
        fail(new BootError(`pyodide.asm.wasm could not be compiled: ${cause.message}`, {
          cause,
          step: "compile", // even when the other runtime files are still arriving (it is preloaded)
          hint: incompleteSiteHint(),
        }));
        throw cause;
      }
    };
  }
  return { failure, restore: () => Object.assign(WebAssembly, original) };
}

// The compiled WebAssembly.Module of the library at `path` (relative to site-packages) in the
// packages being unpacked (unpack.js), for a restore (snapshot.js).
function libraryModule(unpacking) {
  return async (path) => {
    for (const { dynlibs } of unpacking.archives) {
      const lib = (await dynlibs).find((d) => d.path === path);
      if (lib) return lib.module;
    }
    throw new Error(`${path} is not among the site's packages`);
  };
}

async function startPython(manifest, snapshotPromise, unpacking) {
  const runtimeBytes = manifest.runtime.reduce((sum, f) => sum + f.size, 0);
  let arrived = 0;
  let compileStarted = false;
  const stopWatching = watchDownloads(manifest.runtime, (file) => {
    arrived += file.size;
    stepProgress.download = arrived / runtimeBytes;
    setStepStatus("download", "active", `${formatBytes(arrived)} of ${formatBytes(runtimeBytes)}`);
    renderProgress();
    if (arrived >= runtimeBytes && !compileStarted) {
      compileStarted = true;
      finishStep("download", formatBytes(runtimeBytes));
      startStep("compile");
    }
  });
  setStepStatus("download", "active", `0 of ${formatBytes(runtimeBytes)}`);

  const indexURL = siteUrl(manifest.index_url);
  let loadPyodide;
  try {
    ({ loadPyodide } = await import(siteUrl(`${manifest.index_url}pyodide.mjs`)));
  } catch (cause) {
    stopWatching();
    throw new BootError(`Could not load ${manifest.index_url}pyodide.mjs: ${cause.message}`, {
      cause,
      hint: incompleteSiteHint(),
    });
  }
  const stderr = [];
  const wasm = catchWasmFailure(() => {
    mark("runtime compiled");
    unpacking.compile();
  });
  let pyodide;
  let restored = false;
  const snapshot = await snapshotPromise; // its record: its bytes are read while the runtime compiles
  await firstScreen();
  snapshot?.read?.then(() => mark("snapshot read"), () => {});
  if (snapshot?.stale) {
    console.info(`py-agent: ${snapshot.stale}, left out: Python starts normally`);
    window.pyAgent.boot.rejected = snapshot.stale;
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
          snapshot, siteUrl(`${manifest.index_url}pyodide.asm.mjs`), libraryModule(unpacking), () => mark("runtime instantiated"),
        );
        pyodide = await Promise.race([loadPyodide({ ...options, ...restore }), wasm.failure]);
        afterRestore(pyodide, snapshot);
        restored = true;
      } catch (cause) {
        if (cause instanceof BootError) throw cause;
        console.warn("py-agent: the memory snapshot did not load; starting Python without it:", cause);
        window.pyAgent.boot.rejected = String(cause?.message ?? cause);
        await deleteSnapshot(siteVersion, siteUrl);
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
      hint: `A runtime file may be damaged (for example a truncated pyodide.asm.wasm or ${manifest.stdlib ?? "python_stdlib.zip"}). ` +
        incompleteSiteHint(),
    });
  } finally {
    wasm.restore();
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
  try {
    afterStart(pyodide);
  } catch (cause) {
    throw pythonRaised(cause);
  }
  finishStep("compile", restored ? "from the memory snapshot" : undefined);
  return { pyodide, restored };
}

async function installPackages(pyodide, manifest, unpacking, restored) {
  startStep("install");
  const wheels = manifest.wheels;
  const { archives } = unpacking;
  let unpacked = 0;
  for (const { files } of archives) {
    files.then(() => {
      unpacked += 1;
      stepProgress.install = unpacked / archives.length;
      setStepStatus("install", "active", `${unpacked} of ${archives.length}`);
      renderProgress();
    }, () => {});
  }
  const results = await Promise.allSettled(archives.map(async ({ files, dynlibs }) => ({
    files: await files, dynlibs: await dynlibs,
  })));
  mark("unpacked");
  const broken = results.map((r, i) => [archives[i].source, r.reason]).filter(([, reason]) => reason);
  if (broken.length) {
    // Tell a missing file from one whose bytes do not match their sha256 in the manifest.
    const problems = await Promise.all(
      broken.map(async ([source, reason]) => (await headProblem(source)) ??
        (reason.status || reason.name !== "TypeError"
          ? `${source.file} could not be unpacked (${reason.message})`
          : `${source.file} does not match its sha256 in manifest.json`)),
    );
    throw new BootError(`Could not install the packages: ${problems.join("; ")}`, {
      detail: broken.map(([source, reason]) => `${source.file}: ${reason.message}`).join("\n"),
      hint: incompleteSiteHint(),
    });
  }
  try {
    await installPackageFiles(pyodide, results.map((r) => r.value), wheels.map((w) => w.name), { restored });
  } catch (cause) {
    throw new BootError(`Could not install the packages: ${cause.message}`, {
      cause, detail: cause.stack ?? "", hint: incompleteSiteHint(),
    });
  }
  mark("installed");
  if (!manifest.site_packages) {
    console.warn("py-agent: no site-packages.bin (a site built without Node.js): the wheels were unzipped, and imports compile the sources");
  }
  finishStep("install", `${wheels.length} packages`);
}

async function importPyAgent(pyodide, restored) {
  startStep("import");
  try {
    // After a restore, already imported (in the snapshot).
    const versions = pyodide.runPython(IMPORT_CODE());
    finishStep("import", restored ? "from the memory snapshot" : undefined);
    mark("imported");
    return { ...JSON.parse(versions), pyodide: pyodide.version };
  } catch (cause) {
    throw pythonRaised(cause);
  }
}

function pythonRaised(cause) {
  const lines = String(cause.message).trim().split("\n");
  const last = lines.reverse().find((line) => line && !line.startsWith(" ")) ?? "";
  return new BootError(`Python raised ${last}`, {
    cause,
    detail: cause.message,
    hint: "The runtime or a package may be damaged. " + incompleteSiteHint(),
  });
}

// ---- Outcome ----

function incompleteSiteHint() {
  return "The site's files are incomplete or damaged: rebuild with `python3 build.py` and copy the whole static/ folder again.";
}

function networkHint() {
  return "Check the connection to this site and reload the page.";
}

function showReady(versions) {
  $("version-python").textContent = versions.python;
  $("version-py-agent").textContent = versions.py_agent;
  $("version-pyodide").textContent = versions.pyodide;
  $("version-pydantic").textContent = versions.pydantic;
  window.pyAgent.readyAt = performance.now(); // ms since navigation start (bench/boot.py reads it)
  const seconds = (performance.now() - startedAt) / 1000;
  $("boot-time").textContent = `Loaded in ${seconds.toFixed(1)} s.`;
  $("boot-ready").hidden = false;
  $("boot-status").textContent = `Ready: py_agent ${versions.py_agent} on Python ${versions.python}.`;
  setState("ready");
}

function showError(error) {
  if (failed) return;
  failed = true;
  const step = error.step ?? currentStep ?? "download";
  for (const s of STEPS) {
    if (stepItem(s)?.dataset.status === "active") setStepStatus(s, "pending");
  }
  setStepStatus(step, "failed", "");
  $("boot-error-summary").textContent = `${STEP_LABELS[step]} failed. ${error.message ?? error}`;
  const detail = error.detail || error.cause?.stack || (error instanceof BootError ? "" : error.stack);
  $("boot-error-detail").textContent = detail;
  $("boot-error-detail").hidden = !detail;
  $("boot-error-hint").textContent = error.hint ?? "";
  $("boot-error").hidden = false;
  $("boot-status").textContent = "Loading stopped: see the error below.";
  setState("error");
  console.error(error);
}

// Python's start holds the page's thread for a while (instantiating the runtime, starting the
// interpreter, importing): the page's first screen, which web/app.js draws from IndexedDB
// meanwhile, goes first. Python waits for it once its runtime is compiled (the download and
// compilation go on meanwhile), at most FIRST_SCREEN_MS more.
const FIRST_SCREEN_MS = 300;
let firstScreenResolve;
const firstScreenPromise = new Promise((resolve) => {
  firstScreenResolve = resolve;
});

/** Called by web/app.js once its first screen is painted (or when it has none to draw). */
export function firstScreenDrawn() {
  firstScreenResolve();
}

async function firstScreen() {
  let timer;
  await Promise.race([firstScreenPromise, new Promise((resolve) => (timer = setTimeout(resolve, FIRST_SCREEN_MS)))]);
  clearTimeout(timer);
  mark("first screen");
}

async function boot() {
  mark("boot");
  startStep("download");
  const manifest = await loadManifest();
  mark("manifest");
  const snapshot = readSnapshot(siteVersion, siteUrl, manifest);
  // The packages are fetched and unpacked while Python starts (unpack.js).
  const unpacking = startUnpacking(manifest, siteUrl, mark);
  // The check runs beside the download; whichever fails first is reported, but a failure to
  // start waits for the check: a missing or damaged file explains it better.
  const check = checkRuntimeFiles(manifest);
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
  state: "loading", pyodide: null, manifest: null, versions: null, error: null, readyAt: null, timings, marks,
  // How this boot went (fastboot.js): {snapshot: "restored"|"none"|"pending", then "made"|"failed";
  // stored: a promise, settled once the snapshot for the next visit is kept; rejected: why a kept
  // snapshot was not restored (another build, damaged, a mismatch), when it was not}
  boot: {},
  offline: null, // a promise: "ready" once the service worker has cached the whole site
};

function onUnexpected(event) {
  if (document.documentElement.dataset.state !== "loading") return;
  const error = event.reason ?? event.error ?? new Error(event.message ?? "unknown error");
  showError(error instanceof Error ? error : new Error(String(error)));
}
window.addEventListener("error", onUnexpected);
window.addEventListener("unhandledrejection", onUnexpected);

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
    // <html data-offline="ready|unsupported|failed..."> once the service worker has the whole site.
    window.pyAgent.offline = settled
      .then(() => enableOffline(siteUrl))
      .then((status) => {
        document.documentElement.dataset.offline = status.split(":")[0];
        if (status.startsWith("failed")) console.warn(`py-agent: offline use: ${status}`);
        return status;
      });
    // The memory snapshot for the next visit (boot.snapshot: "pending", then "made" or "failed").
    if (window.pyAgent.boot.snapshot === "pending") {
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
