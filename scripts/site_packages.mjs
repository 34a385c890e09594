#!/usr/bin/env node
// Installs the site's Python packages with the site's own Pyodide and byte-compiles them, into one
// bundle that the page writes into site-packages as it is (build.py runs this when Node.js is
// there; see build_site_packages()). So the page neither unzips the wheels nor compiles their
// sources.
//
//     node scripts/site_packages.mjs SITE_DIR OUT_FILE OUT_STDLIB
//
// SITE_DIR is a site being built (its pyodide/ holds the runtime, the wheels and the site's
// pyodide-lock.json). Pyodide (the same runtime, so the same bytecode format) installs every
// package of that lock with loadPackage (checking each wheel's sha256) and compiles each of their
// .py files with py_compile, as checked-hash .pyc files (Python compares a hash of the source
// before using one, so a .pyc can never stand in for other sources). OUT_FILE gets every file of
// site-packages (the wheels' files, the .dist-info that loadPackage writes, the .pyc files) as one
// gzip'd bundle, written deterministically:
//
//     "py-agent-site-packages 1\n" + JSON [[path relative to site-packages, size], ...] + "\n" + the files' bytes
//
// web/boot/unpack.js reads it; web/boot/fastboot.js writes it into site-packages. OUT_STDLIB gets the
// standard library's zip with bytecode for the modules the page imports (below).

import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [siteArg, outArg, stdlibArg] = process.argv.slice(2);
if (!siteArg || !outArg || !stdlibArg) {
  console.error("usage: node scripts/site_packages.mjs SITE_DIR OUT_FILE OUT_STDLIB");
  process.exit(2);
}
const runtime = `${join(resolve(siteArg), "pyodide")}/`;
// The page's environment (web/boot/fastboot.js, PYTHON_ENV), for the imports below.
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

// The standard library lives in a zip without bytecode (Pyodide's python_stdlib.zip): each module
// Python imports from it is compiled from source at every start (~190 at Pyodide's own start).
// A fresh Pyodide with these packages (as the page has them) imports what the page imports (and
// what the app's start imports lazily: its plugins, the model catalogue); every module it then
// has from the zip, those of Pyodide's start included, gets an unchecked-hash .pyc beside its
// .py in a copy of the zip (OUT_STDLIB), compiled with the file name an import from the zip gives
// its code. zipimport takes `name.pyc` before `name.py` and uses an unchecked-hash one without
// reading the source or comparing dates; the sources stay (tracebacks, `inspect`). Modules no one
// imports at start keep only their source (a smaller download). The page and the snapshot's
// worker load that zip (loadPyodide's stdLibURL); Pyodide's own python_stdlib.zip is shipped
// unchanged beside it (the python tool's sandbox uses it).
const probe = await loadPyodide({ indexURL: runtime, env, stdout: () => {}, stderr: (line) => console.error(line) });
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
probe.runPython(`
import importlib, sys
sys.dont_write_bytecode = True
importlib.invalidate_caches()  # as the page does once it has written site-packages: imports importlib.metadata
import py_agent, pydantic, py_agent.browser.main  # noqa: E401, F401
# What the app's start imports lazily (its plugins, the model catalogue: importlib.resources), as
# the snapshot's worker does too (web/boot/fastboot.js, WARM_CODE).
try:
    from py_agent.app.plugins import default_plugins
    from py_agent.app.plugin_contract import load_plugins
    from py_agent.ai import models
    load_plugins(default_plugins())  # builds each plugin: imports its modules
    models._load()
except Exception:
    pass
zip_path = next(p for p in sys.path if p.endswith(".zip"))
members = sorted({
    origin[len(zip_path) + 1:] for module in list(sys.modules.values())
    if (origin := getattr(getattr(module, "__spec__", None), "origin", None) or "").startswith(zip_path + "/")
    and origin.endswith(".py")
})
`);
const members = probe.globals.get("members").toJs();
probe.FS.writeFile("/tmp/members.json", JSON.stringify(members));
probe.runPython(`
import importlib._bootstrap_external as external, importlib.util, json, sys, zipfile

zip_path = next(p for p in sys.path if p.endswith(".zip"))  # where the page mounts it too
compiled = set(json.load(open("/tmp/members.json")))
with zipfile.ZipFile(zip_path) as stock, zipfile.ZipFile("/tmp/stdlib.zip", "w") as out:
    for info in stock.infolist():
        data = stock.read(info)
        out.writestr(info, data, compress_type=info.compress_type, compresslevel=9)
        if info.filename in compiled and info.filename + "c" not in stock.namelist():
            code = compile(data, f"{zip_path}/{info.filename}", "exec", dont_inherit=True, optimize=0)
            pyc = external._code_to_hash_pyc(code, importlib.util.source_hash(data), checked=False)
            entry = zipfile.ZipInfo(info.filename + "c", date_time=info.date_time)
            entry.external_attr = info.external_attr
            out.writestr(entry, bytes(pyc), compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
`);
writeFileSync(stdlibArg, probe.FS.readFile("/tmp/stdlib.zip"));

const bundle = pyodide.runPython(`
import gzip, json, os, sysconfig

site = sysconfig.get_paths()["purelib"]
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
