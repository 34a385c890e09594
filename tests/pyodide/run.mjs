#!/usr/bin/env node
// Runs Python test modules inside Pyodide under Node.js, with the site's own runtime and wheels.
//
//     node tests/pyodide/run.mjs [options] FILE.py...
//
//     -k TEXT          run only tests whose id contains TEXT (case-insensitive)
//     -v               one line per test
//     --timeout S      per-test timeout for async tests, in seconds (default 120)
//     --no-fs FILE     run FILE with file access disabled (repeatable; see below)
//     --static DIR     the built site (default: static/ of this checkout; run `python3 build.py`)
//     --test-wheels D  pytest and its dependencies for Pyodide (default: .cache/test-wheels/,
//                      written by `python3 build.py test`)
//
// It loads Pyodide from DIR/pyodide/, checks the sha256 of every wheel (the site's, from
// DIR/manifest.json, and the test-only ones), installs py_agent and its dependencies through
// the site's pyodide-lock.json plus pytest's wheels, copies the test files' folder tree (all of
// tests/ for this checkout's tests, without node_modules) into Pyodide's virtual file system at
// the same absolute path, and runs tests/pyodide/runner.py over the files, awaiting async tests
// on Pyodide's own event loop.
// Exit code: 0 all passed; 1 some failed; 5 no tests ran; 2 usage error; 3 set-up error.
//
// File access disabled ("no-fs" mode): for a module named with --no-fs, or whose source has a
// line `# pyodide-runner: no-fs`, the runner guards Emscripten's file system from just before
// the module is imported until its last test has run. Every file operation that goes through
// the virtual file system (Python's open(), os.*, pathlib, shutil, sqlite, ...) is then refused
// with PermissionError (EACCES): opening any file for writing, creating, deleting, renaming or
// changing files and folders anywhere, and opening or listing anything outside the folders
// Python imports code from (the standard library, site-packages and the test module's own
// folder, which stay readable so that imports keep working; the working folder '' leaves
// sys.path meanwhile). Each refused operation is also
// recorded, and the module fails if there was any, even when the code caught the error.
// Bytecode caching is off in this mode (it would write .pyc files).

import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, posix, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..", "..");
const NO_FS_MARKER = /^#\s*pyodide-runner:\s*no-fs\s*$/m;
const MAX_COPIED_FILE = 8 * 1024 * 1024;

class SetupError extends Error {}
class UsageError extends Error {}

function parseCommandLine() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      k: { type: "string", short: "k", default: "" },
      v: { type: "boolean", short: "v", default: false },
      timeout: { type: "string", default: "120" },
      "no-fs": { type: "string", multiple: true, default: [] },
      static: { type: "string", default: join(ROOT, "static") },
      "test-wheels": { type: "string", default: join(ROOT, ".cache", "test-wheels") },
    },
  });
  if (!positionals.length) throw new UsageError("usage: node tests/pyodide/run.mjs [options] FILE.py...");
  const files = positionals.map((f) => resolve(f));
  for (const f of [...files, ...values["no-fs"]]) {
    if (!existsSync(f)) throw new UsageError(`no such file: ${f}`);
  }
  return {
    files,
    keyword: values.k,
    verbose: values.v,
    timeout: Number(values.timeout),
    noFs: new Set(values["no-fs"].map((f) => resolve(f))),
    staticDir: resolve(values.static),
    testWheelsDir: resolve(values["test-wheels"]),
  };
}

function readJson(path, hint) {
  if (!existsSync(path)) throw new SetupError(`${path} is missing: ${hint}`);
  return JSON.parse(readFileSync(path, "utf8"));
}

function checkSha256(path, expected) {
  if (!existsSync(path)) throw new SetupError(`${path} is missing`);
  const actual = createHash("sha256").update(readFileSync(path)).digest("hex");
  if (actual !== expected) throw new SetupError(`${path}: sha256 ${actual}, expected ${expected}`);
}

// ---- copying test trees into Pyodide's file system ----

/** pytest's "prepend" rule: the first folder upwards without __init__.py. */
function baseDir(file) {
  let dir = dirname(file);
  while (existsSync(join(dir, "__init__.py"))) dir = dirname(dir);
  return dir;
}

/** The whole tests/ folder for this checkout's tests (data files next to them included). */
function treeToCopy(file) {
  const testsDir = join(ROOT, "tests");
  return file.startsWith(`${testsDir}/`) ? testsDir : baseDir(file);
}

function copyTree(pyodide, hostDir) {
  const FS = pyodide.FS;
  FS.mkdirTree(hostDir);
  for (const name of readdirSync(hostDir)) {
    if (name.startsWith(".") || name === "__pycache__" || name === "node_modules") continue;
    const hostPath = join(hostDir, name);
    const st = statSync(hostPath);
    if (st.isDirectory()) copyTree(pyodide, hostPath);
    else if (st.isFile() && st.size <= MAX_COPIED_FILE) FS.writeFile(hostPath, readFileSync(hostPath));
  }
}

// ---- the file-access guard (see the header comment) ----

const O_WRONLY = 0o1, O_RDWR = 0o2, O_CREAT = 0o100, O_TRUNC = 0o1000, O_APPEND = 0o2000;
const WRITE_FLAGS = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
const MUTATING_OPS = [
  "mkdir", "mknod", "rmdir", "unlink", "rename", "symlink", "truncate", "ftruncate",
  "chmod", "fchmod", "lchmod", "chown", "fchown", "lchown", "utime", "writeFile",
];

