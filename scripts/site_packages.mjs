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
// web/boot/unpack.js reads it; web/boot/install.js writes it into site-packages. OUT_STDLIB gets the
// standard library's zip with bytecode for the modules the page imports (below).

import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

// The Python run in Pyodide here: buildsys/in_pyodide.py, its functions in a namespace of their own.
const IN_PYODIDE = readFileSync(new URL("../buildsys/in_pyodide.py", import.meta.url), "utf8");
function inPyodide(py) {
  const namespace = py.globals.get("dict")();
  py.runPython(IN_PYODIDE, { globals: namespace, filename: "buildsys/in_pyodide.py" });
  return namespace;
}

const [siteArg, outArg, stdlibArg] = process.argv.slice(2);
if (!siteArg || !outArg || !stdlibArg) {
  console.error("usage: node scripts/site_packages.mjs SITE_DIR OUT_FILE OUT_STDLIB");
  process.exit(2);
}
const runtime = `${join(resolve(siteArg), "pyodide")}/`;
// The page's environment, for the imports below.
const { PYTHON_ENV: env } = await import(new URL("../web/boot/runtime.js", import.meta.url).href);
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
const build = inPyodide(pyodide);
build.get("compile_site_packages")();

// The standard library lives in a zip without bytecode (Pyodide's python_stdlib.zip): each module
// Python imports from it is compiled from source at every start (~190 at Pyodide's own start).
// A fresh Pyodide with these packages (as the page has them) imports what the page imports and
// what the snapshot's warm-up imports (py_agent/browser/boot.py); every module it then
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
const probeBuild = inPyodide(probe);
const members = probeBuild.get("imported_stdlib_modules")();
probeBuild.get("write_stdlib_zip")(members, "/tmp/stdlib.zip");
writeFileSync(stdlibArg, probe.FS.readFile("/tmp/stdlib.zip"));

const bundle = build.get("bundle")();
writeFileSync(outArg, bundle.toJs());
bundle.destroy();
