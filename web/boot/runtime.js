// @ts-check
// Python's runtime and its environment, at every start, in the page, in the snapshot's worker and
// under Node.js (scripts/snapshot.mjs) alike: Python's environment variables, the standard
// library's zip, WebAssembly that a host serves without its type, the scheduler that keeps the
// page responsive while Python runs, and the calls into the Python of the boot
// (py_agent/browser/boot.py).

/** @typedef {import("./messages.js").Manifest} Manifest */
/** @typedef {any} Pyodide Pyodide's API (pyodide.js loadPyodide's result), with the internals used here */

// Python's environment, at every start and in the snapshot alike. The site ships no pydantic
// plugins: without this, pydantic looks for them among every installed distribution's metadata
// (importlib.metadata, reading the standard library's zip) when it builds its first validator.
export const PYTHON_ENV = { PYDANTIC_DISABLE_PLUGINS: "__all__" };

/**
 * loadPyodide's option for the standard library's zip that the page and the snapshot's worker
 * load (manifest.stdlib): built with the site, with bytecode for the modules the page imports
 * (scripts/site_packages.mjs; Pyodide's own python_stdlib.zip has none, so each would be compiled
 * from source at every start). Both must load the same zip: a restored snapshot holds zipimport's
 * index of it.
 */
/**
 * @param {Manifest} manifest
 * @param {(path: string) => string} siteUrl
 * @returns {{stdLibURL?: string}}
 */
export function stdlibOptions(manifest, siteUrl) {
  return manifest.stdlib ? { stdLibURL: siteUrl(manifest.stdlib) } : {};
}

/**
 * Calls the function `name` of py_agent/browser/boot.py (the Python of the boot) with `args`;
 * returns what it returns (a string, or undefined). The module's proxy is let go at once: a memory
 * snapshot must not hold one.
 * @param {Pyodide} pyodide
 * @param {"import_app" | "warm" | "freeze" | "after_restore"} name
 * @param {...string} args
 */
export function bootPython(pyodide, name, ...args) {
  const boot = pyodide.pyimport("py_agent.browser.boot");
  const call = boot[name];
  try {
    return call(...args);
  } finally {
    call.destroy();
    boot.destroy();
  }
}

/**
 * WebAssembly's streaming compilation refuses a response that is not typed application/wasm,
 * which some hosts send as application/octet-stream: such a response is compiled from its bytes
 * instead (Pyodide itself has no such fallback). Installed once per global scope (page, worker).
 * @param {any} [scope]
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

/**
 * Hides WebAssembly's stack switching (JSPI) from the Pyodide about to load in `scope`, which then
 * runs Python on the thread's own stack; returns what puts it back (Pyodide decides once, as it
 * loads). Chromium's heap profiler, which Chromium turns on for some sessions at random, walks a
 * stack by its frame pointers and reads past the end of a JSPI stack: the renderer dies with the
 * page (docs/web-architecture.md, "A crash that is Chromium's"). The app's Python and the
 * snapshot's never block on a promise, so they need no stack switching; the python tool's
 * interpreter (web/sandbox/py-worker.js, another process) keeps it for `asyncio.run`.
 * @param {any} [scope]
 * @returns {() => void}
 */
export function hideStackSwitching(scope = globalThis) {
  const wasm = scope.WebAssembly;
  /** @type {[string, PropertyDescriptor][]} */
  const hidden = [];
  for (const name of ["Suspending", "promising", "Suspender"]) {
    const descriptor = Object.getOwnPropertyDescriptor(wasm, name);
    if (!descriptor) continue;
    hidden.push([name, descriptor]);
    delete wasm[name];
  }
  return () => {
    for (const [name, descriptor] of hidden) Object.defineProperty(wasm, name, descriptor);
  };
}

/**
 * Right after loadPyodide: the scheduler that keeps the page responsive (below).
 * @param {Pyodide} pyodide
 */
export function afterStart(pyodide) {
  useResponsiveScheduler(pyodide);
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