function createFsGuard(pyodide) {
  const FS = pyodide.FS;
  const EACCES = pyodide.ERRNO_CODES.EACCES;
  const violations = [];
  let readableRoots = null; // null: guard off

  const absolute = (path) => {
    if (typeof path === "object" && path !== null) return FS.getPath(path);
    const p = String(path);
    return posix.normalize(p.startsWith("/") ? p : `${FS.cwd()}/${p}`);
  };
  const readable = (path) => readableRoots.some((root) => path === root || path.startsWith(`${root}/`));
  const deny = (what) => {
    violations.push(what);
    throw new FS.ErrnoError(EACCES);
  };

  const originalOpen = FS.open;
  FS.open = function guardedOpen(path, flags, mode) {
    if (readableRoots) {
      const p = absolute(path);
      const f = typeof flags === "string" ? FS.modeStringToFlags(flags) : (flags ?? 0);
      if (f & WRITE_FLAGS) deny(`open for writing: ${p}`);
      if (!readable(p)) deny(`open: ${p}`);
    }
    return originalOpen.apply(this, arguments);
  };
  for (const op of MUTATING_OPS) {
    const original = FS[op];
    if (typeof original !== "function") continue;
    FS[op] = function guarded(path) {
      if (readableRoots) deny(`${op}: ${typeof path === "number" ? `fd ${path}` : absolute(path)}`);
      return original.apply(this, arguments);
    };
  }
  return {
    enable(roots) {
      readableRoots = roots.filter((r) => r && r !== "/").map((r) => posix.normalize(r).replace(/\/$/, ""));
      violations.length = 0;
    },
    disable() {
      readableRoots = null;
      return [...violations];
    },
  };
}

// ---- main ----

async function main() {
  const opts = parseCommandLine();
  const runtimeDir = join(opts.staticDir, "pyodide");
  const manifest = readJson(join(opts.staticDir, "manifest.json"), "build the site with `python3 build.py`");
  const testWheels = readJson(
    join(opts.testWheelsDir, "manifest.json"),
    "fetch the test wheels with `python3 build.py test` (or build.prepare_test_wheels())",
  ).wheels;
  for (const w of manifest.wheels) checkSha256(join(opts.staticDir, w.file), w.sha256);
  for (const w of testWheels) checkSha256(join(opts.testWheelsDir, w.file), w.sha256);

  const { loadPyodide } = await import(pathToFileURL(join(runtimeDir, "pyodide.js")).href);
  const pyodide = await loadPyodide({
    indexURL: `${runtimeDir}/`,
    stdout: (line) => console.log(line),
    stderr: (line) => console.error(line),
  });
  const loadErrors = [];
  const packages = [...manifest.packages, ...testWheels.map((w) => join(opts.testWheelsDir, w.file))];
  await pyodide.loadPackage(packages, { messageCallback: () => {}, errorCallback: (m) => loadErrors.push(m) });
  if (loadErrors.length) throw new SetupError(`installing wheels failed:\n${loadErrors.join("\n")}`);

  for (const dir of new Set(opts.files.map(treeToCopy))) copyTree(pyodide, dir);
  copyTree(pyodide, HERE);
  const guard = createFsGuard(pyodide);

  pyodide.runPython(`import sys; sys.path.insert(0, ${JSON.stringify(HERE)})`);
  const runner = pyodide.pyimport("runner");
  const session = runner.Session.callKwargs({
    rootdir: ROOT,
    keyword: opts.keyword,
    timeout: opts.timeout,
    verbose: opts.verbose,
  });
  for (const file of opts.files) {
    const noFs = opts.noFs.has(file) || NO_FS_MARKER.test(readFileSync(file, "utf8"));
    if (!noFs) {
      await session.run_file(file);
      continue;
    }
    // '' (the working folder, /home/pyodide) leaves sys.path meanwhile: it is no code folder.
    const roots = pyodide.runPython(`
import sys
sys.dont_write_bytecode = True
_no_fs_saved_path = list(sys.path)
sys.path[:] = [p for p in sys.path if p]
sys.path
`).toJs();
    roots.push(baseDir(file));
    console.log(`[no-fs] ${relative(ROOT, file)}: file access disabled`);
    guard.enable(roots);
    try {
      await session.run_file(file);
    } finally {
      const violations = guard.disable();
      pyodide.runPython(`
sys.dont_write_bytecode = False
sys.path[:] = [p for p in sys.path if p not in _no_fs_saved_path] + _no_fs_saved_path
`);
      if (violations.length) {
        session.add_failure(
          `${relative(ROOT, file)} [no-fs]`,
          `file access was attempted while disabled:\n  ${[...new Set(violations)].join("\n  ")}`,
        );
      }
    }
  }
  return session.finish();
}

try {
  // exit() rather than waiting for the event loop: timers that Python's event loop set (such as
  // a cancelled asyncio timeout) would keep Node alive until they fire.
  process.exit(await main());
} catch (error) {
  if (error instanceof SetupError || error instanceof UsageError) {
    console.error(`run.mjs: ${error.message}`);
    process.exit(error instanceof UsageError ? 2 : 3);
  }
  console.error(error);
  process.exit(3);
}
