// @ts-check
// A worker that web/boot/boot.js starts once it has manifest.json: it reads, off the page's thread, the
// kept memory snapshot and site-packages.bin, and hands each to the page as soon as it is read,
// its buffer transferred (not copied):
// - "snapshot-record", then "snapshot-bytes": the kept memory snapshot of this version of the site
//   (snapshot.js findSnapshot: its record checked, then its bytes read and their SHA-256 checked);
// - "bundle": site-packages.bin, fetched with its sha256 as Subresource Integrity and inflated
//   (unpack.js).
// On the page's thread, reading the 38 MB snapshot from Cache Storage and inflating the 12 MB of
// packages took ~150 ms of a start that has that thread busy from the first byte to ready
// (BENCHMARKS.md, "Time to ready").
//
// Message in: {manifest, version, snapshot: whether this visit wants the snapshot}.
// Messages out: {kind, ...what was read} or {kind, error}. What did not work here (a missing or
// damaged file) the page does again itself, as without this worker, and then meets and reports
// what went wrong: nothing is reported from here.

import "./bytes.js";
import { findSnapshot, SNAPSHOT_PATH } from "./snapshot.js";
import { fetchChecked, inflate } from "./unpack.js";

/** @typedef {import("./messages.js").ReadAheadRequest} ReadAheadRequest */
/** @typedef {import("./messages.js").ReadAheadMessage} ReadAheadMessage */
/** @typedef {import("./messages.js").Manifest} Manifest */

const { CACHE_PREFIX } = pyAgentBytes;

/**
 * A message to the page (buffers in `transfer` are handed over, not copied).
 * @param {ReadAheadMessage} message
 * @param {Transferable[]} [transfer]
 */
const post = (message, transfer = []) => /** @type {any} */ (self).postMessage(message, transfer);
const siteUrl = (path) => new URL(path, new URL("../", self.location.href)).href;
/**
 * @param {ReadAheadMessage["kind"]} kind
 * @param {any} error
 * @returns {ReadAheadMessage}
 */
const failed = (kind, error) => ({ kind, error: String(error?.message ?? error) });

/**
 * @param {Manifest} manifest
 * @param {string} version
 */
async function snapshot(manifest, version) {
  const cache = await caches.open(CACHE_PREFIX + version);
  const found = await findSnapshot(cache, siteUrl(SNAPSHOT_PATH), {
    version,
    bundleSha256: manifest.site_packages.sha256,
  });
  if (!found || !("meta" in found)) {
    post({ kind: "snapshot-record", stale: found && "stale" in found ? found.stale : null, meta: null });
    return;
  }
  post({ kind: "snapshot-record", stale: null, meta: found.meta });
  try {
    await found.read;
    post({ kind: "snapshot-bytes", bytes: found.bytes }, [found.bytes.buffer]);
  } catch (error) {
    post(failed("snapshot-bytes", error));
  }
}

/** @param {import("./messages.js").SiteFile} source */
async function bundle(source) {
  const raw = await inflate(await fetchChecked(siteUrl(source.file), source.sha256), "gzip");
  post({ kind: "bundle", sha256: source.sha256, raw }, [raw.buffer]);
}

/** @param {MessageEvent<ReadAheadRequest>} event */
self.onmessage = ({ data: { manifest, version, snapshot: wanted } }) => {
  bundle(manifest.site_packages).catch((error) => post(failed("bundle", error)));
  if (wanted) snapshot(manifest, version).catch((error) => post(failed("snapshot-record", error)));
};
