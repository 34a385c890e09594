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
 * Makes the function table's `set()` take the JavaScript functions that Pyodide's dynamic linker
 * puts into it, until the returned function is called. Emscripten's addFunction (pyodide.asm.js)
 * puts each JavaScript function that WebAssembly code may call through a pointer (~260 at every
 * start, restored or not) into the table by trying `set()` and, on its TypeError, wrapping the
 * function in a one-function WebAssembly module: ~260 exceptions thrown and caught in the
 * runtime's start, each with its stack trace and message. Here `set()` wraps such a function (one
 * that carries Emscripten's `sig`, its signature) as that catch would, and does not throw: the
 * table ends the same.
 * @param {any} [scope]
 * @returns {() => void}
 */
export function acceptJsFunctionsInTable(scope = globalThis) {
  const prototype = scope.WebAssembly.Table.prototype;
  const set = prototype.set;
  prototype.set = function (index, value, ...rest) {
    if (typeof value === "function" && typeof value.sig === "string") value = wasmWrapper(scope, value, value.sig);
    return set.call(this, index, value, ...rest);
  };
  return () => {
    prototype.set = set;
  };
}

// Emscripten's convertJsFunctionToWasm, byte for byte: a module that imports `func` with the
// signature `sig` (its result type, then its parameters' types: i and p i32, j i64, f f32, d f64,
// e externref, v none) and exports it.
const WASM_TYPES = { i: 127, p: 127, j: 126, f: 125, d: 124, e: 111 };
const WASM_HEADER = [0, 97, 115, 109, 1, 0, 0, 0]; // "\0asm", version 1
const IMPORT_AND_EXPORT = [2, 7, 1, 1, 101, 1, 102, 0, 0, 7, 5, 1, 1, 102, 0, 0]; // imports e.f (type 0), exports it as f
/** @param {number[]} items */
const withLength = (items) => [(items.length % 128) | 128, items.length >> 7, ...items];
/** @param {string} types */
const typePack = (types) => withLength(Array.from(types, (type) => WASM_TYPES[type]));
/**
 * @param {any} scope
 * @param {Function} func
 * @param {string} sig
 */
function wasmWrapper(scope, func, sig) {
  const type = withLength([1, 96, ...typePack(sig.slice(1)), ...typePack(sig[0] === "v" ? "" : sig[0])]);
  const bytes = Uint8Array.of(...WASM_HEADER, 1, ...type, ...IMPORT_AND_EXPORT);
  const module = new scope.WebAssembly.Module(bytes);
  return new scope.WebAssembly.Instance(module, { e: { f: func } }).exports.f;
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
