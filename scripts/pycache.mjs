#!/usr/bin/env node
// Byte-compiles the site's Python packages for Pyodide, so that the page imports them without
// compiling their sources (build.py runs this when Node.js is there; see build_pycache()).
//
//     node scripts/pycache.mjs SITE_DIR OUT_FILE
//
// SITE_DIR is a site being built (its pyodide/ holds the runtime, the wheels and the site's
// pyodide-lock.json). Pyodide (the same runtime, so the same bytecode format) installs every
// package of that lock and compiles each of their .py files with py_compile, as checked-hash .pyc
// files (Python compares a hash of the source before using one, so a .pyc can never stand in for
// other sources). OUT_FILE gets them as one gzip'd bundle, written deterministically:
//
//     "py-agent-pycache 1\n" + JSON [[path relative to site-packages, size], ...] + "\n" + the files' bytes
//
// web/fastboot.js unpacks it into site-packages after the wheels are installed.

import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [siteArg, outArg] = process.argv.slice(2);
if (!siteArg || !outArg) {
  console.error("usage: node scripts/pycache.mjs SITE_DIR OUT_FILE");
  process.exit(2);
}
const runtime = join(resolve(siteArg), "pyodide") + "/";
const { loadPyodide } = await import(pathToFileURL(join(runtime, "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  indexURL: runtime,
  lockFileURL: join(runtime, "pyodide-lock.json"),
  packageBaseUrl: runtime,
  stdout: () => {},
  stderr: (line) => console.error(line),
});
const lock = JSON.parse(readFileSync(join(runtime, "pyodide-lock.json"), "utf8"));
await pyodide.loadPackage(Object.keys(lock.packages), { messageCallback: () => {}, checkIntegrity: true });
const bundle = pyodide.runPython(`
import gzip, importlib.util, json, os, py_compile, sys, sysconfig, tempfile

site = sysconfig.get_paths()["purelib"]
files = []
with tempfile.TemporaryDirectory() as tmp:
    for folder, dirs, names in os.walk(site):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.endswith(".dist-info"))
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            source = os.path.join(folder, name)
            rel = os.path.relpath(importlib.util.cache_from_source(source), site)
            target = os.path.join(tmp, "x.pyc")
            try:
                py_compile.compile(source, cfile=target, dfile=source, doraise=True,
                                   invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            except py_compile.PyCompileError:
                continue  # a file that does not compile is compiled (and fails) at import, as before
            with open(target, "rb") as f:
                files.append((rel, f.read()))
index = json.dumps([[rel, len(data)] for rel, data in files], separators=(",", ":"))
raw = b"py-agent-pycache 1\\n" + index.encode() + b"\\n" + b"".join(data for _, data in files)
gzip.compress(raw, compresslevel=9, mtime=0)
`);
writeFileSync(outArg, bundle.toJs());
bundle.destroy();
