// @ts-check
// The site's caches in Cache Storage (one per version of the site, kept by the service worker,
// web/sw.js) and the memory snapshot kept in them (docs/boot.md, "The memory snapshot"): the site's
// version, finding the snapshot to restore (the kept one, read by the read-ahead worker
// read-ahead.js, else the one shipped with the site), keeping one for the next visit (the shipped
// one as it is, or one made by the snapshot worker snapshot-worker.js), and the service worker's
// registration (offline use).

import "./bytes.js";
import { startPyodideInTurn } from "./pyodide-starts.js";
import { findSnapshot, SNAPSHOT_PATH, shippedSnapshot, snapshotResponse } from "./snapshot.js";

/** @typedef {import("./messages.js").Manifest} Manifest */
/** @typedef {import("./messages.js").FoundSnapshot} FoundSnapshot */
/** @typedef {import("./messages.js").SnapshotLookup} SnapshotLookup */
/** @typedef {import("./messages.js").ReadAhead} ReadAhead */
/** @typedef {import("./messages.js").ReadAheadMessage} ReadAheadMessage */
/** @typedef {import("./messages.js").ReadAheadRequest} ReadAheadRequest */
/** @typedef {import("./messages.js").SnapshotRequest} SnapshotRequest */
/** @typedef {import("./messages.js").SnapshotReply} SnapshotReply */
/** @typedef {import("./messages.js").CacheSiteRequest} CacheSiteRequest */
/** @typedef {import("./messages.js").CacheSiteReply} CacheSiteReply */
/** @typedef {(path: string) => string} SiteUrl */

const { CACHE_PREFIX, HTTP_CACHED, sha256, versionedPath } = pyAgentBytes;

/**
 * While Python starts: Pyodide's request for the runtime's WebAssembly (HTTP_CACHED, bytes.js) goes
 * to the browser's HTTP cache under its version's URL, where Chromium keeps V8's compiled code of
 * it (not for a module a service worker answered from Cache Storage): Python then runs compiled
 * code from the start (measured: the app's start after Python's ~130 ms -> ~80 ms).
 * - A first visit (no service worker answers the page) fetches that URL from the network, which
 *   index.html's first-visit preload asked for already (the build writes the version into it).
 * - A later visit takes it from the HTTP cache only (`only-if-cached`: never the network), once the
 *   service worker said the HTTP cache has it (web/sw.js answerHttpCached: asked there, a miss
 *   costs this page no failed request; a private window's cache does not keep a file this large).
 *   Not there after all, or not the manifest's size: the request goes to the service worker as it
 *   would have, without the version.
 * Returns what puts fetch back.
 * @param {SiteUrl} siteUrl
 * @param {Manifest} manifest
 * @returns {() => void}
 */
export function runtimeFromHttpCache(siteUrl, manifest) {
  const runtime = versionedRuntime(siteUrl, manifest);
  if (!runtime) return () => {};
  const { entry, url: versioned } = runtime;
  const plain = siteUrl(entry.path);
  const worker = navigator.serviceWorker?.controller ?? null;
  const cached = worker ? askHttpCached(worker, versioned) : Promise.resolve(false);
  const original = globalThis.fetch;
  /** @type {typeof fetch} */
  const runtimeFetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    // Only Pyodide's own request (not checkRuntimeFiles' HEAD of the same file, host-faults.js).
    if (url !== plain || method !== "GET") return original.call(globalThis, input, init);
    if (!worker) {
      // (A host that does not ignore the query, and answers 404: the file as it is named.)
      return original.call(globalThis, versioned, init).then((response) => {
        if (response.ok) return response;
        response.body?.cancel().catch(() => {});
        return original.call(globalThis, input, init);
      });
    }
    const viaWorker = () => original.call(globalThis, input, init);
    return cached.then((found) => {
      if (!found) return viaWorker();
      return original
        .call(globalThis, versioned, { ...init, cache: "only-if-cached", mode: "same-origin" })
        .then((response) => {
          const encoded = response.headers.has("content-encoding");
          const size = Number(response.headers.get("content-length") ?? entry.size);
          if (response.ok && (encoded || size === entry.size)) return response;
          response.body?.cancel().catch(() => {});
          return viaWorker();
        }, viaWorker);
    });
  };
  globalThis.fetch = runtimeFetch;
  return () => {
    if (globalThis.fetch === runtimeFetch) globalThis.fetch = original;
  };
}

