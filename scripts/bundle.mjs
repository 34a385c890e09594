#!/usr/bin/env node
// Bundles the page's own modules (build.py runs this when Node.js is there, once the site's files
// are in place; see buildsys/bundle.py). Loaded one by one, the ~60 modules of index.html's three
// module graphs each cost the page's thread a fetch (through the service worker on a later visit)
// and a module record before the first screen and before ready; bundled, they are a few files.
//
//     node scripts/bundle.mjs ESBUILD_DIR SITE_DIR ENTRY... > RESULT.json
//
// ESBUILD_DIR is the esbuild-wasm npm package (pinned in build.lock.json), SITE_DIR the site being
// built, each ENTRY a module of it (site path). Every output is written one folder deep: an entry
// already there (boot/early.js) over itself, one at the site's root (app.js) as bundle/<name>,
// the chunks of shared code in bundle/. So a path that leaves the bundle stays right when written
// once for all outputs: "../" + its site path. Such paths are
// - the imports of the front-end libraries (vendor/) and of the runtime (pyodide/), left as imports
//   of their own files (each library stays one file, shipped with its license);
// - `import.meta.url`, which a module uses for a URL beside itself: it becomes that module's own
//   URL in the site, so `new URL("./image-worker.js", import.meta.url)` names the same file as
//   before.
// Minified, with names kept (error messages and stack traces name the app's functions), and a
// source map per file that holds the sources.
//
// Prints {outputs, inputs, entries, preloads} as JSON: every file written, every module bundled
// (site paths), where each entry was written ({entry: output}), and the files the page should
// preload, in order: each entry's static imports, then the entry, entries in the order given, then
// the chunks loaded later (dynamic imports).

import { createRequire } from "node:module";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

const [esbuildDir, siteArg, ...entries] = process.argv.slice(2);
if (!esbuildDir || !siteArg || !entries.length) {
  console.error("usage: node scripts/bundle.mjs ESBUILD_DIR SITE_DIR ENTRY...");
  process.exit(2);
}
const site = resolve(siteArg);
const esbuild = createRequire(import.meta.url)(join(resolve(esbuildDir), "lib", "main.js"));
const BUNDLE_DIR = "bundle";
// Imports left to the files themselves (site paths' first folder).
const EXTERNAL = new Set(["vendor", "pyodide"]);

/** @param {string} file an absolute path in the site */
const sitePath = (file) => relative(site, file).split(sep).join("/");

/** @type {import("esbuild").Plugin} */
const sitePaths = {
  name: "site-paths",
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      const path = sitePath(resolve(args.resolveDir, args.path));
      if (!EXTERNAL.has(path.split("/")[0])) return undefined;
      return { path: `../${path}`, external: true };
    });
    build.onLoad({ filter: /\.js$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      if (!source.includes("import.meta.url")) return undefined;
      const own = `new URL(${JSON.stringify(`../${sitePath(args.path)}`)}, import.meta.url).href`;
      return { contents: source.replaceAll("import.meta.url", own), loader: "js" };
    });
  },
};

const result = await esbuild.build({
  absWorkingDir: site,
  entryPoints: entries.map((entry) => ({
    in: entry,
    out: (entry.includes("/") ? entry : `${BUNDLE_DIR}/${entry}`).replace(/\.js$/, ""),
  })),
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "browser",
  outdir: site,
  chunkNames: `${BUNDLE_DIR}/[name]-[hash]`,
  minify: true,
  keepNames: true,
  sourcemap: "linked",
  sourcesContent: true,
  metafile: true,
  write: false,
  logLevel: "warning",
  plugins: [sitePaths],
});

const outputs = [];
for (const file of result.outputFiles) {
  const path = sitePath(file.path);
  if (path.split("/").length !== 2) throw new Error(`${path}: every output must be one folder deep`);
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, file.contents);
  outputs.push(path);
}

const meta = result.metafile.outputs;
const entryOutput = new Map(
  Object.entries(meta)
    .filter(([, output]) => output.entryPoint)
    .map(([path, output]) => [output.entryPoint, path]),
);
/** @type {string[]} */
const preloads = [];
/** @param {string} path */
const preload = (path) => {
  for (const imported of meta[path].imports) {
    if (imported.kind === "import-statement" && !imported.external) preload(imported.path);
  }
  if (!preloads.includes(path)) preloads.push(path);
};
for (const entry of entries) preload(entryOutput.get(entry));
for (const path of Object.keys(meta)) if (path.endsWith(".js")) preload(path);

process.stdout.write(
  JSON.stringify({
    outputs: outputs.sort(),
    inputs: Object.keys(result.metafile.inputs).sort(),
    entries: Object.fromEntries(entries.map((entry) => [entry, entryOutput.get(entry)])),
    preloads,
  }),
);
