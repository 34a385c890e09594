// @ts-check
// The python tool's runtime: a Pyodide interpreter of its own, in a dedicated worker that the
// sandbox frame (frame.html, an opaque origin) creates from a blob: URL. It is never the agent's
// interpreter: it shares no memory with the page, an endless loop blocks only this worker, and
// the page ends it by removing the frame.
//
// It receives {token, init: {pyodideMjs, asmMjs, runtime, lockName, stdlibName, network}} and a MessagePort, its only
// line to the page. Pyodide's own files (wasm, standard library, lock file, wheels) are asked of
// the page over the port, by name; the page serves only the site's runtime files and wheels.
// Messages in: {type: "run", id, code, sync}, {type: "fetch-result", ...}. Out: "ready",
// "boot-error", "fetch", "stream" (stdout/stderr, batched) and "result". All carry the token.
// Their shapes: SandboxStart<PyInit>, PyPageMessage and PyWorkerMessage (web/messages.d.ts).
"use strict";

/** @typedef {import("../messages").PyWorkerMessage} PyWorkerMessage */
/** @typedef {import("../messages").PyPageMessage} PyPageMessage */

// No declaration at the top level: the tool's code runs in this worker's global scope.
/** @param {MessageEvent<import("../messages").SandboxStart<import("../messages").PyInit>>} first */
self.onmessage = async (first) => {
  self.onmessage = null;
  const { token, init } = first.data || {};
  const port = first.ports[0];
  if (typeof token !== "string" || !port || !init) return;

  const postToPort = MessagePort.prototype.postMessage;
  /**
   * @param {PyWorkerMessage} message
   * @param {Transferable[]} [transfer]
   */
  const send = (message, transfer = []) => {
    message.token = token;
    postToPort.call(port, message, transfer);
  };
  const BASE = "https://pyodide.sandbox.invalid/";
  const limits = Object.assign({ outputBytes: 2_000_000 }, init.limits || {});

  // ---- Files from the page, by name ----
  let nextId = 1;
  const waiting = new Map();
  function requestFile(name) {
    return new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      send({ type: "fetch", id, name });
    });
  }
  let queue = Promise.resolve();
  let run = null; // set once the interpreter is up
  /** @param {MessageEvent<PyPageMessage>} event */
  port.onmessage = (event) => {
    const message = event.data;
    if (!message || message.token !== token) return;
    if (message.type === "fetch-result") {
      const entry = waiting.get(message.id);
      if (!entry) return;
      waiting.delete(message.id);
      if (message.ok) entry.resolve({ body: message.body, type: message.contentType });
      else entry.reject(new Error(message.error));
    } else if (message.type === "run") {
      if (run) queue = queue.then(() => run(message));
    }
  };
  const realFetch = self.fetch;
  self.fetch = async function fetch(input, options) {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (typeof url === "string" && url.startsWith(BASE)) {
      const name = url.slice(BASE.length).split(/[?#]/)[0];
      try {
        const { body, type } = await requestFile(name);
        return new Response(body, { status: 200, headers: { "content-type": type } });
      } catch (error) {
        return new Response(String(error.message), { status: 404, statusText: "Not Found" });
      }
    }
    if (init.network && realFetch) return realFetch.call(self, input, options);
    throw new TypeError("Failed to fetch: network access is off for the python tool");
  };

  // ---- Output, batched: one message per 50 ms at most ----
  let chunks = [];
  let buffered = 0;
  let sent = 0;
  let dropped = false;
  let lastFlush = 0;
  function flush() {
    lastFlush = performance.now();
    if (!chunks.length) return;
    const batch = chunks;
    chunks = [];
    buffered = 0;
    send({ type: "stream", chunks: batch });
  }
  function output(stream, text) {
    if (dropped || !text) return;
    sent += text.length;
    if (sent > limits.outputBytes) {
      dropped = true;
      chunks.push({
        stream: "stderr",
        text: `\n[output over ${limits.outputBytes} characters: the rest was dropped]\n`,
      });
    } else {
      const last = chunks[chunks.length - 1];
      if (last && last.stream === stream) last.text += text;
      else chunks.push({ stream, text });
      buffered += text.length;
    }
    if (buffered > 65536 || performance.now() - lastFlush > 50) flush();
  }
  function writer(stream) {
    const decoder = new TextDecoder();
    return {
      write: (bytes) => {
        output(stream, decoder.decode(bytes, { stream: true }));
        return bytes.length;
      },
    };
  }

  // ---- Boot ----
  let pyodide;
  let helpers;
  try {
    const moduleUrl = (source) => URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
    const { default: createPyodideModule } = await import(moduleUrl(init.asmMjs));
    const { loadPyodide } = await import(moduleUrl(init.pyodideMjs));
    const lockName = typeof init.lockName === "string" ? init.lockName : "pyodide-lock.json";
    const lock = JSON.parse(new TextDecoder().decode((await requestFile(lockName)).body));
    const stdlibName = typeof init.stdlibName === "string" ? init.stdlibName : "python_stdlib.zip";
    pyodide = await loadPyodide({
      indexURL: BASE,
      stdLibURL: BASE + stdlibName,
      packageBaseUrl: BASE,
      createPyodideModule,
      lockFileContents: lock,
      env: { HOME: "/workspace" },
    });
    pyodide.setStdout(writer("stdout"));
    pyodide.setStderr(writer("stderr"));
    pyodide.setStdin({ error: true });
    if (init.network && lock.packages?.["pyodide-http"]) {
      await pyodide.loadPackage(["pyodide-http"], { messageCallback: () => {}, errorCallback: () => {} });
      const http = pyodide.pyimport("pyodide_http");
      http.patch_all();
      http.destroy();
    }
    pyodide.runPython(init.runtime, { filename: "<py-agent-sandbox>" });
    helpers = {
      sync: pyodide.globals.get("_pyagent_sync"),
      run: pyodide.globals.get("_pyagent_run"),
      collect: pyodide.globals.get("_pyagent_collect"),
    };
    for (const name of ["_pyagent_sync", "_pyagent_run", "_pyagent_collect"]) pyodide.globals.delete(name);
  } catch (error) {
    send({ type: "boot-error", message: String(error?.message ? error.message : error) });
    return;
  }
  if (!init.network) {
    for (const name of ["XMLHttpRequest", "WebSocket", "EventSource", "WebTransport", "importScripts"]) {
      try {
        delete self[name];
      } catch {
        // The content security policy blocks it anyway.
      }
    }
  }

  // ---- Runs, one at a time ----
  run = async (message) => {
    const { id, code, sync } = message;
    sent = 0;
    dropped = false;
    let result;
    try {
      helpers.sync(Boolean(sync.reset), sync.files, sync.deletes);
      try {
        await pyodide.loadPackagesFromImports(code, {
          messageCallback: () => {},
          errorCallback: (text) => output("stderr", `${text}\n`),
        });
      } catch {
        // A syntax error or an unknown package: running the code reports it properly.
      }
      const outcome = await helpers.run(code);
      result = outcome.toJs({ dict_converter: Object.fromEntries });
      outcome.destroy();
    } catch (error) {
      result = { ok: false, error: { type: "SandboxError", message: String(error.message || error), traceback: "" } };
    }
    flush();
    let changes = { files: [], deletes: [] };
    try {
      const collected = helpers.collect();
      changes = collected.toJs({ dict_converter: Object.fromEntries });
      collected.destroy();
    } catch (error) {
      output("stderr", `[could not read back the workspace: ${error.message}]\n`);
      flush();
    }
    send(
      { type: "result", id, ...result, changes },
      changes.files.map((f) => f.data.buffer),
    );
  };

  send({ type: "ready" });
};
