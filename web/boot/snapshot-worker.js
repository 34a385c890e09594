// @ts-check
// Makes the memory snapshot that later visits restore (snapshot.js), in a worker of its own, once
// the page is ready: the first visit does not wait for it. A Pyodide of its own, from the same
// files (the page's standard library zip too), started with `_makeSnapshot`, installs
// site-packages.bin as the page does (fetched with its sha256 as Subresource Integrity:
// unpack.js), imports py_agent and the app's Python modules as the page does and builds the
// validators a page builds on first use (snapshot.js makeSnapshotOf, as scripts/snapshot.mjs does
// at build time); then the snapshot, with the record of its dynamic libraries, goes into Cache
// Storage, in the cache of this version of the site (sw.js deletes it with that version).
//
// Message in: SnapshotRequest; message out: SnapshotReply (web/boot/messages.js).

import { acceptAnyWasmType, hideStackSwitching, PYTHON_ENV, stdlibOptions } from "./runtime.js";
import { makeSnapshotOf, snapshotResponse } from "./snapshot.js";
import { startUnpacking } from "./unpack.js";

/** @typedef {import("./messages.js").SnapshotRequest} SnapshotRequest */
/** @typedef {import("./messages.js").SnapshotReply} SnapshotReply */

acceptAnyWasmType(); // .wasm served as application/octet-stream
hideStackSwitching(); // as for the page's Pyodide (runtime.js)

/**
 * @param {SnapshotReply} reply
 */
const reply = (reply) => /** @type {any} */ (self).postMessage(reply);

/** @param {MessageEvent<SnapshotRequest>} event */
self.onmessage = async ({ data }) => {
  const { site, manifest, version, cacheName, key } = data;
  try {
    if (!manifest.site_packages) throw new Error("the site has no site-packages.bin");
    const siteUrl = (path) => new URL(path, site).href;
    const indexURL = siteUrl(manifest.index_url);
    const unpacking = startUnpacking(manifest, siteUrl);
    const { loadPyodide } = await import(`${indexURL}pyodide.js`);
    const pyodide = await loadPyodide({
      indexURL,
      lockFileURL: siteUrl(manifest.lock_file),
      packageBaseUrl: indexURL,
      ...stdlibOptions(manifest, siteUrl), // the page's zip: the snapshot holds zipimport's index of it
      env: { ...PYTHON_ENV },
      _makeSnapshot: true,
      stdout: () => {},
      stderr: (line) => console.warn(line),
    });
    const tableAtStart = pyodide._module.wasmTable.length;
    const snapshot = await makeSnapshotOf(pyodide, { tableAtStart, unpacking, manifest, version });
    const cache = await caches.open(cacheName);
    await cache.put(key, snapshotResponse(snapshot));
    reply({ ok: true, size: snapshot.bytes.length });
  } catch (error) {
    reply({ ok: false, error: String(error?.message ?? error) });
  }
};
