// Makes the memory snapshot that later visits restore (see fastboot.js), in a worker of its own,
// once the page is ready: the first visit does not wait for it. A Pyodide of its own, from the
// same files, started with `_makeSnapshot`; the standard library modules that installing and
// importing py_agent need are imported; then pyodide.makeMemorySnapshot() goes into Cache
// Storage, in the cache of this version of the site (sw.js deletes it with that version).
//
// Message in: {indexURL, lockFileURL, env, cacheName, key, preimport: [module names]}.
// Message out: {ok: true, size} or {ok: false, error}.

self.onmessage = async ({ data }) => {
  const { indexURL, lockFileURL, env, cacheName, key, preimport } = data;
  try {
    const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
    const pyodide = await loadPyodide({
      indexURL,
      lockFileURL,
      packageBaseUrl: indexURL,
      env,
      _makeSnapshot: true,
      stdout: () => {},
      stderr: (line) => console.warn(line),
    });
    // A name that no longer exists is skipped.
    pyodide.runPython(`
import importlib as _i
for _m in ${JSON.stringify(preimport)}:
    try:
        _i.import_module(_m)
    except ModuleNotFoundError:
        pass
del _i, _m
`);
    const bytes = pyodide.makeMemorySnapshot();
    const cache = await caches.open(cacheName);
    await cache.put(key, new Response(bytes, { headers: { "content-type": "application/octet-stream" } }));
    self.postMessage({ ok: true, size: bytes.length });
  } catch (error) {
    self.postMessage({ ok: false, error: String(error?.message ?? error) });
  }
};
