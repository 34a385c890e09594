// @ts-check
// What the page's start, its workers and the service worker share: the cache-name prefix of the
// site's versions, and bytes written as hex or base64. Written once, here: web/sw.js is a classic
// script (a module service worker is not in every browser this site supports) and loads this file
// with importScripts, the modules of web/boot/ import it. So it has no import or export, and it
// sets one global, `pyAgentBytes` (the rest stays inside the function).

// The one global this file sets (a `var`: web/sw.js reads it after importScripts).
var pyAgentBytes = (() => {
  /** The site's caches: one per version of the site, `CACHE_PREFIX + <SHA-256 of manifest.json>`. */
  const CACHE_PREFIX = "py-agent-site-";

  /**
   * @param {ArrayBuffer | ArrayBufferView} buffer
   * @returns {string} the bytes as lowercase hex
   */
  function hex(buffer) {
    const bytes = ArrayBuffer.isView(buffer)
      ? new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
      : new Uint8Array(buffer);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  /**
   * @param {string} hexText bytes as hex (a sha256 from manifest.json)
   * @returns {string} the same bytes in base64 (as Subresource Integrity writes a hash)
   */
  function base64(hexText) {
    const pairs = hexText.match(/../g) ?? [];
    return btoa(String.fromCharCode(...pairs.map((h) => parseInt(h, 16))));
  }

  /**
   * @param {ArrayBuffer | ArrayBufferView} bytes
   * @returns {Promise<string>} their SHA-256, as hex
   */
  async function sha256(bytes) {
    return hex(await crypto.subtle.digest("SHA-256", /** @type {BufferSource} */ (bytes)));
  }

  /**
   * The runtime's WebAssembly, which a later visit reads from the browser's HTTP cache rather than
   * from the service worker's Cache Storage: Chromium keeps V8's compiled code of a WebAssembly
   * module it fetched through the HTTP cache, not of one a service worker answered, and Python
   * then runs that code from the start (BENCHMARKS.md, "Time to ready"). Under a URL of its own
   * version (versionedPath), which the service worker leaves to the browser.
   */
  const HTTP_CACHED = "pyodide/pyodide.asm.wasm";

  /**
   * @param {string} path a site path
   * @param {string} sha256Hex its sha256 in manifest.json
   * @returns {string} the path with its version: `<path>?v=<the first 16 hex digits of its sha256>`
   */
  function versionedPath(path, sha256Hex) {
    return `${path}?v=${sha256Hex.slice(0, 16)}`;
  }

  return Object.freeze({ CACHE_PREFIX, HTTP_CACHED, hex, base64, sha256, versionedPath });
})();
globalThis.pyAgentBytes = pyAgentBytes;
