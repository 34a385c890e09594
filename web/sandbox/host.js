// @ts-check
// The page's side of the javascript and python tools' sandboxes.
//
// Each sandbox is an <iframe sandbox="allow-scripts"> (never allow-same-origin: an opaque origin,
// so no access to this page's DOM, storage, cookies or keys) loading frame.html, or
// frame-net.html when the user allowed the tool network access. The frame starts a worker from
// the source the page sends, and hands it a MessageChannel port: the page and the worker talk
// only over that port, and every message carries the run's random token (the page drops any
// other). The only window message the page accepts from a frame is a start-up failure report,
// checked for `event.source === frame.contentWindow` and the token. A timeout or an abort removes
// the frame, which ends its worker however busy it is.
//
// Python calls into this module through globalThis.pyAgentSandbox (see index.js):
//   runJavaScript({code, timeoutMs, network, onConsole, onFs, signal}) -> result
//   python.prepare(network) -> generation;  python.run({...}) -> result

import { startPyodideInTurn } from "../boot/pyodide-starts.js";

const HERE = new URL("./", import.meta.url);
const SITE = new URL("../", import.meta.url);
const BOOT_TIMEOUT_MS = 15_000;
const PYTHON_BOOT_TIMEOUT_MS = 180_000;

// ---- Helpers ----

const texts = new Map();
async function fetchText(url) {
  const key = String(url);
  if (!texts.has(key)) {
    texts.set(
      key,
      (async () => {
        const response = await fetch(key, { cache: "no-cache" });
        if (!response.ok) throw new Error(`${key}: HTTP ${response.status}`);
        return response.text();
      })(),
    );
  }
  try {
    return await texts.get(key);
  } catch (error) {
    texts.delete(key);
    throw error;
  }
}

