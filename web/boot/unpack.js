// @ts-check
// The site's packages, fetched and unpacked in JavaScript while Python starts (used by boot.js;
// install.js writes them into site-packages).
//
// Pyodide's loadPackage would unzip each wheel with Python's zipfile (inflating in WebAssembly)
// once Python has started. Instead build.py ships site-packages.bin (scripts/site_packages.mjs):
// the packages already installed and byte-compiled, one gzip'd bundle that is fetched with its
// sha256 as Subresource Integrity (the browser rejects bytes whose hash differs) and inflated by
// the browser (DecompressionStream) as soon as it has arrived; once Python runs, installing is
// writing its files. A site built without Node.js has no bundle: the wheels themselves are
// fetched (SRI too) and unzipped here. pydantic-core's WebAssembly library is compiled
// (WebAssembly.compile) as soon as it is there and the runtime's own compilation is over.

import "./bytes.js";

const { base64 } = pyAgentBytes;

/** @typedef {import("./messages.js").Manifest} Manifest */
/** @typedef {[path: string, data: Uint8Array]} FileEntry */
/** @typedef {{path: string, module: Promise<WebAssembly.Module | null>}} Dynlib */
/**
 * The packages being fetched and unpacked (startUnpacking).
 * @typedef {{archives: {source: {file: string, sha256: string}, files: Promise<FileEntry[]>, dynlibs: Promise<Dynlib[]>}[], compile: () => void}} Unpacking
 */

const ZIP_END = 0x06054b50;
const ZIP_CENTRAL = 0x02014b50;
const ZIP_LOCAL = 0x04034b50;

/**
 * @param {Uint8Array} data
 * @param {CompressionFormat} format
 * @returns {Promise<Uint8Array>}
 */
export async function inflate(data, format) {
  // Written straight into the stream (a Blob's stream would go through the browser's blob store).
  const stream = new DecompressionStream(format);
  const writer = stream.writable.getWriter();
  writer.write(/** @type {BufferSource} */ (data)).catch(() => {}); // an error is the readable side's too
  writer.close().catch(() => {});
  return new Uint8Array(await new Response(stream.readable).arrayBuffer());
}

/**
 * The files of a zip archive (a wheel): [[path, bytes], ...], inflated; directories left out.
 * @param {Uint8Array} bytes
 * @returns {Promise<FileEntry[]>}
 */
export async function unzip(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = bytes.length - 22;
  while (end >= 0 && view.getUint32(end, true) !== ZIP_END) end -= 1;
  if (end < 0) throw new Error("not a zip archive");
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  const decoder = new TextDecoder();
  const entries = [];
  for (let i = 0; i < count; i += 1) {
    if (view.getUint32(at, true) !== ZIP_CENTRAL) throw new Error("damaged zip directory");
    const method = view.getUint16(at + 10, true);
    const packed = view.getUint32(at + 20, true);
    const size = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const local = view.getUint32(at + 42, true);
    const path = decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength));
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    if (path.endsWith("/")) continue;
    if (path.startsWith("/") || path.split("/").includes("..")) throw new Error(`unsafe path in archive: ${path}`);
    if (view.getUint32(local, true) !== ZIP_LOCAL) throw new Error(`damaged zip entry: ${path}`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    entries.push({ path, method, size, data: bytes.subarray(start, start + packed) });
  }
  return Promise.all(
    entries.map(async ({ path, method, size, data }) => {
      let content;
      if (method === 0) content = data.slice();
      else if (method === 8) content = await inflate(data, "deflate-raw");
      else throw new Error(`${path}: unsupported zip compression method ${method}`);
      if (content.length !== size) throw new Error(`${path}: ${content.length} bytes, expected ${size}`);
      return [path, content];
    }),
  );
}

// What Pyodide loads as a dynamic library from a wheel (an extension module).
/** @param {string} path */
export const isDynlib = (path) => /\.so(\.\d+)*$/.test(path);

