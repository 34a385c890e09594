// @ts-check
// The memory snapshot that later visits restore, explained in docs/boot.md ("The memory snapshot"):
// making it (makeSnapshotOf: in snapshot-worker.js once the app is ready, and in
// scripts/snapshot.mjs when the site is built), finding it (findSnapshot: kept in Cache Storage
// under __sw__/snapshot, its record in the x-py-agent-snapshot header; shippedSnapshot: shipped
// with the site) and restoring it (restoreOptions, afterRestore). What Pyodide's own snapshot
// leaves out is handled here: pydantic-core's WebAssembly library, put back at the addresses the
// record keeps (pyodide#5195), and the memory's size (pyodide#6254).

import "./bytes.js";
import { installPackageFiles } from "./install.js";
import { bootPython } from "./runtime.js";

/** @typedef {import("./messages.js").SnapshotMeta} SnapshotMeta */
/** @typedef {import("./messages.js").FoundSnapshot} FoundSnapshot */
/** @typedef {import("./messages.js").Manifest} Manifest */
/** @typedef {import("./runtime.js").Pyodide} Pyodide */

const { base64 } = pyAgentBytes;

export const SNAPSHOT_KIND = "py-agent-snapshot 4";
export const SNAPSHOT_PATH = "__sw__/snapshot";
const HEADER = "x-py-agent-snapshot";
const SITE_PACKAGES = "/lib/python3.14/site-packages/";

// FNV-1a, for the table's digest and the snapshot's checksum (below).
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

// A digest of the function table from `start` on, and of the GOT (what the dynamic loader set up):
// a restore must reproduce them exactly. Numbers and short names only: it runs once per page, in
// V8's interpreter.
function tableDigest(module, start) {
  let h = FNV_OFFSET;
  const mix = (n) => {
    h = Math.imul(h ^ (n | 0), FNV_PRIME) >>> 0;
  };
  for (let i = start; i < module.wasmTable.length; i++) {
    const f = module.wasmTable.get(i);
    mix(f ? Number(f.name) + 1 : 0);
    mix(f ? f.length : -1);
  }
  const got = module.GOT;
  const names = Object.keys(got).sort();
  mix(names.length);
  for (const name of names) {
    mix(name.length);
    mix(name.charCodeAt(0) | (name.charCodeAt(name.length - 1) << 8));
    mix(got[name].value);
  }
  return h.toString(16);
}

// ---- Making it (snapshot-worker.js) ----

/**
 * The record of the dynamic libraries loaded since the runtime started (`tableAtStart`: the
 * function table's length then). Throws when a library cannot be restored.
 * @param {Pyodide} pyodide
 * @param {number} tableAtStart
 */
export function recordLibraries(pyodide, tableAtStart) {
  const module = pyodide._module;
  const libraries = [];
  for (const [key, dso] of Object.entries(module.LDSO.loadedLibsByHandle)) {
    const handle = Number(key);
    if (!handle) continue;
    if (!dso.name.startsWith(SITE_PACKAGES)) throw new Error(`unexpected dynamic library ${dso.name}`);
    libraries.push({
      name: dso.name,
      path: dso.name.slice(SITE_PACKAGES.length),
      handle,
      global: dso.global,
      memoryBase: module.HEAPU32[(handle + 12) >> 2],
      memorySize: module.HEAP32[(handle + 16) >> 2],
      tableBase: module.HEAPU32[(handle + 20) >> 2],
      tableSize: module.HEAP32[(handle + 24) >> 2],
    });
  }
  const named = Object.keys(module.LDSO.loadedLibsByName).filter((n) => n !== "__main__");
  if (named.length !== libraries.length) throw new Error("a dynamic library was loaded without a handle");
  if (module.freeTableIndexes?.length) throw new Error("the function table has free slots");
  return {
    tableAtStart,
    tableLength: module.wasmTable.length,
    table: tableDigest(module, tableAtStart),
    heap: module.HEAP8.length,
    libraries,
  };
}

