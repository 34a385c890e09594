#!/usr/bin/env node
// Makes the memory snapshot that a first visit restores (build.py runs this when Node.js is there,
// after scripts/site_packages.mjs; see build_snapshot() in buildsys/site.py). It does what the
// page's snapshot worker does (web/boot/snapshot-worker.js), with the same modules of the page
// (web/boot/runtime.js, web/boot/unpack.js, web/boot/snapshot.js: makeSnapshotOf) and the same
// files of the site: a Pyodide started with `_makeSnapshot` and the site's standard library zip,
// site-packages.bin installed, py_agent and the app's Python modules imported and the deferred
// validators built (the same Python module: py_agent/browser/boot.py), then the snapshot and the
// record of pydantic-core's library (snapshot.js).
//
//     node scripts/snapshot.mjs SITE_DIR OUT_FILE OUT_RECORD
//
// SITE_DIR is a site being built: its manifest is not written yet, so the parts of it the page's
// modules read are made here from SITE_DIR/pyodide/. OUT_FILE gets the snapshot gzip'd
// (deterministically), OUT_RECORD its record as JSON (snapshot.js: kind, size and SHA-256 of the
// body, libraries, table digest...; `version` is null: a shipped snapshot belongs to the build
// whose manifest names it).
//
// What Node.js gives Python that a browser would not is kept out of the snapshot, or set again
// after a restore (snapshot.js, afterRestore): Python's environment is the page's (PYTHON_ENV; LANG
// is C.UTF-8, as Emscripten sets it without a browser's language), the program's name a
// browser's, the time zone UTC (a restore sets the browser's), `sys._emscripten_info.runtime`
// (a restore sets the browser's), and no JavaScript object of Node's may be referenced from Python
// (checked below); CPython's call trampoline: see below.

import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const [siteArg, outArg, recordArg] = process.argv.slice(2);
if (!siteArg || !outArg || !recordArg) {
  console.error("usage: node scripts/snapshot.mjs SITE_DIR OUT_FILE OUT_RECORD");
  process.exit(2);
}
if (process.env.TZ !== "UTC") {
  console.error("scripts/snapshot.mjs must run with TZ=UTC (the snapshot must not hold the build machine's time zone)");
  process.exit(2);
}
// Emscripten gives Python this script's path and arguments (sys.executable, sys.orig_argv, the
// environment's `_`): a page's runtime has none, and says "./this.program".
process.argv.splice(1, Infinity, "./this.program");
const site = pathToFileURL(`${resolve(siteArg)}/`);
const web = new URL("../web/", import.meta.url);
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
const file = (path) => {
  const bytes = readFileSync(new URL(path, site));
  return { file: path, size: bytes.length, sha256: sha256(bytes) };
};

// The page's modules fetch the site's files: under Node.js, file: URLs are read from the disk, and
// a Subresource Integrity is checked as the browser checks it.
const nodeFetch = globalThis.fetch;
globalThis.fetch = async (input, init = {}) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.protocol !== "file:") return nodeFetch(input, init);
  const bytes = readFileSync(url);
  if (init.integrity) {
    const [algorithm, expected] = init.integrity.split("-");
    if (algorithm !== "sha256" || createHash("sha256").update(bytes).digest("base64") !== expected) {
      throw new TypeError(`${url.pathname}: integrity check failed`);
    }
  }
  return new Response(bytes, { headers: { "content-type": "application/octet-stream" } });
};

const { PYTHON_ENV, stdlibOptions } = await import(new URL("boot/runtime.js", web).href);
const { makeSnapshotOf } = await import(new URL("boot/snapshot.js", web).href);
const { startUnpacking } = await import(new URL("boot/unpack.js", web).href);

