// @ts-check
// Installing the site's packages: writing the files unpacked from site-packages.bin (or the wheels:
// web/boot/unpack.js) into site-packages, as nodes of the runtime's in-memory file system, and
// loading their dynamic libraries (pydantic-core's) from the modules compiled meanwhile.

/** @typedef {import("./runtime.js").Pyodide} Pyodide */
/** @typedef {[path: string, data: Uint8Array]} FileEntry a file to write: its path in site-packages, its bytes */
/**
 * An archive unpacked (startUnpacking's, awaited): its files and its dynamic libraries, each with
 * a promise of its compiled module (null: Pyodide compiles the installed file).
 * @typedef {{files: FileEntry[], dynlibs: {path: string, module: Promise<WebAssembly.Module | null> | WebAssembly.Module | null}[]}} UnpackedArchive
 */

/**
 * Writes the unpacked archives (startUnpacking: [{files, dynlibs}]) into site-packages, as
 * Pyodide's loadPackage would install the packages `names`: their files (with an INSTALLER and a
 * PYODIDE_SOURCE file in each .dist-info), their dynamic libraries loaded (from the modules
 * compiled meanwhile), `pyodide.loadedPackages` updated. After a restore (`restored`), only the
 * files: the rest is in the snapshot.
 * @param {Pyodide} pyodide
 * @param {UnpackedArchive[]} archives
 * @param {string[]} names
 * @param {{restored?: boolean}} [options]
 */
export async function installPackageFiles(pyodide, archives, names, { restored = false } = {}) {
  const { FS } = pyodide;
  const root = pyodide._api.sitepackages;
  const folders = new Set();
  const write =
    memfsWriter(FS, root) ??
    ((path, data) => {
      const target = `${root}/${path}`;
      const folder = target.slice(0, target.lastIndexOf("/"));
      if (!folders.has(folder)) {
        FS.mkdirTree(folder);
        folders.add(folder);
      }
      FS.writeFile(target, data, { canOwn: true });
    });
  for (const { files } of archives) {
    const written = new Set();
    for (const [path, data] of files) {
      write(path, data);
      written.add(path);
    }
    // A wheel (the bundle has them already, written by loadPackage at build time).
    for (const distInfo of new Set(
      files.map(([path]) => path.split("/")[0]).filter((top) => top.endsWith(".dist-info")),
    )) {
      if (!written.has(`${distInfo}/INSTALLER`)) write(`${distInfo}/INSTALLER`, "pyodide.loadPackage");
      if (!written.has(`${distInfo}/PYODIDE_SOURCE`)) write(`${distInfo}/PYODIDE_SOURCE`, "pyodide");
    }
  }
  // Restored from the snapshot: the libraries are loaded, the packages imported (snapshot.js).
  if (restored) {
    pyodide._api.importlib.invalidate_caches();
    return;
  }
  // Emscripten's preload plugin for .so files: instantiates a (compiled) module and keeps its
  // exports, which dlopen of that path then uses instead of compiling the file again.
  const plugin = pyodide._module.preloadPlugins?.find((p) => p.canHandle?.("x.so"));
  for (const { dynlibs } of archives) {
    for (const { path, module } of dynlibs) {
      const target = `${root}/${path}`;
      const compiled = await module;
      if (plugin && compiled) {
        try {
          await plugin.handle(compiled, target);
        } catch (error) {
          console.warn(`py-agent: ${path}: the compiled module did not load, compiling the file:`, error);
        }
      }
      await pyodide._api.loadDynlib(target);
    }
  }
  for (const name of names) pyodide.loadedPackages[name] = "default channel";
  pyodide._api.importlib.invalidate_caches();
}

// Writes files under `root` as nodes of its in-memory file system (Emscripten's MEMFS), each
// created in its folder's node, instead of FS.writeFile's walk of the whole path per file: that
// walk (normalizing, splitting and looking up every component, then open, chmod, write, close)
// took ~50-80 ms of the page's thread for site-packages' ~450 files at every start (Chromium
// profiles of a warm visit). The same nodes as FS.writeFile(path, bytes, {canOwn: true}) and
// FS.mkdirTree make (modes 0o100666 and 0o40777, the bytes owned, not copied). Null when `root`
// is not a MEMFS folder; a path that exists already is written by FS.writeFile.
/**
 * @param {any} FS Emscripten's file system (pyodide.FS)
 * @param {string} root
 * @returns {((path: string, data: Uint8Array | string) => void) | null}
 */
export function memfsWriter(FS, root) {
  const MEMFS = FS.filesystems?.MEMFS;
  let top;
  try {
    top = FS.lookupPath(root).node;
  } catch {
    return null;
  }
  if (!MEMFS?.createNode || top.mount?.type !== MEMFS || !FS.isDir(top.mode)) return null;
  const FILE = 0o100666;
  const FOLDER = 0o40777;
  const folders = new Map([["", top]]);
  const encoder = new TextEncoder();
  const folder = (path) => {
    let node = folders.get(path);
    if (node) return node;
    const cut = path.lastIndexOf("/");
    const parent = folder(cut < 0 ? "" : path.slice(0, cut));
    const name = path.slice(cut + 1);
    node = Object.hasOwn(parent.contents, name) ? parent.contents[name] : MEMFS.createNode(parent, name, FOLDER, 0);
    if (!FS.isDir(node.mode)) throw new Error(`${root}/${path} is not a folder`);
    folders.set(path, node);
    return node;
  };
  return (path, data) => {
    const cut = path.lastIndexOf("/");
    const parent = folder(cut < 0 ? "" : path.slice(0, cut));
    const name = path.slice(cut + 1);
    const bytes = typeof data === "string" ? encoder.encode(data) : data;
    if (Object.hasOwn(parent.contents, name)) {
      FS.writeFile(`${root}/${path}`, bytes, { canOwn: true });
      return;
    }
    const node = MEMFS.createNode(parent, name, FILE, 0);
    node.contents = bytes;
    node.usedBytes = bytes.length;
  };
}