/**
 * The runtime's WebAssembly (HTTP_CACHED): its manifest entry and the URL of its version, which
 * runtimeFromHttpCache fetches it by; null when the manifest does not list it.
 * @param {SiteUrl} siteUrl
 * @param {Manifest} manifest
 * @returns {{entry: {path: string, size: number, sha256: string}, url: string} | null}
 */
export function versionedRuntime(siteUrl, manifest) {
  const entry = manifest.files?.find((file) => file.path === HTTP_CACHED);
  return entry ? { entry, url: siteUrl(versionedPath(entry.path, entry.sha256)) } : null;
}

/**
 * The service worker's answer (web/sw.js answerHttpCached): whether the HTTP cache has `url`;
 * false when it does not answer within a second.
 * @param {ServiceWorker} worker
 * @param {string} url
 * @returns {Promise<boolean>}
 */
function askHttpCached(worker, url) {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    const timer = setTimeout(() => resolve(false), 1000);
    channel.port1.onmessage = (event) => {
      clearTimeout(timer);
      resolve(event.data?.cached === true);
    };
    try {
      worker.postMessage({ type: "http-cached", url }, [channel.port2]);
    } catch {
      clearTimeout(timer);
      resolve(false);
    }
  });
}

/**
 * SHA-256 of manifest.json's bytes: the version of the site (as sw.js names it), or null.
 * @param {Uint8Array} bytes
 * @returns {Promise<string | null>}
 */
export async function versionOf(bytes) {
  if (!globalThis.crypto?.subtle || !globalThis.caches) return null; // not a secure context
  return sha256(bytes);
}

// ?no-snapshot turns snapshots off for this visit (to compare, or to rule them out).
function snapshotsWanted() {
  return !new URLSearchParams(location.search).has("no-snapshot");
}

/**
 * The memory snapshot kept for this version of the site (snapshot.js, findSnapshot): null when
 * there is none (or snapshots are off); {stale: reason} when it was of another build (deleted);
 * else {meta, bytes, read}, its bytes being read. `ahead`: web/boot/read-ahead.js reading it (readAhead),
 * or null.
 * @param {string | null} version
 * @param {SiteUrl} siteUrl
 * @param {Manifest} manifest
 * @param {ReadAhead | null} [ahead]
 * @returns {Promise<SnapshotLookup>}
 */
export async function readSnapshot(version, siteUrl, manifest, ahead = null) {
  if (!snapshotsWanted() || !manifest.site_packages) return null;
  /** @type {SnapshotLookup | undefined} */
  let kept = null;
  if (version) {
    kept = ahead ? await keptAhead(ahead) : undefined;
    if (kept === undefined) {
      try {
        const cache = await caches.open(CACHE_PREFIX + version);
        kept = await findSnapshot(cache, siteUrl(SNAPSHOT_PATH), {
          version,
          bundleSha256: manifest.site_packages.sha256,
        });
      } catch (error) {
        kept = { stale: `the snapshot could not be read (${error?.message ?? error})` };
      }
    }
  }
  if (kept && "meta" in kept) return kept;
  // None kept (a first visit, or the kept one was of another build): the one shipped with the site.
  const shipped = shippedSnapshot(manifest, siteUrl);
  if (!shipped || !("meta" in shipped)) return kept ?? shipped;
  if (kept && "stale" in kept) shipped.keptStale = kept.stale;
  return shipped;
}

