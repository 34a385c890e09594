#!/usr/bin/env node
// Installs the site's Python packages with the site's own Pyodide and byte-compiles them, into one
// bundle that the page writes into site-packages as it is (build.py runs this when Node.js is
// there; see build_site_packages()). So the page neither unzips the wheels nor compiles their
// sources.
//
//     node scripts/site_packages.mjs SITE_DIR OUT_FILE
//
// SITE_DIR is a site being built (its pyodide/ holds the runtime, the wheels and the site's
// pyodide-lock.json). Pyodide (the same runtime, so the same bytecode format) installs every
// package of that lock with loadPackage (checking each wheel's sha256) and compiles each of their
// .py files with py_compile, as checked-hash .pyc files (Python compares a hash of the source
// before using one, so a .pyc can never stand in for other sources). OUT_FILE gets every file of
// site-packages (the wheels' files, the .dist-info that loadPackage writes, the .pyc files, and
// _py_agent_stdlib/: see below) as one gzip'd bundle, written deterministically:
//
//     "py-agent-site-packages 1\n" + JSON [[path relative to site-packages, size], ...] + "\n" + the files' bytes
//
// web/unpack.js reads it; web/fastboot.js writes it into site-packages.

import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [siteArg, outArg] = process.argv.slice(2);
if (!siteArg || !outArg) {
  console.error("usage: node scripts/site_packages.mjs SITE_DIR OUT_FILE");
  process.exit(2);
}
const runtime = join(resolve(siteArg), "pyodide") + "/";
// The page's environment (web/fastboot.js, PYTHON_ENV), for the imports below.
const env = { PYDANTIC_DISABLE_PLUGINS: "__all__" };
const { loadPyodide } = await import(pathToFileURL(join(runtime, "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  indexURL: runtime,
  lockFileURL: join(runtime, "pyodide-lock.json"),
  packageBaseUrl: runtime,
  env,
  stdout: () => {},
  stderr: (line) => console.error(line),
});
const lock = JSON.parse(readFileSync(join(runtime, "pyodide-lock.json"), "utf8"));
await pyodide.loadPackage(Object.keys(lock.packages), { messageCallback: () => {}, checkIntegrity: true });
pyodide.runPython(`
import importlib.util, os, py_compile, sysconfig

site = sysconfig.get_paths()["purelib"]
for folder, dirs, names in os.walk(site):
    dirs[:] = [d for d in dirs if d != "__pycache__"]
    for name in names:
        if name.endswith(".py") and not folder.endswith(".dist-info"):
            source = os.path.join(folder, name)
            try:
                py_compile.compile(source, cfile=importlib.util.cache_from_source(source), dfile=source,
                                   doraise=True, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            except py_compile.PyCompileError:
                pass  # a file that does not compile is compiled (and fails) at import, as without the bundle
`);

// The standard library lives in a zip without bytecode: each of its modules that py_agent and the
// app import beyond what Pyodide imports at start is compiled from source at every boot. A fresh
// Pyodide with these packages (as the page has them) imports what the page imports; the top-level
// modules and packages it took from the zip beyond those of its start (and those the app's start
// imports: its plugins, the model catalogue) are then copied from the zip,
// with checked-hash .pyc files beside them, into site-packages/_py_agent_stdlib/, which the page
// puts before the zip on sys.path (web/boot.js).
const probe = await loadPyodide({ indexURL: runtime, env, stdout: () => {}, stderr: (line) => console.error(line) });
probe.runPython("import sys; _at_start = {name.partition('.')[0] for name in sys.modules}");
const site = pyodide._api.sitepackages;
(function copy(folder) {
  for (const name of pyodide.FS.readdir(folder)) {
    if (name === "." || name === "..") continue;
    const path = `${folder}/${name}`;
    if (pyodide.FS.isDir(pyodide.FS.stat(path).mode)) {
      probe.FS.mkdirTree(path);
      copy(path);
    } else probe.FS.writeFile(path, pyodide.FS.readFile(path));
  }
})(site);
const stdlib = probe.runPython(`
import sys
sys.dont_write_bytecode = True
import py_agent, pydantic, py_agent.web.main  # noqa: E401, F401
# What the app's start imports lazily (its plugins, the model catalogue: importlib.resources), as
# the snapshot's worker does too (web/fastboot.js, WARM_CODE).
try:
    from py_agent.web.plugins import load_plugins
    from py_agent.ai import models
    load_plugins()
    models._load()
except Exception:
    pass
zip_path = next(p for p in sys.path if p.endswith(".zip"))
sorted({
    name.partition(".")[0] for name, module in list(sys.modules.items())
    if name.partition(".")[0] not in _at_start
    and (getattr(getattr(module, "__spec__", None), "origin", None) or "").startswith(zip_path + "/")
})
`).toJs();

const bundle = pyodide.runPython(`
import gzip, importlib.util, json, os, py_compile, sys, sysconfig, zipfile

site = sysconfig.get_paths()["purelib"]
stdlib_dir = os.path.join(site, "_py_agent_stdlib")
top = set(${JSON.stringify(stdlib)})
zip_path = next(p for p in sys.path if p.endswith(".zip"))
with zipfile.ZipFile(zip_path) as z:
    for member in sorted(z.namelist()):
        first = member.partition("/")[0]
        if member.endswith(".py") and ((first in top and "/" in member) or member[:-3] in top):
            target = os.path.join(stdlib_dir, member)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(z.read(member))
            py_compile.compile(target, cfile=importlib.util.cache_from_source(target), dfile=f"{zip_path}/{member}",
                               doraise=True, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)

files = []
for folder, dirs, names in os.walk(site):
    dirs.sort()
    for name in sorted(names):
        path = os.path.join(folder, name)
        with open(path, "rb") as f:
            files.append((os.path.relpath(path, site), f.read()))
index = json.dumps([[rel, len(data)] for rel, data in files], separators=(",", ":"))
raw = b"py-agent-site-packages 1\\n" + index.encode() + b"\\n" + b"".join(data for _, data in files)
gzip.compress(raw, compresslevel=9, mtime=0)
`);
writeFileSync(outArg, bundle.toJs());
bundle.destroy();