// CPython's call trampoline. In a browser, the runtime instantiates a small WebAssembly module
// (getWasmTrampolineModule in pyodide.asm.js: it calls a function with the number of arguments its
// type takes, which needs WebAssembly GC) and adds it to the function table, where the interpreter
// finds it by its index, kept in its memory. Node.js 20's WebAssembly lacks that feature: the
// runtime would then add nothing and call through JavaScript, and the snapshot's function table
// would be one slot short of a browser's. So here that module is replaced, while Pyodide starts, by
// one of the same interface that calls through JavaScript as the runtime's fallback does: the
// table has the slot at the same index, which a browser's own trampoline fills after a restore.
const asmSource = readFileSync(new URL("pyodide/pyodide.asm.js", site), "utf8");
const trampolineHex = asmSource.match(
  /function getWasmTrampolineModule\(\)\{return new WebAssembly\.Module\(hexStringToUTF8Array\("([0-9a-f]+)"\)/,
)?.[1];
if (!trampolineHex)
  throw new Error("pyodide.asm.js: no getWasmTrampolineModule (another Pyodide: check this script against it)");
const JS_TRAMPOLINE = Uint8Array.of(
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00,
  0x01,
  0x0a,
  0x01,
  0x60,
  0x05,
  0x7f,
  0x7f,
  0x7f,
  0x7f,
  0x7f,
  0x01,
  0x7f, // (success, func, a, b, c) -> result
  0x02,
  0x0c,
  0x01,
  0x03,
  0x65,
  0x6e,
  0x76,
  0x04,
  0x63,
  0x61,
  0x6c,
  0x6c,
  0x00,
  0x00, // import env.call
  0x03,
  0x02,
  0x01,
  0x00,
  0x07,
  0x13,
  0x01,
  0x0f,
  ...new TextEncoder().encode("trampoline_call"),
  0x00,
  0x01,
  0x0a,
  0x10,
  0x01,
  0x0e,
  0x00,
  0x20,
  0x00,
  0x20,
  0x01,
  0x20,
  0x02,
  0x20,
  0x03,
  0x20,
  0x04,
  0x10,
  0x00,
  0x0b, // env.call(...)
);
const wasm = { Module: WebAssembly.Module, Instance: WebAssembly.Instance };
let jsTrampoline = null;
let trampolineAdded = false;
function TrampolineModule(bytes, ...rest) {
  try {
    return new wasm.Module(bytes, ...rest);
  } catch (error) {
    if (
      !ArrayBuffer.isView(bytes) ||
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex") !== trampolineHex
    ) {
      throw error;
    }
    jsTrampoline ??= new wasm.Module(JS_TRAMPOLINE);
    return jsTrampoline;
  }
}
function TrampolineInstance(module, imports) {
  if (module !== jsTrampoline || !jsTrampoline) return new wasm.Instance(module, imports);
  const table = imports.env.__indirect_function_table;
  trampolineAdded = true;
  // As the runtime's JavaScript fallback (_PyEM_TrampolineCall_inner): `success` stays as set.
  return new wasm.Instance(module, { env: { call: (_success, f, a, b, c) => table.get(f)(a, b, c) } });
}
for (const [shim, native] of [
  [TrampolineModule, wasm.Module],
  [TrampolineInstance, wasm.Instance],
]) {
  Object.setPrototypeOf(shim, native); // its static functions (WebAssembly.Module.customSections...)
  shim.prototype = native.prototype; // instanceof
}

const lock = JSON.parse(readFileSync(new URL("pyodide/pyodide-lock.json", site), "utf8"));
const manifest = {
  index_url: "pyodide/",
  stdlib: "pyodide/python_stdlib_bytecode.zip",
  site_packages: file("pyodide/site-packages.bin"),
  wheels: Object.values(lock.packages).map(({ name }) => ({ name })),
};
const siteUrl = (path) => new URL(path, site).href;
const indexURL = `${join(resolve(siteArg), "pyodide")}/`;
const unpacking = startUnpacking(manifest, siteUrl);
const { loadPyodide } = await import(siteUrl("pyodide/pyodide.js"));
WebAssembly.Module = TrampolineModule;
WebAssembly.Instance = TrampolineInstance;
const pyodide = await loadPyodide({
  indexURL,
  lockFileURL: join(indexURL, "pyodide-lock.json"),
  packageBaseUrl: indexURL,
  stdLibURL: new URL(stdlibOptions(manifest, siteUrl).stdLibURL).pathname,
  env: { ...PYTHON_ENV, LANG: "C.UTF-8" },
  _makeSnapshot: true,
  stdout: () => {},
  stderr: (line) => console.error(line),
});
Object.assign(WebAssembly, wasm);
if (!jsTrampoline && !trampolineAdded) {
  // This Node.js has the feature (a later version): the runtime's own trampoline is in the table.
} else if (!trampolineAdded) {
  throw new Error("the runtime did not instantiate its call trampoline");
}
const tableAtStart = pyodide._module.wasmTable.length;
const { meta, bytes } = await makeSnapshotOf(pyodide, { tableAtStart, unpacking, manifest, version: null });
// Python may hold references to JavaScript objects only through Pyodide's own API: the snapshot
// records any other by its path from globalThis, which in a page would be the page's object of
// that name, or nothing (a snapshot that references one is not shipped).
const header = new Uint32Array(bytes.buffer, bytes.byteOffset, 12);
const { hiwireKeys } = JSON.parse(new TextDecoder().decode(bytes.subarray(48, 48 + header[2])));
if (hiwireKeys.some((key) => key !== null && !key.API && !key.abortSignalAny)) {
  throw new Error(`the snapshot references JavaScript objects of Node.js: ${JSON.stringify(hiwireKeys)}`);
}
writeFileSync(outArg, gzipSync(bytes, { level: 9 }));
writeFileSync(recordArg, JSON.stringify(meta));