// The kept snapshot as web/boot/read-ahead.js found it (findSnapshot's result), or undefined when the
// worker did not read it (the page then reads it itself). Its bytes are copied into a buffer
// given to Pyodide at once, which then does not wait for them before instantiating the runtime.
/**
 * @param {ReadAhead} ahead
 * @returns {Promise<SnapshotLookup | undefined>}
 */
async function keptAhead(ahead) {
  const record = await ahead.snapshotRecord;
  if (record.error) return undefined;
  if (!record.meta) return record.stale ? { stale: record.stale } : null;
  const bytes = new Uint8Array(record.meta.size);
  const read = ahead.snapshotBytes.then((read) => {
    if (read.error) throw new Error(read.error);
    bytes.set(read.bytes);
    read.bytes = null; // the worker's copy goes now, not with the boot's other objects
  });
  read.catch(() => {}); // reported by whoever restores it
  return { meta: record.meta, bytes, read, source: "kept" };
}

/**
 * On a later visit (one the service worker answers), a worker (read-ahead.js) that reads the
 * kept snapshot and site-packages.bin off the page's thread: {snapshotRecord, snapshotBytes,
 * bundle}, promises of its messages (each settles, with an `error` if that read did not work), for
 * readSnapshot and startUnpacking; null when there is no such worker.
 */
/**
 * @param {string | null} version
 * @param {SiteUrl} siteUrl
 * @param {Manifest} manifest
 * @returns {ReadAhead | null}
 */
export function readAhead(version, siteUrl, manifest) {
  // Started by web/boot/early-start.js once the page was parsed, when it could.
  const early = window.pyAgentEarlyReadAhead ?? null;
  window.pyAgentEarlyReadAhead = null;
  if (!version || !manifest.site_packages || !navigator.serviceWorker?.controller) {
    early?.worker.terminate();
    return null;
  }
  let worker = early?.worker;
  try {
    worker ??= new Worker(siteUrl("boot/read-ahead.js"), { type: "module", name: "py-agent read-ahead" });
  } catch {
    return null;
  }
  const wanted = snapshotsWanted();
  /** @type {Record<string, (message: ReadAheadMessage) => void>} */
  const settle = {};
  const kinds = ["snapshot-record", "snapshot-bytes", "bundle"];
  /** @type {Record<string, Promise<any>>} */
  const read = Object.fromEntries(kinds.map((kind) => [kind, new Promise((resolve) => (settle[kind] = resolve))]));
  /** @param {ReadAheadMessage} data */
  const done = (data) => {
    if (!settle[data.kind]) return;
    settle[data.kind](data);
    delete settle[data.kind];
    if (data.kind === "snapshot-record" && !data.meta) done({ kind: "snapshot-bytes", error: "no snapshot" });
    if (!Object.keys(settle).length) worker.terminate();
  };
  if (!wanted) done({ kind: "snapshot-record", error: "not wanted" });
  worker.onmessage = ({ data }) => done(data);
  const failed = () => {
    for (const kind of Object.keys(settle)) {
      done(/** @type {ReadAheadMessage} */ ({ kind, error: "the read-ahead worker failed" }));
    }
  };
  worker.onerror = (event) => {
    event.preventDefault();
    failed();
  };
  if (early?.failures.length) failed();
  /** @type {ReadAheadRequest} */
  const request = { manifest, version, snapshot: wanted };
  worker.postMessage(request);
  return { snapshotRecord: read["snapshot-record"], snapshotBytes: read["snapshot-bytes"], bundle: read.bundle };
}

/**
 * @param {string | null} version
 * @param {SiteUrl} siteUrl
 */
export async function deleteSnapshot(version, siteUrl) {
  try {
    await (await caches.open(CACHE_PREFIX + version)).delete(siteUrl(SNAPSHOT_PATH));
  } catch {
    // nothing to delete
  }
}

/**
 * Once the page is ready, after a restore from the snapshot shipped with the site: keeps its
 * (inflated, checked) bytes in Cache Storage as a made one is kept, so that later visits read them
 * as they are instead of inflating the shipped file again. Resolves to "made" or "failed: <reason>"
 * (later visits then restore the shipped file again).
 */