/**
 * @param {string} url
 * @param {string} sha256 hex, as manifest.json writes it
 * @returns {Promise<Uint8Array>}
 */
export async function fetchChecked(url, sha256) {
  const response = await fetch(url, { integrity: `sha256-${base64(sha256)}` });
  if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * The files of site-packages.bin: "py-agent-site-packages 1\n" + JSON [[path, size], ...] + "\n" +
 * the files' bytes, gzip'd. [[path, bytes], ...] (views of its one buffer).
 * @param {Uint8Array} bytes
 */
async function readBundle(bytes) {
  return bundleFiles(await inflate(bytes, "gzip"));
}

/**
 * The files of site-packages.bin's inflated bytes `raw` (readBundle).
 * @param {Uint8Array} raw
 * @returns {FileEntry[]}
 */
export function bundleFiles(raw) {
  const first = raw.indexOf(10);
  const second = raw.indexOf(10, first + 1);
  const decoder = new TextDecoder();
  if (decoder.decode(raw.subarray(0, first)) !== "py-agent-site-packages 1") throw new Error("unknown format");
  let offset = second + 1;
  return JSON.parse(decoder.decode(raw.subarray(first + 1, second))).map(([path, size]) => {
    const data = raw.subarray(offset, offset + size);
    offset += size;
    if (data.length !== size) throw new Error(`${path}: truncated`);
    return [path, data];
  });
}

/**
 * Starts fetching and unpacking what installs the site's packages: site-packages.bin, or each
 * wheel. Returns {archives: [{source, files, dynlibs}], compile} where `source` is the manifest's
 * entry, `files` a promise of [[path, bytes], ...] or of an error (its `status`: the HTTP status
 * when the server answered), `dynlibs` a promise of [{path, module}] (module: a promise of the
 * compiled WebAssembly.Module, or of null), and compile() says the runtime's WebAssembly is
 * compiled (libraries are compiled after it, not to slow it down). `ahead`: a promise of what
 * web/boot/read-ahead.js read of site-packages.bin ({raw, sha256} or {error}), or null.
 * @param {Manifest} manifest
 * @param {(path: string) => string} siteUrl
 * @param {(name: string) => void} [mark] a point of the boot (web/boot/boot.js's marks)
 * @param {Promise<{raw?: Uint8Array, sha256?: string, error?: string}> | null} [ahead]
 * @returns {Unpacking}
 */
export function startUnpacking(manifest, siteUrl, mark = () => {}, ahead = null) {
  /** @type {() => void} */
  let compile = () => {};
  /** @type {Promise<void>} */
  const compileWhen = new Promise((resolve) => {
    compile = resolve;
  });
  const bundle = manifest.site_packages;
  const sources = bundle ? [bundle] : manifest.wheels;
  const archives = sources.map((source) => {
    const unpack = () =>
      fetchChecked(siteUrl(source.file), source.sha256).then((bytes) => {
        mark(`${source.file} arrived`);
        return bundle ? readBundle(bytes) : unzip(bytes);
      });
    // The bundle as web/boot/read-ahead.js read it, if it did: else read here (meeting what went wrong).
    const files =
      bundle && ahead
        ? ahead.then((read) => {
            if (!read.raw || read.sha256 !== source.sha256) return unpack();
            mark(`${source.file} read ahead`);
            return bundleFiles(read.raw);
          })
        : unpack();
    files.then(
      () => mark(`${source.file} unpacked`),
      () => {},
    );
    const dynlibs = files.then((list) =>
      list
        .filter(([path]) => isDynlib(path))
        .map(([path, data]) => {
          const module = compileWhen
            .then(() => WebAssembly.compile(/** @type {BufferSource} */ (data)))
            .catch(() => null);
          return { path, module }; // null: Pyodide compiles the installed file
        }),
    );
    files.catch(() => {}); // reported when the packages are installed
    dynlibs.catch(() => {});
    return { source, files, dynlibs };
  });
  return { archives, compile };
}