/**
 * The memory snapshot of a Pyodide started with `_makeSnapshot` (just now: `tableAtStart` is its
 * function table's length then), once it has installed the unpacked site-packages.bin
 * (`unpacking`: startUnpacking's), imported py_agent and the app's Python modules and built the
 * validators a page builds on first use (py_agent/browser/boot.py import_app, warm):
 * {meta, bytes} (takeSnapshot). Made so by the page's worker (snapshot-worker.js) and by the build
 * (scripts/snapshot.mjs), which must make the same snapshot.
 * @param {Pyodide} pyodide
 * @param {{tableAtStart: number, unpacking: import("./unpack.js").Unpacking, manifest: Manifest, version: string | null}} options
 * @returns {Promise<{meta: SnapshotMeta, bytes: Uint8Array}>}
 */
export async function makeSnapshotOf(pyodide, { tableAtStart, unpacking, manifest, version }) {
  // The libraries are loaded from their files by dlopen (no module compiled beforehand: that
  // path instantiates them without a dlopen handle, where the loader records their bases).
  const archives = await Promise.all(
    unpacking.archives.map(async ({ files, dynlibs }) => ({
      files: await files,
      dynlibs: (await dynlibs).map(({ path }) => ({ path, module: null })),
    })),
  );
  await installPackageFiles(
    pyodide,
    archives,
    manifest.wheels.map((w) => w.name),
  );
  bootPython(pyodide, "import_app");
  bootPython(pyodide, "warm");
  if (!manifest.site_packages) throw new Error("the site has no site-packages.bin");
  return takeSnapshot(pyodide, { tableAtStart, version, bundleSha256: manifest.site_packages.sha256 });
}

/**
 * Takes the snapshot of a Pyodide started with `_makeSnapshot` that has its packages installed and
 * imported. Returns {meta, bytes} (meta: the record stored beside it).
 * @param {Pyodide} pyodide
 * @param {{tableAtStart: number, version: string | null, bundleSha256: string}} options
 * @returns {Promise<{meta: SnapshotMeta, bytes: Uint8Array}>}
 */
export async function takeSnapshot(pyodide, { tableAtStart, version, bundleSha256 }) {
  const record = recordLibraries(pyodide, tableAtStart);
  // What is alive now lives as long as the page: out of the collector's way (else the first
  // collection after a restore walks every object of every imported module).
  bootPython(pyodide, "freeze");
  // Pyodide refuses a snapshot once its list of loaded packages is not empty (pyodide#5195): the
  // libraries are handled here. The list goes back into the record, and into the restored page.
  const loaded = pyodide.loadedPackages;
  const packages = { ...loaded };
  for (const name of Object.keys(packages)) delete loaded[name];
  let bytes;
  try {
    bytes = pyodide.makeMemorySnapshot();
  } finally {
    Object.assign(loaded, packages);
  }
  const meta = {
    kind: SNAPSHOT_KIND,
    version,
    bundle: bundleSha256,
    size: bytes.length,
    checksum: checksum(bytes),
    packages,
    ...record,
  };
  return { meta, bytes };
}

/**
 * The Response that keeps a snapshot in Cache Storage: its bytes, its record in a header.
 * @param {{meta: SnapshotMeta, bytes: Uint8Array}} snapshot
 */
export function snapshotResponse({ meta, bytes }) {
  return new Response(/** @type {BodyInit} */ (bytes), {
    headers: { "content-type": "application/octet-stream", [HEADER]: JSON.stringify(meta) },
  });
}

// ---- Restoring it (boot.js) ----

/**
 * The snapshot kept in `cache` under `key` for this site (`version`, site-packages.bin's
 * `bundleSha256`): null when there is none; {stale: reason} when it does not belong to this build
 * (deleted); else {meta, bytes, read}: `bytes` is a buffer of the snapshot's size that is being
 * filled, `read` a promise that resolves once it is filled and its checksum checked, and rejects
 * otherwise.
 * @param {Cache} cache
 * @param {string} key
 * @param {{version: string, bundleSha256: string}} build
 * @returns {Promise<import("./messages.js").SnapshotLookup>}
 */