/**
 * @param {string | null} version
 * @param {SiteUrl} siteUrl
 * @param {FoundSnapshot} snapshot
 * @returns {Promise<string>}
 */
export async function keepShippedSnapshot(version, siteUrl, { meta, bytes }) {
  try {
    if (!version) throw new Error("not a secure context");
    const cache = await caches.open(CACHE_PREFIX + version);
    await cache.put(siteUrl(SNAPSHOT_PATH), snapshotResponse({ meta: { ...meta, version }, bytes }));
    return "made";
  } catch (error) {
    return `failed: ${error?.message ?? error}`;
  }
}

/**
 * What boot.snapshot starts as when Python starts normally: "pending" if a snapshot will be made.
 * @param {string | null} version
 * @param {Manifest} manifest
 */
export function snapshotPlan(version, manifest) {
  return version && snapshotsWanted() && manifest.site_packages ? "pending" : "none";
}

/**
 * Once the page is ready (and was not restored from a snapshot): makes the snapshot for the next
 * visit in a worker (snapshot-worker.js), off the page's thread. Resolves to "made" or
 * "failed: <reason>" (a visit without a snapshot starts Python normally, and tries again).
 */
/**
 * @param {string | null} version
 * @param {SiteUrl} siteUrl
 * @param {Manifest} manifest
 * @returns {Promise<string>}
 */
export function makeSnapshot(version, siteUrl, manifest) {
  return startPyodideInTurn(() => snapshotInWorker(version, siteUrl, manifest));
}

/**
 * @param {string | null} version
 * @param {SiteUrl} siteUrl
 * @param {Manifest} manifest
 * @returns {Promise<string>}
 */
function snapshotInWorker(version, siteUrl, manifest) {
  return new Promise((resolve) => {
    let worker;
    try {
      worker = new Worker(siteUrl("boot/snapshot-worker.js"), { type: "module", name: "py-agent snapshot" });
    } catch (error) {
      resolve(`failed: ${error.message ?? error}`);
      return;
    }
    /** @param {string} status */
    const done = (status) => {
      worker.terminate();
      if (status !== "made") console.warn(`py-agent: no memory snapshot for the next visit: ${status}`);
      resolve(status);
    };
    /** @param {MessageEvent<SnapshotReply>} event */
    worker.onmessage = ({ data }) => done(data?.ok ? "made" : `failed: ${data && "error" in data ? data.error : data}`);
    worker.onerror = (event) => {
      event.preventDefault();
      done(`failed: ${event.message || "the worker did not start"}`);
    };
    /** @type {SnapshotRequest} */
    const request = {
      site: siteUrl("./"),
      manifest,
      version: String(version),
      cacheName: CACHE_PREFIX + version,
      key: siteUrl(SNAPSHOT_PATH),
    };
    worker.postMessage(request);
  });
}

/**
 * Registers sw.js for the site's folder and asks it to cache the whole site. Resolves to
 * "ready" (the site works offline), "unsupported" or "failed: <reason>".
 */
/**
 * @param {SiteUrl} siteUrl
 * @returns {Promise<string>}
 */
export async function enableOffline(siteUrl) {
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return "unsupported";
  try {
    await navigator.serviceWorker.register(siteUrl("sw.js"), { scope: siteUrl("./") });
    const registration = await navigator.serviceWorker.ready;
    /** @type {CacheSiteReply} */
    const reply = await new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = (event) => resolve(event.data);
      /** @type {CacheSiteRequest} */
      const request = { type: "cache-site" };
      /** @type {ServiceWorker} */ (registration.active).postMessage(request, [channel.port2]);
    });
    return reply?.ok ? "ready" : `failed: ${reply && "error" in reply ? reply.error : "no reply"}`;
  } catch (error) {
    return `failed: ${error.message ?? error}`;
  }
}