function randomToken() {
  const bytes = new Uint8Array(24);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

let holder = null;
function frameHolder() {
  if (!holder?.isConnected) {
    holder = document.createElement("div");
    holder.id = "py-agent-sandboxes";
    holder.hidden = true;
    holder.setAttribute("aria-hidden", "true");
    document.body.append(holder);
  }
  return holder;
}

const liveFrames = new Set();
window.addEventListener("message", (event) => {
  const data = event.data;
  if (data?.kind !== "py-agent-sandbox-fatal") return;
  for (const frame of liveFrames) {
    if (event.source === frame.window && event.source !== null && data.token === frame.token) {
      frame.fatal(String(data.message).slice(0, 2000));
    }
  }
});

/** One sandboxed frame with its worker; `onMessage` gets the worker's messages that carry the token. */
export class SandboxFrame {
  constructor({ network, source, init, transfer = [], onMessage, onFatal, title }) {
    this.token = randomToken();
    this.closed = false;
    this.onFatal = onFatal;
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.port.onmessage = (event) => {
      const message = event.data;
      if (this.closed || !message || typeof message !== "object" || message.token !== this.token) return;
      onMessage(message);
    };
    const iframe = document.createElement("iframe");
    iframe.setAttribute("sandbox", "allow-scripts");
    iframe.setAttribute("referrerpolicy", "no-referrer");
    iframe.setAttribute(
      "allow",
      "camera 'none'; microphone 'none'; geolocation 'none'; clipboard-read 'none'; clipboard-write 'none'",
    );
    iframe.title = title;
    iframe.tabIndex = -1;
    iframe.dataset.sandbox = title;
    iframe.src = new URL(network ? "frame-net.html" : "frame.html", HERE).href;
    iframe.addEventListener(
      "load",
      () => {
        if (this.closed) return;
        const message = { kind: "py-agent-sandbox-init", token: this.token, source, init, transfer };
        iframe.contentWindow.postMessage(message, "*", [channel.port2, ...transfer]);
      },
      { once: true },
    );
    this.iframe = iframe;
    frameHolder().append(iframe);
    this.window = iframe.contentWindow;
    liveFrames.add(this);
  }

  post(message, transfer = []) {
    if (this.closed) return;
    message.token = this.token;
    this.port.postMessage(message, transfer);
  }

  fatal(message) {
    if (!this.closed) this.onFatal?.(message);
  }

  destroy() {
    if (this.closed) return;
    this.closed = true;
    liveFrames.delete(this);
    this.port.onmessage = null;
    this.port.close();
    this.iframe.remove();
  }
}

function abortableTimer(signal, ms, onTimeout, onAbort) {
  const timer = ms > 0 ? setTimeout(onTimeout, ms) : null;
  const abort = () => onAbort();
  signal?.addEventListener("abort", abort, { once: true });
  return () => {
    if (timer !== null) clearTimeout(timer);
    signal?.removeEventListener("abort", abort);
  };
}

// ---- javascript ----

const FS_OPS = new Set(["read", "write", "list"]);

/**
 * Run JavaScript in a fresh sandbox. Resolves (never rejects) with
 * {ok, value, error, console: [{level, text}], timedOut, aborted, phase, durationMs}.
 * onFs(op, path, data, encoding) serves workspace.read/write/list; onConsole(lines) sees output live.
 */
export async function runJavaScript({ code, timeoutMs = 60_000, network = false, onConsole, onFs, signal }) {
  const started = performance.now();
  if (signal?.aborted) return { ok: false, aborted: true, console: [], durationMs: 0 };
  const source = await fetchText(new URL("js-worker.js", HERE));
  return new Promise((resolve) => {
    const consoleLines = [];
    let settled = false;
    let stopTimer = () => {};
    let sandbox = null;
    const finish = (result) => {
      if (settled) return;
      settled = true;
      stopTimer();
      sandbox?.destroy();
      resolve({ console: consoleLines, durationMs: Math.round(performance.now() - started), ...result });
    };
    const limitMessage = (ms) => `Execution timed out after ${Math.round(ms / 100) / 10} s`;
    stopTimer = abortableTimer(
      signal,
      BOOT_TIMEOUT_MS,
      () => finish({ ok: false, error: { name: "SandboxError", message: "The JavaScript sandbox did not start" } }),
      () => finish({ ok: false, aborted: true }),
    );
    sandbox = new SandboxFrame({
      network,
      source,
      init: { code: String(code), network: Boolean(network) },
      title: "javascript sandbox",
      onFatal: (message) => finish({ ok: false, error: { name: "SandboxError", message } }),
      onMessage: async (message) => {
        if (settled) return;
        switch (message.type) {
          case "ready":
            stopTimer();
            stopTimer = abortableTimer(
              signal,
              timeoutMs,
              () =>
                finish({
                  ok: false,
                  timedOut: true,
                  error: { name: "TimeoutError", message: limitMessage(timeoutMs) },
                }),
              () => finish({ ok: false, aborted: true }),
            );
            break;
          case "console": {
            const lines = Array.isArray(message.lines) ? message.lines : [];
            const clean = lines
              .filter((line) => line && typeof line.text === "string")
              .map((line) => ({ level: String(line.level), text: line.text }));
            consoleLines.push(...clean);
            if (clean.length) onConsole?.(clean);
            break;
          }
          case "fs": {
            const { id, op, path, data, encoding } = message;
            const reply = (fields) => sandbox.post({ type: "fs-result", id, ...fields });
            if (!FS_OPS.has(op) || typeof path !== "string" || typeof id !== "number") {
              reply({ ok: false, error: "Unknown request" });
              break;
            }
            if (op === "write" && typeof data !== "string" && !(data instanceof Uint8Array)) {
              reply({ ok: false, error: "workspace.write: data must be a string or bytes" });
              break;
            }
            try {
              const value = await onFs(
                op,
                path,
                op === "write" ? data : null,
                encoding === "binary" ? "binary" : "utf8",
              );
              if (!settled) reply({ ok: true, value });
            } catch (error) {
              if (!settled) reply({ ok: false, error: String(error?.message ?? error) });
            }
            break;
          }
          case "done":
            finish({
              ok: Boolean(message.ok),
              value: typeof message.value === "string" ? message.value : null,
              error: message.error
                ? {
                    name: String(message.error.name ?? "Error"),
                    message: String(message.error.message ?? ""),
                    stack: String(message.error.stack ?? ""),
                  }
                : null,
              phase: message.phase === "compile" ? "compile" : "run",
            });
            break;
          default:
            break;
        }
      },
    });
  });
}

// ---- python ----

let manifestPromise = null;
function siteManifest() {
  manifestPromise ??= fetch(new URL("manifest.json", SITE), { cache: "no-cache" }).then((r) => {
    if (!r.ok) throw new Error(`manifest.json: HTTP ${r.status}`);
    return r.json();
  });
  manifestPromise.catch(() => {
    manifestPromise = null;
  });
  return manifestPromise;
}

const CONTENT_TYPES = {
  wasm: "application/wasm",
  json: "application/json",
  mjs: "text/javascript",
  js: "text/javascript",
  zip: "application/zip",
};

/** The python tool's interpreter: one warm one at a time, replaced after a timeout or abort. */
export class PythonSandbox {
  constructor() {
    this.generation = 0;
    this.interp = null;
  }

  async _allowedFiles() {
    const manifest = await siteManifest();
    const dir = manifest.index_url ?? "pyodide/";
    // The python tool's own lock (the site's wheels plus micropip and pyodide-http), when built.
    const lockFile = manifest.sandbox_lock_file ?? manifest.lock_file;
    const names = new Set();
    const files = [...manifest.runtime, ...manifest.wheels, ...(manifest.sandbox_wheels ?? []), { file: lockFile }];
    for (const file of files) {
      if (typeof file.file === "string" && file.file.startsWith(dir)) names.add(file.file.slice(dir.length));
    }
    // The standard library the page loads (with bytecode, when built; Pyodide's own otherwise).
    const stdlib =
      typeof manifest.stdlib === "string" && manifest.stdlib.startsWith(dir)
        ? manifest.stdlib
        : `${dir}python_stdlib.zip`;
    names.add(stdlib.slice(dir.length));
    return { dir, names, lockName: lockFile.slice(dir.length), stdlibName: stdlib.slice(dir.length) };
  }

  _start(network) {
    const generation = ++this.generation;
    const interp = { generation, network, frame: null, run: null, dead: false };
    interp.ready = (async () => {
      const { dir, names, lockName, stdlibName } = await this._allowedFiles();
      const [pyodideMjs, asmMjs, source, runtime] = await Promise.all([
        fetchText(new URL(`${dir}pyodide.js`, SITE)),
        fetchText(new URL(`${dir}pyodide.asm.js`, SITE)),
        fetchText(new URL("py-worker.js", HERE)),
        fetchText(new URL("py-runtime.py", HERE)),
      ]);
      // One Pyodide starting at a time beside the app's (web/boot/pyodide-starts.js).
      const files = { dir, names, lockName, stdlibName, pyodideMjs, asmMjs, source, runtime };
      return startPyodideInTurn(() => this._boot(interp, files));
    })();
    interp.ready.catch(() => this._kill(interp));
    this.interp = interp;
    return interp;
  }

  /** Starts `interp`'s frame and its Pyodide; resolves with its generation once it is ready. */
  _boot(interp, { dir, names, lockName, stdlibName, pyodideMjs, asmMjs, source, runtime }) {
    const { generation, network } = interp;
    if (interp.dead) throw new Error("The Python sandbox was stopped");
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error("The Python interpreter did not start in time")),
        PYTHON_BOOT_TIMEOUT_MS,
      );
      interp.stopped = () => {
        clearTimeout(timer);
        reject(new Error("The Python sandbox was stopped"));
      };
      interp.fail = (message) => {
        clearTimeout(timer);
        reject(new Error(message));
        interp.run?.finish({ ok: false, error: { type: "SandboxError", message, traceback: "" } });
        this._kill(interp);
      };
      interp.frame = new SandboxFrame({
        network,
        source,
        init: { pyodideMjs, asmMjs, runtime, lockName, stdlibName, network: Boolean(network) },
        title: "python sandbox",
        onFatal: (message) => interp.fail(message),
        onMessage: (message) => {
          switch (message.type) {
            case "ready":
              clearTimeout(timer);
              resolve(generation);
              break;
            case "boot-error":
              interp.fail(`Python could not start: ${String(message.message).slice(0, 2000)}`);
              break;
            case "fetch":
              this._serveFile(interp, dir, names, message);
              break;
            case "stream":
              if (interp.run && Array.isArray(message.chunks)) interp.run.onStream(message.chunks);
              break;
            case "result":
              if (interp.run && message.id === interp.run.id) interp.run.onResult(message);
              break;
            default:
              break;
          }
        },
      });
    });
  }

  async _serveFile(interp, dir, names, { id, name }) {
    const reply = (fields, transfer) => interp.frame?.post({ type: "fetch-result", id, ...fields }, transfer);
    if (typeof name !== "string" || !names.has(name)) {
      reply({ ok: false, error: `${name}: not a file of the site's Python runtime` });
      return;
    }
    try {
      const response = await fetch(new URL(`${dir}${name}`, SITE));
      if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
      const body = await response.arrayBuffer();
      const type = CONTENT_TYPES[name.split(".").pop()] ?? "application/octet-stream";
      reply({ ok: true, body, contentType: type }, [body]);
    } catch (error) {
      reply({ ok: false, error: String(error.message ?? error) });
    }
  }

  _kill(interp) {
    interp.dead = true;
    interp.stopped?.(); // a start under way ends (its turn too)
    interp.frame?.destroy();
    if (this.interp === interp) this.interp = null;
  }

  /** Stop the interpreter (the next run starts a new one). */
  reset() {
    if (this.interp) this._kill(this.interp);
  }

  /** Start (or keep) an interpreter for this network setting; resolves with its generation. */
  async prepare(network = false) {
    let interp = this.interp;
    if (interp && interp.network !== Boolean(network)) {
      this._kill(interp);
      interp = null;
    }
    interp ??= this._start(Boolean(network));
    return interp.ready;
  }

  /**
   * Run code. `generation` is what prepare() returned (the files in `sync` were chosen for it).
   * Resolves (never rejects) with {ok, value, error: {type, message, traceback}, output:
   * [{stream, text}], changes: {files, deletes}, timedOut, aborted, stale, generation, durationMs}.
   */
  run({ code, generation, sync, timeoutMs = 60_000, network = false, onOutput, signal }) {
    const interp = this.interp;
    const started = performance.now();
    if (!interp || interp.dead || interp.generation !== generation || interp.network !== Boolean(network)) {
      return Promise.resolve({ ok: false, stale: true, output: [], changes: { files: [], deletes: [] } });
    }
    if (interp.run) {
      return Promise.resolve({
        ok: false,
        error: { type: "SandboxError", message: "Another Python run is in progress", traceback: "" },
        output: [],
        changes: { files: [], deletes: [] },
      });
    }
    if (signal?.aborted)
      return Promise.resolve({ ok: false, aborted: true, output: [], changes: { files: [], deletes: [] } });
    return new Promise((resolve) => {
      const output = [];
      const id = Math.floor(Math.random() * 2 ** 31);
      let stopTimer = () => {};
      const finish = (result, { kill = false } = {}) => {
        if (interp.run?.id !== id) return;
        interp.run = null;
        stopTimer();
        if (kill) {
          this._kill(interp);
          // A warm replacement, so the next run does not wait for Python to start.
          setTimeout(() => {
            if (!this.interp) this._start(Boolean(network)).ready.catch(() => {});
          }, 0);
        }
        resolve({
          output,
          changes: { files: [], deletes: [] },
          generation,
          durationMs: Math.round(performance.now() - started),
          ...result,
        });
      };
      interp.run = {
        id,
        finish,
        onStream: (chunks) => {
          const clean = chunks
            .filter((c) => c && typeof c.text === "string")
            .map((c) => ({ stream: c.stream === "stderr" ? "stderr" : "stdout", text: c.text }));
          output.push(...clean);
          if (clean.length) onOutput?.(clean);
        },
        onResult: (message) => {
          const changes =
            message.changes && Array.isArray(message.changes.files) ? message.changes : { files: [], deletes: [] };
          finish({
            ok: Boolean(message.ok),
            value: typeof message.value === "string" ? message.value : null,
            error: message.error
              ? {
                  type: String(message.error.type ?? "Error"),
                  message: String(message.error.message ?? ""),
                  traceback: String(message.error.traceback ?? ""),
                }
              : null,
            changes: {
              files: changes.files.filter((f) => f && typeof f.path === "string" && f.data instanceof Uint8Array),
              deletes: (changes.deletes ?? []).filter((p) => typeof p === "string"),
            },
          });
        },
      };
      stopTimer = abortableTimer(
        signal,
        timeoutMs,
        () =>
          finish(
            {
              ok: false,
              timedOut: true,
              error: {
                type: "TimeoutError",
                message: `Execution timed out after ${Math.round(timeoutMs / 100) / 10} s`,
                traceback: "",
              },
            },
            { kill: true },
          ),
        () => finish({ ok: false, aborted: true }, { kill: true }),
      );
      const transfer = [];
      for (const file of sync.files ?? []) {
        if (file.data instanceof Uint8Array) transfer.push(file.data.buffer);
      }
      interp.frame.post({ type: "run", id, code: String(code), sync }, transfer);
    });
  }
}

export const python = new PythonSandbox();
