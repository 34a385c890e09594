// The core workload in Chromium. ?runtime=ref runs pi's agent (bundled by esbuild), ?runtime=py
// runs py_agent's bench/core_workload.py in Pyodide, from the site copy at ../site/.
// The result goes to window.benchResult; <html data-state> becomes "done" or "error".
const params = new URLSearchParams(location.search);
const deltas = Number(params.get("deltas") ?? 20000);
const repeats = Number(params.get("repeats") ?? 7);

async function reference() {
  const pi = await import("./pi-bundle.mjs");
  const { runWorkload } = await import("./core_reference_workload.mjs");
  return runWorkload(pi, deltas, repeats);
}

async function python() {
  const indexURL = new URL("../site/pyodide/", location.href).href;
  const { loadPyodide } = await import(`${indexURL}pyodide.js`);
  const pyodide = await loadPyodide({ indexURL, lockFileURL: `${indexURL}pyodide-lock.json`, packageBaseUrl: indexURL });
  await pyodide.loadPackage(["py-agent"], { messageCallback: () => {} });
  const source = await (await fetch("core_workload.py")).text();
  pyodide.FS.mkdirTree("/bench");
  pyodide.FS.writeFile("/bench/core_workload.py", source);
  pyodide.runPython("import sys; sys.path.insert(0, '/bench')");
  const json = await pyodide.runPythonAsync(
    `import json, core_workload\njson.dumps(await core_workload.run(${deltas}, ${repeats}))`,
  );
  return JSON.parse(json);
}

try {
  window.benchResult = { runs: await (params.get("runtime") === "py" ? python() : reference()) };
  document.documentElement.dataset.state = "done";
} catch (error) {
  window.benchResult = { error: String(error?.stack ?? error) };
  document.documentElement.dataset.state = "error";
}
