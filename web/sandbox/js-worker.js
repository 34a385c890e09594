// @ts-check
// The javascript tool's runtime: runs inside a dedicated worker that the sandbox frame
// (frame.html, an opaque origin) creates from a blob: URL, so an endless loop never blocks the
// page and the page ends it by removing the frame.
//
// It receives {token, init: {code, limits}} and a MessagePort (its only line to the page), then:
// - checks the code compiles (a syntax error is reported at once, before anything runs);
// - runs it: as a classic script through indirect eval when it has no top-level await/return
//   (the value of its last expression is the result, as in a REPL), otherwise as the body of an
//   async function (the result is what it returns);
// - forwards console output (batched), serves `workspace.read/write/list` through the port,
//   and reports {type: "done", ok, value, error}.
// Every message it sends carries the run's token; the page drops messages without it.
// Messages: SandboxStart<JsInit> in, then JsWorkerMessage out and JsPageMessage in over the port
// (web/messages.d.ts).
"use strict";

/** @typedef {import("../messages").JsWorkerMessage} JsWorkerMessage */
/** @typedef {import("../messages").JsPageMessage} JsPageMessage */

// No declaration at the top level: the tool's code runs in this worker's global scope.
/** @param {MessageEvent<import("../messages").SandboxStart<import("../messages").JsInit>>} first */
self.onmessage = (first) => {
  self.onmessage = null;
  const { token, init } = first.data || {};
  const port = first.ports[0];
  if (typeof token !== "string" || !port || !init) return;

  const limits = Object.assign({ consoleBytes: 1_000_000, valueChars: 100_000 }, init.limits || {});
  /** @param {JsWorkerMessage} message */
  const send = (message) => {
    message.token = token;
    port.postMessage(message);
  };
  const postToPort = MessagePort.prototype.postMessage;

  // ---- Network off: remove what reaches the network (the frame's CSP blocks it anyway) ----
  if (!init.network) {
    for (const name of ["fetch", "XMLHttpRequest", "WebSocket", "EventSource", "WebTransport", "importScripts"]) {
      try {
        delete self[name];
        if (name in self) Object.defineProperty(self, name, { value: undefined, configurable: false, writable: false });
      } catch {
        // Not deletable here: the content security policy still blocks it.
      }
    }
  }

  // ---- Values as text ----
  function describe(value, indent) {
    if (typeof value === "string") return value;
    if (value === undefined) return "undefined";
    if (typeof value === "bigint") return `${value}n`;
    if (typeof value === "symbol") return value.toString();
    if (typeof value === "function") return `[Function ${value.name || "(anonymous)"}]`;
    if (value instanceof Error)
      return value.stack?.includes(value.message) ? cleanStack(value.stack) : `${value.name}: ${value.message}`;
    try {
      const seen = new WeakSet();
      const text = JSON.stringify(
        value,
        (key, item) => {
          if (typeof item === "bigint") return `${item}n`;
          if (typeof item === "function") return `[Function ${item.name || "(anonymous)"}]`;
          if (typeof item === "symbol") return item.toString();
          if (item === undefined) return key === "" ? item : "undefined";
          if (item && typeof item === "object") {
            if (seen.has(item)) return "[Circular]";
            seen.add(item);
            if (item instanceof Map) return Object.fromEntries(item);
            if (item instanceof Set) return [...item];
            if (item instanceof Error) return `${item.name}: ${item.message}`;
            if (ArrayBuffer.isView(item) && !(item instanceof DataView))
              return Array.from(/** @type {Uint8Array} */ (item).subarray(0, 1000));
          }
          return item;
        },
        indent,
      );
      return text === undefined ? String(value) : text;
    } catch {
      return String(value);
    }
  }

  function cleanStack(stack) {
    // Drop the runtime's own frames (blob: URLs of this worker) from stack traces.
    return String(stack)
      .split("\n")
      .filter((line) => !/blob:|^\s+at (?:run|runScript|runAsync) \(/.test(line))
      .join("\n");
  }

  function errorInfo(error) {
    if (error instanceof Error) {
      return { name: error.name, message: error.message, stack: cleanStack(error.stack || "") };
    }
    return { name: "Error", message: describe(error), stack: "" };
  }

  // ---- Console, batched: one message per 50 ms at most ----
  let pending = [];
  let sentBytes = 0;
  let dropped = false;
  let lastFlush = 0;
  let flushTimer = null;
  function flush() {
    if (flushTimer !== null) {
      clearTimeout(flushTimer);
      flushTimer = null;
    }
    lastFlush = performance.now();
    if (!pending.length) return;
    const lines = pending;
    pending = [];
    postToPort.call(port, { token, type: "console", lines });
  }
  function emit(level, args) {
    if (dropped) return;
    const text = args.map((a) => describe(a)).join(" ");
    sentBytes += text.length + 1;
    if (sentBytes > limits.consoleBytes) {
      dropped = true;
      pending.push({
        level: "warn",
        text: `[console output over ${limits.consoleBytes} characters: the rest was dropped]`,
      });
    } else {
      pending.push({ level, text });
    }
    if (performance.now() - lastFlush > 50) flush();
    else if (flushTimer === null) flushTimer = setTimeout(flush, 50);
  }
  const levels = {
    log: "log",
    info: "info",
    warn: "warn",
    error: "error",
    debug: "debug",
    trace: "debug",
    dir: "log",
    table: "log",
  };
  for (const [method, level] of Object.entries(levels)) {
    console[method] = (...args) => emit(level, args);
  }
  console.assert = (condition, ...args) => {
    if (!condition) emit("error", ["Assertion failed:", ...args]);
  };

  // ---- Workspace files, through the page ----
  let nextId = 1;
  const waiting = new Map();
  /** @param {MessageEvent<JsPageMessage>} event */
  port.onmessage = (event) => {
    const message = event.data;
    if (!message || message.token !== token || message.type !== "fs-result") return;
    const entry = waiting.get(message.id);
    if (!entry) return;
    waiting.delete(message.id);
    if (message.ok) entry.resolve(message.value);
    else entry.reject(new Error(message.error));
  };
  function request(op, fields) {
    flush();
    return new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      postToPort.call(port, { token, type: "fs", id, op, ...fields });
    });
  }
  function toBytes(data) {
    if (typeof data === "string") return data;
    if (data instanceof ArrayBuffer) return new Uint8Array(data.slice(0));
    if (ArrayBuffer.isView(data))
      return new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
    throw new TypeError("workspace.write(path, data): data must be a string, an ArrayBuffer or a typed array");
  }
  const workspace = Object.freeze({
    /** The text of a workspace file (or its bytes, as a Uint8Array, with {encoding: "binary"}). */
    read: (path, options = {}) =>
      request("read", { path: String(path), encoding: options.encoding === "binary" ? "binary" : "utf8" }),
    /** Create or replace a workspace file with a string or bytes. */
    write: async (path, data) => {
      if (data instanceof Blob) data = new Uint8Array(await data.arrayBuffer());
      return request("write", { path: String(path), data: toBytes(data) });
    },
    /** [{path, size, mtime}] of the files under a folder (default: all). */
    list: (path = "") => request("list", { path: String(path) }),
  });
  Object.defineProperty(self, "workspace", { value: workspace, enumerable: true });

  // ---- Uncaught errors ----
  let uncaught = null;
  self.addEventListener("error", (event) => {
    event.preventDefault();
    uncaught = event.error instanceof Error ? event.error : new Error(event.message);
    emit("error", [`Uncaught ${describe(uncaught)}`]);
  });
  self.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    uncaught = event.reason instanceof Error ? event.reason : new Error(describe(event.reason));
    emit("error", [`Uncaught (in promise) ${describe(event.reason)}`]);
  });

  // ---- Compile, then run ----
  const code = String(init.code);
  const AsyncFunction = /** @type {new (body: string) => () => Promise<unknown>} */ ((async () => {}).constructor);
  let asyncBody;
  try {
    asyncBody = new AsyncFunction(code);
  } catch (error) {
    const info = errorInfo(error);
    if (/import/.test(info.message) && /^\s*import\s/m.test(code)) {
      info.message += " (static import statements are not supported: use `await import(url)`)";
    }
    info.stack = "";
    send({ type: "done", ok: false, phase: "compile", error: info });
    return;
  }
  // A classic script (no top-level await or return) runs through indirect eval, whose result is
  // the value of the last expression statement. Checking that it parses as a script runs none
  // of it: the code is wrapped in `if (false) {...}`.
  let isScript = false;
  try {
    (0, eval)(`if (false) {\n${code}\n}`);
    isScript = true;
  } catch {
    isScript = false;
  }

  send({ type: "ready" });

  (async () => {
    let value;
    try {
      value = isScript ? (0, eval)(code) : await asyncBody();
      if (value && typeof value.then === "function") value = await value;
      await new Promise((resolve) => setTimeout(resolve, 0));
      flush();
      if (uncaught) {
        send({ type: "done", ok: false, error: errorInfo(uncaught) });
        return;
      }
      let shown = value === undefined ? null : describe(value, 2);
      if (shown !== null && shown.length > limits.valueChars) {
        shown = `${shown.slice(0, limits.valueChars)}\n[value cut at ${limits.valueChars} characters]`;
      }
      send({ type: "done", ok: true, value: shown });
    } catch (error) {
      flush();
      send({ type: "done", ok: false, error: errorInfo(error) });
    }
  })();
};
