// @ts-check
// What the host did wrong: each fault the page can tell apart (a missing, forbidden, mistyped,
// compressed or damaged file, an HTML fallback page), named with its file and the fix on common
// servers. web/boot/boot.js asks when a step fails, and checks the runtime's files beside their
// download; web/boot/boot-watchdog.js says the same, briefly, when boot.js itself did not load.

import { BootError, incompleteSiteHint, networkHint } from "./boot-error.js";

/** @typedef {import("./messages.js").Manifest} Manifest */
/** @typedef {(path: string) => string} SiteUrl the URL of a file of the site, from its path in the site */
/**
 * A fault of the host: `cause` is one of "missing" (404), "forbidden" (403), "html-fallback",
 * "wrong-type", "http", "compressed", "damaged", "network".
 * @typedef {{cause: string, message: string, hint: string}} HostFault
 */

// The JavaScript MIME types a module script may have (HTML's list).
const JS_TYPES = new Set([
  "application/ecmascript",
  "application/javascript",
  "application/x-ecmascript",
  "application/x-javascript",
  "text/ecmascript",
  "text/javascript",
  "text/javascript1.0",
  "text/javascript1.1",
  "text/javascript1.2",
  "text/javascript1.3",
  "text/javascript1.4",
  "text/javascript1.5",
  "text/jscript",
  "text/livescript",
  "text/x-ecmascript",
  "text/x-javascript",
]);
const COMPRESSED_FILES = /\.(bin|gz|zip|whl)$/; // compressed themselves: their bytes start like that