export async function findSnapshot(cache, key, { version, bundleSha256 }) {
  const response = await cache.match(key);
  if (!response) return null;
  let meta;
  try {
    meta = JSON.parse(response.headers.get(HEADER) ?? "null");
  } catch {
    meta = null;
  }
  let stale = null;
  if (meta?.kind !== SNAPSHOT_KIND) stale = "a snapshot of another kind";
  else if (meta.version !== version || meta.bundle !== bundleSha256) stale = "a snapshot of another build of the site";
  else if (!(meta.size > 0) || !Number.isSafeInteger(meta.size) || !Array.isArray(meta.libraries)) {
    stale = "a damaged snapshot record";
  }
  if (stale) {
    response.body?.cancel().catch(() => {});
    await cache.delete(key).catch(() => {});
    return { stale };
  }
  const bytes = new Uint8Array(meta.size);
  const read = (async () => {
    if ((await fill(bytes, response.body)) !== meta.checksum) throw new Error("the snapshot is damaged (checksum)");
  })();
  read.catch(() => {}); // reported by whoever restores it
  return { meta, bytes, read, source: "kept" };
}

// Reads `stream` into `bytes` (a buffer of its own, at offset 0), which it must fill exactly;
// returns their checksum, summed as they arrive.
async function fill(bytes, stream) {
  const reader = stream.getReader();
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4));
  let sum = FNV_OFFSET;
  let at = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (at + value.length > bytes.length) throw new Error("the snapshot is longer than its record says");
    bytes.set(value, at);
    sum = sumWords(words, Math.floor(at / 4), Math.floor((at + value.length) / 4), sum);
    at += value.length;
  }
  if (at !== bytes.length) throw new Error(`the snapshot is truncated (${at} of ${bytes.length} bytes)`);
  return checksumTail(bytes, sum);
}

// A snapshot's checksum: FNV-1a over its 32-bit (little-endian) words, then over its last bytes,
// as 8 hex digits. It tells a damaged copy from the one taken (Cache Storage keeps what it is
// given, unchecked), and is summed as the bytes arrive: a SHA-256 of the 38 MB once read took
// ~100 ms more, on the way to ready (BENCHMARKS.md, "Time to ready").
/**
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function checksum(bytes) {
  const own = bytes.byteOffset % 4 ? bytes.slice() : bytes;
  const words = new Uint32Array(own.buffer, own.byteOffset, Math.floor(own.byteLength / 4));
  return checksumTail(own, sumWords(words, 0, words.length, FNV_OFFSET));
}

/**
 * @param {Uint32Array} words
 * @param {number} from
 * @param {number} to
 * @param {number} sum
 */
function sumWords(words, from, to, sum) {
  let h = sum;
  for (let i = from; i < to; i++) h = Math.imul(h ^ words[i], FNV_PRIME);
  return h;
}

/**
 * @param {Uint8Array} bytes
 * @param {number} sum over their whole words
 */
function checksumTail(bytes, sum) {
  let h = sum;
  for (let i = bytes.length - (bytes.length % 4); i < bytes.length; i++) h = Math.imul(h ^ bytes[i], FNV_PRIME);
  return (h >>> 0).toString(16).padStart(8, "0");
}

/**
 * The snapshot shipped with the site (manifest.snapshot: made when the site was built, by
 * scripts/snapshot.mjs), for a visit with no kept snapshot: null when the site has none;
 * {stale: reason} when its record does not belong to this build; else {meta, bytes, read} as
 * findSnapshot's. The file is fetched with its sha256 as Subresource Integrity (the browser
 * rejects bytes whose hash differs) and inflated (gzip) into `bytes`.
 * @param {Manifest} manifest
 * @param {(path: string) => string} siteUrl
 * @returns {import("./messages.js").SnapshotLookup}
 */
