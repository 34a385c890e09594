// Makes the memory snapshot that later visits restore (snapshot.js), in a worker of its own, once
// the page is ready: the first visit does not wait for it. A Pyodide of its own, from the same
// files (the page's standard library zip too), started with `_makeSnapshot`, installs site-packages.bin as the page does (fetched with
// its sha256 as Subresource Integrity: unpack.js), imports py_agent and the app's Python modules
// as the page does (fastboot.js, IMPORT_CODE), builds the validators a page builds on first use
// (WARM_CODE); then the snapshot, with the record of its dynamic
// libraries, goes into Cache Storage, in the cache of this version of the site (sw.js deletes it
// with that version).
//
// Message in: {site: the site's folder URL, manifest, version, cacheName, key}.
// Message out: {ok: true, size} or {ok: false, error}.

import { acceptAnyWasmType, PYTHON_ENV, snapshotAfterImport, startUnpacking, stdlibOptions } from "./fastboot.js";
import { snapshotResponse } from "./snapshot.js";

acceptAnyWasmType(); // .wasm served as application/octet-stream

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
    const snapshot = await snapshotAfterImport(pyodide, { tableAtStart, unpacking, manifest, version });
    const cache = await caches.open(cacheName);
    await cache.put(key, snapshotResponse(snapshot));
    self.postMessage({ ok: true, size: snapshot.bytes.length });
  } catch (error) {
    self.postMessage({ ok: false, error: String(error?.message ?? error) });
  }
};