/** @param {Response} response */
function mediaType(response) {
  return (response.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
}

/** @param {string} file */
function extensionOf(file) {
  return file.match(/\.[^./]+$/)?.[0] ?? "";
}

/**
 * What is wrong with the host's answer for one file of the site, judged by its status and headers:
 * {cause, message, hint} or null. `cause`: "missing" (404), "forbidden" (403), "html-fallback" (an
 * HTML page in place of the file), "wrong-type" (a script without a JavaScript type), "http".
 * @param {string} file
 * @param {Response} response
 * @returns {HostFault | null}
 */
export function responseFault(file, response) {
  const status = response.status;
  if (status === 404) {
    return {
      cause: "missing",
      message: `${file} is missing: the host answered 404 Not Found`,
      hint:
        "A file of the site was not copied to the host: copy the whole static/ folder again, as it is " +
        "(some upload tools skip files or folders; pyodide/ holds large ones).",
    };
  }
  if (status === 403) {
    return {
      cause: "forbidden",
      message: `${file} is forbidden: the host answered 403 Forbidden`,
      hint:
        "The server may not read that file: make the copied folder readable by it " +
        "(for example `chmod -R a+rX` on it) and check the host's access rules.",
    };
  }
  if (!response.ok) {
    return { cause: "http", message: `${file}: the host answered HTTP ${status}`, hint: incompleteSiteHint() };
  }
  const type = mediaType(response);
  if (type === "text/html" && !file.endsWith(".html")) {
    return {
      cause: "html-fallback",
      message: `${file}: the host sent an HTML page (text/html) in place of the file`,
      hint:
        "A fallback rule answers with index.html when a file is not found (a single-page-app rewrite such as " +
        "nginx `try_files $uri /index.html`, a `_redirects` or 404.html rule): the file is missing or the rule " +
        "catches it. Copy the whole static/ folder, and keep such rules away from its files.",
    };
  }
  if (file.endsWith(".js") && !JS_TYPES.has(type)) {
    return {
      cause: "wrong-type",
      message:
        `${file} was served as ${type || "a response without a type"}; a module script needs a ` +
        "JavaScript type (text/javascript), so the browser refused it",
      hint: typeFix(extensionOf(file), "text/javascript"),
    };
  }
  return null;
}

/**
 * The one-line fix on the common servers, for files ending in `ext` that need `type`.
 * @param {string} ext
 * @param {string} type
 */
function typeFix(ext, type) {
  return (
    `Make the server send ${ext} files as ${type}: nginx: \`types { ${type} ${ext.slice(1)}; }\` ` +
    `beside \`include mime.types;\`; Apache: \`AddType ${type} ${ext}\`; lighttpd: ` +
    `\`mimetype.assign += ("${ext}" => "${type}")\`; Caddy: \`header *${ext} Content-Type ${type}\`.`
  );
}

/**
 * The first bytes of a file as served (a GET read no further than its first chunk).
 * @param {string} url
 * @returns {Promise<Uint8Array>}
 */
async function firstBytes(url) {
  const response = await fetch(url, { cache: "no-cache" });
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const { value } = await reader.read();
  reader.cancel().catch(() => {});
  return value ?? new Uint8Array();
}

/**
 * What is wrong with one file of the site ({file, size}), judged by a HEAD request (and, for a
 * file of the wrong size, its first bytes): {cause, message, hint} or null. Besides
 * responseFault's causes: "compressed" (gzip bytes without a Content-Encoding), "damaged" (another
 * size than in manifest.json), "network".
 * @param {SiteUrl} siteUrl
 * @param {{file: string, size?: number}} source
 * @returns {Promise<HostFault | null>}
 */
export async function hostFault(siteUrl, { file, size }) {
  // "?check": not the URL that index.html preloads (a HEAD request would not use the preload,
  // and the browser would warn about it).
  const url = `${siteUrl(file)}?check`;
  let response;
  try {
    response = await fetch(url, { method: "HEAD", cache: "no-cache" });
  } catch (cause) {
    return { cause: "network", message: `${file} could not be fetched (${cause.message})`, hint: networkHint() };
  }
  const fault = responseFault(file, response);
  if (fault) return fault;
  const length = response.headers.get("content-length");
  if (size === undefined || length === null || response.headers.get("content-encoding") || Number(length) === size) {
    return null;
  }
  if (!COMPRESSED_FILES.test(file)) {
    /** @type {Uint8Array} */
    let head = new Uint8Array();
    try {
      head = await firstBytes(url);
    } catch {
      // judged by its size alone
    }
    if (head[0] === 0x1f && head[1] === 0x8b) {
      return {
        cause: "compressed",
        message:
          `${file} was served gzip-compressed without a Content-Encoding header ` +
          `(${length} bytes of gzip, expected ${size} bytes)`,
        hint:
          "The host keeps the file compressed (for example uploaded gzip'd to an S3-like bucket) but does not " +
          "say so: set `Content-Encoding: gzip` on it (S3: the object's metadata), or upload it uncompressed.",
      };
    }
  }
  return {
    cause: "damaged",
    message: `${file} is damaged (${length} bytes, expected ${size})`,
    hint: incompleteSiteHint(),
  };
}

/**
 * One BootError for the faults found: every message, each distinct hint once.
 * @param {HostFault[]} faults
 * @param {import("./boot-error.js").BootStep} [step]
 */
export function faultError(faults, step) {
  const hints = [...new Set(faults.map((f) => f.hint))];
  const error = new BootError(
    `The host did not serve the site's files as they are: ${faults.map((f) => f.message).join("; ")}.`,
    {
      step,
      hint: hints.join(" "),
    },
  );
  error.faults = faults.map(({ cause, message }) => ({ cause, message }));
  return error;
}

/**
 * When the app (app.js) never started, its scripts may not have loaded: a script the host got
 * wrong (its type, a 404...) stops the whole module graph without a word. The error that names the
 * file, if a host fault explains it; else null.
 * @param {SiteUrl} siteUrl
 * @param {Manifest} manifest
 * @returns {Promise<BootError | null>}
 */
export async function appScriptsFault(siteUrl, manifest) {
  const scripts = (manifest.files ?? [])
    .filter(({ path }) => path.endsWith(".js") && !path.startsWith(manifest.index_url))
    .map(({ path, size }) => ({ file: path, size }));
  const faults = await found(scripts.map((script) => hostFault(siteUrl, script)));
  return faults.length ? faultError(faults, "app") : null;
}

/**
 * @param {Promise<HostFault | null>[]} checks
 * @returns {Promise<HostFault[]>}
 */
async function found(checks) {
  return /** @type {HostFault[]} */ ((await Promise.all(checks)).filter(Boolean));
}

/**
 * Throws the error that names what the host did wrong with the runtime's files, if it did.
 * @param {SiteUrl} siteUrl
 * @param {Manifest} manifest
 */
export async function checkRuntimeFiles(siteUrl, manifest) {
  // A HEAD request per file, beside the real download, turns a missing, forbidden, mistyped or
  // truncated file into a clear message instead of an opaque failure deep inside the loader.
  const faults = await found(manifest.runtime.map((file) => hostFault(siteUrl, file)));
  if (faults.length) throw faultError(faults, "download");
}