export function shippedSnapshot(manifest, siteUrl) {
  const shipped = manifest.snapshot;
  if (!shipped) return null;
  const meta = shipped.record;
  let stale = null;
  if (meta?.kind !== SNAPSHOT_KIND) stale = "a shipped snapshot of another kind";
  else if (meta.bundle !== manifest.site_packages?.sha256) stale = "a shipped snapshot of another build of the site";
  else if (!(meta.size > 0) || !Number.isSafeInteger(meta.size) || !Array.isArray(meta.libraries)) {
    stale = "a damaged shipped snapshot record";
  }
  if (stale) return { stale };
  const bytes = new Uint8Array(meta.size);
  const read = (async () => {
    const response = await fetch(siteUrl(shipped.file), { integrity: `sha256-${base64(shipped.sha256)}` });
    if (!response.ok) throw new Error(`${shipped.file}: HTTP ${response.status}`);
    await fill(bytes, response.body.pipeThrough(new DecompressionStream("gzip")));
  })();
  read.catch(() => {}); // reported by whoever restores it
  return { meta, bytes, read, source: "shipped" };
}

/**
 * loadPyodide options that restore `snapshot` (findSnapshot). Pyodide's `_loadSnapshot` gets the
 * buffer at once (so that it does not wait for it before instantiating the runtime), and a
 * createPyodideModule that, once the runtime's instance exists and the buffer is filled and
 * checked, and before Pyodide copies it into the memory: grows the memory to the snapshot's size,
 * checks the function table and the libraries' bases, and puts each library back at its bases.
 * `libraries(path)`: a promise of the compiled WebAssembly.Module of that library.
 * @param {FoundSnapshot} snapshot
 * @param {string} asmUrl
 * @param {(path: string) => Promise<WebAssembly.Module | null>} libraries
 * @param {() => void} [onInstance]
 */
export async function restoreOptions(snapshot, asmUrl, libraries, onInstance = () => {}) {
  const { default: createPyodideModule } = await import(asmUrl);
  const { meta, bytes, read } = snapshot;
  const compiled = Promise.all(meta.libraries.map((lib) => libraries(lib.path)));
  compiled.catch(() => {});
  return {
    _loadSnapshot: bytes,
    createPyodideModule: async (settings) => {
      const module = await createPyodideModule(settings);
      onInstance();
      const [modules] = await Promise.all([compiled, read]);
      if (module.HEAP8.length < meta.heap && !module.growMemory(meta.heap)) {
        throw new Error("the memory could not grow to the snapshot's size");
      }
      checkBases(meta, bytes);
      if (module.wasmTable.length !== meta.tableAtStart) {
        throw new Error(
          `the function table starts at ${module.wasmTable.length}, the snapshot's at ${meta.tableAtStart}`,
        );
      }
      meta.libraries.forEach((lib, i) => {
        reinstantiate(module, modules[i], lib);
      });
      return module;
    },
  };
}

// The dynamic loader wrote each library's bases into its dlopen handle, in the snapshot's memory:
// they must be the ones in the record.
function checkBases(meta, bytes) {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2);
  const heap = words[1] >> 2; // Pyodide's header: magic, then the offset of the memory
  if (bytes.byteLength - words[1] !== meta.heap) throw new Error("the snapshot's memory is not the recorded size");
  for (const lib of meta.libraries) {
    const at = heap + (lib.handle >> 2);
    if (
      words[at + 3] !== lib.memoryBase ||
      words[at + 4] !== lib.memorySize ||
      words[at + 5] !== lib.tableBase ||
      words[at + 6] !== lib.tableSize
    ) {
      throw new Error(`${lib.path}: the snapshot's memory does not match its record`);
    }
  }
}

