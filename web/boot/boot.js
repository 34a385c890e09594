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
  acceptAnyWasmType,
  afterRestore,
  afterStart,
  deleteSnapshot,
  enableOffline,
  IMPORT_CODE,
  installPackageFiles,
  keepShippedSnapshot,
  makeSnapshot,
  PYTHON_ENV,
  readAhead,
  readSnapshot,
  restoreOptions,
  snapshotPlan,
  startUnpacking,
  stdlibOptions,
  versionOf,
} from "./fastboot.js";

const SITE = new URL("../", import.meta.url);
const STEPS = ["download", "compile", "install", "import"];
const STEP_LABELS = {
  download: "Downloading the Python runtime",
  compile: "Compiling and starting Python",
  install: "Installing py_agent and its packages",
  import: "Importing py_agent",
  app: "Starting the app", // not a step of the list: after the boot (checkAppScripts)
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
let runtimeCheck = null; // checkRuntimeFiles' promise, once the boot has started it
let shippedRestored = null; // the shipped snapshot, when Python was restored from it (kept once ready)

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

// ---- What the host did wrong: each fault the page can tell apart, named with its file and fix ----

// The JavaScript MIME types a module script may have (HTML's list).
const JS_TYPES = new Set([
  "application/ecmascript",
  "application/javascript",
  "application/x-ecmascript",
  "application/x-javascript",
  "text/ecmascript",
  "text/javascript",
  "text/javascript1.0",
  "text/javascript1.1",
  "text/javascript1.2",
  "text/javascript1.3",
  "text/javascript1.4",
  "text/javascript1.5",
  "text/jscript",
  "text/livescript",
  "text/x-ecmascript",
  "text/x-javascript",
]);
const COMPRESSED_FILES = /\.(bin|gz|zip|whl)$/; // compressed themselves: their bytes start like that

function mediaType(response) {
  return (response.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
}

function extensionOf(file) {
  return file.match(/\.[^./]+$/)?.[0] ?? "";
}

/**
 * What is wrong with the host's answer for one file of the site, judged by its status and headers:
 * {cause, message, hint} or null. `cause`: "missing" (404), "forbidden" (403), "html-fallback" (an
 * HTML page in place of the file), "wrong-type" (a script without a JavaScript type), "http".
 */
function responseFault(file, response) {
  const status = response.status;
  if (status === 404) {
    return {
      cause: "missing",
      message: `${file} is missing: the host answered 404 Not Found`,
      hint:
        "A file of the site was not copied to the host: copy the whole static/ folder again, as it is " +
        "(some upload tools skip files or folders; pyodide/ holds large ones).",
    };
  }
  if (status === 403) {
    return {
      cause: "forbidden",
      message: `${file} is forbidden: the host answered 403 Forbidden`,
      hint:
        "The server may not read that file: make the copied folder readable by it " +
        "(for example `chmod -R a+rX` on it) and check the host's access rules.",
    };
  }
  if (!response.ok) {
    return { cause: "http", message: `${file}: the host answered HTTP ${status}`, hint: incompleteSiteHint() };
  }
  const type = mediaType(response);
  if (type === "text/html" && !file.endsWith(".html")) {
    return {
      cause: "html-fallback",
      message: `${file}: the host sent an HTML page (text/html) in place of the file`,
      hint:
        "A fallback rule answers with index.html when a file is not found (a single-page-app rewrite such as " +
        "nginx `try_files $uri /index.html`, a `_redirects` or 404.html rule): the file is missing or the rule " +
        "catches it. Copy the whole static/ folder, and keep such rules away from its files.",
    };
  }
  if (file.endsWith(".js") && !JS_TYPES.has(type)) {
    return {
      cause: "wrong-type",
      message:
        `${file} was served as ${type || "a response without a type"}; a module script needs a ` +
        "JavaScript type (text/javascript), so the browser refused it",
      hint: typeFix(extensionOf(file), "text/javascript"),
    };
  }
  return null;
}

// The one-line fix on the common servers, for files ending in `ext` that need `type`.
function typeFix(ext, type) {
  return (
    `Make the server send ${ext} files as ${type}: nginx: \`types { ${type} ${ext.slice(1)}; }\` ` +
    `beside \`include mime.types;\`; Apache: \`AddType ${type} ${ext}\`; lighttpd: ` +
    `\`mimetype.assign += ("${ext}" => "${type}")\`; Caddy: \`header *${ext} Content-Type ${type}\`.`
  );
}

// The first bytes of a file as served (a GET read no further than its first chunk).
async function firstBytes(url) {
  const response = await fetch(url, { cache: "no-cache" });
  const reader = response.body.getReader();
  const { value } = await reader.read();
  reader.cancel().catch(() => {});
  return value ?? new Uint8Array();
}

/**
 * What is wrong with one file of the site ({file, size}), judged by a HEAD request (and, for a
 * file of the wrong size, its first bytes): {cause, message, hint} or null. Besides
 * responseFault's causes: "compressed" (gzip bytes without a Content-Encoding), "damaged" (another
 * size than in manifest.json), "network".
 */
async function hostFault({ file, size }) {
  // "?check": not the URL that index.html preloads (a HEAD request would not use the preload,
  // and the browser would warn about it).
  const url = `${siteUrl(file)}?check`;
  let response;
  try {
    response = await fetch(url, { method: "HEAD", cache: "no-cache" });
  } catch (cause) {
    return { cause: "network", message: `${file} could not be fetched (${cause.message})`, hint: networkHint() };
  }
  const fault = responseFault(file, response);
  if (fault) return fault;
  const length = response.headers.get("content-length");
  if (size === undefined || length === null || response.headers.get("content-encoding") || Number(length) === size) {
    return null;
  }
  if (!COMPRESSED_FILES.test(file)) {
    let head = new Uint8Array();
    try {
      head = await firstBytes(url);
    } catch {
      // judged by its size alone
    }
    if (head[0] === 0x1f && head[1] === 0x8b) {
      return {
        cause: "compressed",
        message:
          `${file} was served gzip-compressed without a Content-Encoding header ` +
          `(${length} bytes of gzip, expected ${size} bytes)`,
        hint:
          "The host keeps the file compressed (for example uploaded gzip'd to an S3-like bucket) but does not " +
          "say so: set `Content-Encoding: gzip` on it (S3: the object's metadata), or upload it uncompressed.",
      };
    }
  }
  return {
    cause: "damaged",
    message: `${file} is damaged (${length} bytes, expected ${size})`,
    hint: incompleteSiteHint(),
  };
}

// One BootError for the faults found: every message, each distinct hint once.
function faultError(faults, step) {
  const hints = [...new Set(faults.map((f) => f.hint))];
  const error = new BootError(
    `The host did not serve the site's files as they are: ${faults.map((f) => f.message).join("; ")}.`,
    {
      step,
      hint: hints.join(" "),
    },
  );
  error.faults = faults.map(({ cause, message }) => ({ cause, message }));
  return error;
}

// When the app (app.js) never started, its scripts may not have loaded: a script the host got
// wrong (its type, a 404...) stops the whole module graph without a word. Reported as a boot
// error, naming the file, if a host fault explains it.
async function checkAppScripts(manifest) {
  if (document.documentElement.dataset.app !== "loading") return;
  const scripts = (manifest.files ?? [])
    .filter(({ path }) => path.endsWith(".js") && !path.startsWith(manifest.index_url))
    .map(({ path, size }) => ({ file: path, size }));
  const faults = (await Promise.all(scripts.map(hostFault))).filter(Boolean);
  if (faults.length && document.documentElement.dataset.app === "loading") {
    const error = faultError(faults, "app");
    window.pyAgent.error = error;
    $("boot-ready").hidden = true;
    showError(error);
  }
}

async function checkRuntimeFiles(manifest) {
  // A HEAD request per file, beside the real download, turns a missing, forbidden, mistyped or
  // truncated file into a clear message instead of an opaque failure deep inside the loader.
  const faults = (await Promise.all(manifest.runtime.map(hostFault))).filter(Boolean);
  if (faults.length) throw faultError(faults, "download");
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
  const loader = `${manifest.index_url}pyodide.js`;
  try {
    ({ loadPyodide } = await import(siteUrl(loader)));
  } catch (cause) {
    stopWatching();
    const fault = await hostFault({ file: loader, size: manifest.runtime.find((f) => f.file === loader)?.size });
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
  const broken = results.map((r, i) => [archives[i].source, r.reason]).filter(([, reason]) => reason);
  if (broken.length) {
    // Tell a missing file from one whose bytes do not match their sha256 in the manifest.
    const faults = (await Promise.all(broken.map(([source]) => hostFault(source)))).filter(Boolean);
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
      results.map((r) => r.value),
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
    hint: `The runtime or a package may be damaged. ${incompleteSiteHint()}`,
  });
}

// ---- Outcome ----

function incompleteSiteHint() {
  return "The site's files are incomplete or damaged: rebuild with `python3 build.py` and copy the whole static/ folder again.";
}

function networkHint() {
  return "Check the connection to this site and reload the page.";
}

// What needs a secure context (HTTPS, or localhost) and is left out over plain http from another
// machine: the page still starts and chats without them, and says so.
function featuresNeedingHttps() {
  if (window.isSecureContext) return [];
  const missing = [];
  if (!("serviceWorker" in navigator) || !globalThis.crypto?.subtle) {
    missing.push("offline use and faster later visits (service worker, memory snapshot)");
  }
  if (!navigator.locks) missing.push("one tab at a time editing a session (Web Locks)");
  if (!navigator.clipboard) missing.push("copy buttons (clipboard)");
  return missing;
}

function httpsNotice(missing) {
  return `Served over plain http: ${missing.join("; ")} need HTTPS. Serve the site over https (or open it as localhost) for them.`;
}

// Once the app is there: the notice under its composer too (the boot screen is gone by then).
function showHttpsNotice(missing) {
  const foot = document.querySelector(".composer-foot");
  if (!foot || document.getElementById("https-notice")) return;
  const notice = document.createElement("p");
  notice.id = "https-notice";
  notice.className = "composer-foot";
  notice.setAttribute("role", "note");
  notice.textContent = httpsNotice(missing);
  foot.after(notice);
}

function showReady(versions) {
  $("version-python").textContent = versions.python;
  $("version-py-agent").textContent = versions.py_agent;
  $("version-pyodide").textContent = versions.pyodide;
  $("version-pydantic").textContent = versions.pydantic;
  window.pyAgent.readyAt = performance.now(); // ms since navigation start (bench/boot.py reads it)
  const seconds = (performance.now() - startedAt) / 1000;
  const missing = featuresNeedingHttps();
  window.pyAgent.needsHttps = missing;
  $("boot-time").textContent = `Loaded in ${seconds.toFixed(1)} s.${missing.length ? ` ${httpsNotice(missing)}` : ""}`;
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
// interpreter, importing): the page's first screen, which web/boot/early.js (or else web/app.js) draws
// from IndexedDB meanwhile, goes first. Python's start (Pyodide's loader, which then compiles and
// instantiates the runtime) waits for it, at most FIRST_SCREEN_MS; the runtime's download goes on
// meanwhile. Work moved beside the first screen (compiling earlier, reading the snapshot earlier)
// took the first screen's time on two busy cores: see BENCHMARKS.md, "Time to ready". Once
// web/boot/early.js's drawing is painted, Python's start does not wait for web/app.js to draw the same
// screen again with its own views: that runs while the runtime compiles and the snapshot is read.
const FIRST_SCREEN_MS = 300;
let firstScreenResolve;
const firstScreenPromise = new Promise((resolve) => {
  firstScreenResolve = resolve;
});

/** Called by web/app.js once its first screen is painted (or when it has none to draw). */
export function firstScreenDrawn() {
  firstScreenResolve();
}

// Once web/boot/early.js has drawn the first screen (<html data-early="drawn">) and it is painted.
const earlyScreenPainted = new Promise((resolve) => {
  const root = document.documentElement;
  const drawn = () => {
    if (root.dataset.early !== "drawn") return false;
    requestAnimationFrame(() => setTimeout(resolve, 0)); // a rAF callback runs just before the frame is painted
    return true;
  };
  if (drawn()) return;
  const observer = new MutationObserver(() => drawn() && observer.disconnect());
  observer.observe(root, { attributes: true, attributeFilter: ["data-early"] });
});

// Settles once the first screen is painted (web/boot/early.js's or web/app.js's), at most FIRST_SCREEN_MS from now.
function firstScreenShown() {
  let timer;
  return Promise.race([
    firstScreenPromise,
    earlyScreenPainted,
    new Promise((resolve) => (timer = setTimeout(resolve, FIRST_SCREEN_MS))),
  ]).finally(() => clearTimeout(timer));
}

async function firstScreen() {
  mark("waiting for the first screen");
  await firstScreenShown();
  mark("first screen");
}

// The runtime's JavaScript (pyodide/pyodide.asm.js, 1.2 MB), which Pyodide's loader imports once
// Python's start has waited for the first screen: preloaded from then on (usually as this module
// runs: it runs after the page is parsed, by when the first screen is mostly drawn), not with the
// page's head. Parsed meanwhile, on the renderer's background threads, it held up the delivery of
// the first screen's own files (Chromium traces: 110-320 ms of its parse before the first screen).
// (On a first visit, web/boot/early-start.js preloads it at once: it comes from the network then.)
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
  const check = checkRuntimeFiles(manifest);
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
  // How this boot went (fastboot.js): {snapshot: "restored"|"none"|"pending", then "made"|"failed";
  // from: the snapshot restored, "kept" (made after an earlier visit) or "shipped" (with the site);
  // stored: a promise, settled once the snapshot for the next visit is kept; rejected: why a kept
  // snapshot was not restored (another build, damaged, a mismatch), when it was not}
  boot: {},
  offline: null, // a promise: "ready" once the service worker has cached the whole site
  needsHttps: [], // once ready: the features left out because the page is not in a secure context
};

// A host that serves .wasm without application/wasm (as application/octet-stream) still works.
acceptAnyWasmType();

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