// Emscripten's loadWebAssemblyModule (pyodide.asm.js), at the recorded memory and table base,
// without applying data relocations or running constructors: the snapshot's memory is the result.
function reinstantiate(module, wasmModule, lib) {
  if (!wasmModule) throw new Error(`${lib.path} did not compile`);
  const metadata = module.getDylinkMetadata(wasmModule);
  if (metadata.memorySize !== lib.memorySize || metadata.tableSize !== lib.tableSize) {
    throw new Error(
      `${lib.path} is not the library the snapshot was taken with ` +
        `(memory ${metadata.memorySize}, table ${metadata.tableSize}: recorded ${lib.memorySize}, ${lib.tableSize})`,
    );
  }
  if (metadata.neededDynlibs.length) throw new Error(`${lib.path} needs other libraries`);
  if (module.wasmTable.length !== lib.tableBase) {
    throw new Error(`${lib.path}: the function table is at ${module.wasmTable.length}, expected ${lib.tableBase}`);
  }
  module.wasmTable.grow(metadata.tableSize);
  const main = module.LDSO.loadedLibsByName.__main__.exports;
  let exports;
  const resolve = (name) => (module.isSymbolDefined(name) ? main[name] : undefined) ?? exports?.[name];
  const env = new Proxy(
    {},
    {
      get(stubs, name) {
        if (name === "__memory_base") return lib.memoryBase;
        if (name === "__table_base") return lib.tableBase;
        if (name in main && !main[name].stub) return main[name];
        if (!(name in stubs)) {
          let resolved;
          stubs[name] = (...args) => {
            resolved ||= resolve(name);
            if (!resolved) throw new Error(`Dynamic linking error: cannot resolve symbol ${String(name)}`);
            return resolved(...args);
          };
        }
        return stubs[name];
      },
    },
  );
  const got = new Proxy(metadata.weakImports, module.GOTHandler);
  const entry = module.newDSO(lib.name, lib.handle, "loading");
  entry.refcount = Infinity;
  entry.global = lib.global;
  const instance = new WebAssembly.Instance(wasmModule, {
    "GOT.mem": got,
    "GOT.func": got,
    env,
    wasi_snapshot_preview1: env,
  });
  module.updateTableMap(lib.tableBase, metadata.tableSize);
  exports = module.relocateExports(instance.exports, lib.memoryBase);
  if ("__start_em_asm" in exports || Object.keys(exports).some((k) => k.startsWith("__em_js__"))) {
    throw new Error(`${lib.path} has EM_ASM/EM_JS code`);
  }
  module.updateGOT(exports);
  module.reportUndefinedSymbols();
  if (lib.global) module.mergeLibSymbols(exports, lib.name);
  entry.exports = exports;
}

/**
 * Right after a restoring loadPyodide: checks that the function table and the GOT are the
 * snapshot's, lists the loaded packages again, gives `random` a fresh seed (every restore starts
 * from the same memory), and checks that pydantic-core answers. Throws on any mismatch: the caller
 * then starts Python normally.
 * @param {Pyodide} pyodide
 * @param {FoundSnapshot} snapshot
 */
export function afterRestore(pyodide, { meta }) {
  const module = pyodide._module;
  if (
    module.freeTableIndexes?.length ||
    module.wasmTable.length !== meta.tableLength ||
    tableDigest(module, meta.tableAtStart) !== meta.table
  ) {
    throw new Error("the restored function table differs from the snapshot's");
  }
  Object.assign(pyodide.loadedPackages, meta.packages);
  // The C library's time zone (offsets and names, which localtime() hands out) is in the memory, set
  // where the snapshot was made: set again from this browser's, as the runtime's start does.
  const tzset = module.LDSO.loadedLibsByName.__main__.exports._tzset_js;
  if (tzset && module._tzname) {
    const names = module._tzname >> 2;
    tzset(module._timezone, module._daylight, module.HEAPU32[names], module.HEAPU32[names + 1]);
  }
  // random's seed, the time module's zone, the runtime's name: this browser's; pydantic-core answers.
  bootPython(pyodide, "after_restore", String(globalThis.navigator?.userAgent ?? ""));
}
