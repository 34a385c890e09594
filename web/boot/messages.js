// @ts-check
// Types only (JSDoc, for TypeScript's checks: jsconfig.json): manifest.json as the page's start reads
// it, and the messages between the page and its workers (web/boot/read-ahead.js,
// web/boot/snapshot-worker.js) and its service worker (web/sw.js). Nothing here runs.

/**
 * A file of the site with its size and SHA-256 (hex), as manifest.json lists it.
 * @typedef {{file: string, size: number, sha256: string}} SiteFile
 */

/**
 * manifest.json (written by build.py: buildsys/site.py).
 * @typedef {object} Manifest
 * @property {string} index_url the runtime's folder ("pyodide/")
 * @property {string} lock_file the site's pyodide-lock.json
 * @property {SiteFile[]} runtime the runtime's files (downloaded before Python starts)
 * @property {{name: string, file: string, size: number, sha256: string}[]} wheels the site's packages
 * @property {SiteFile} [site_packages] site-packages.bin (absent from a site built without Node.js)
 * @property {string} [stdlib] the standard library's zip the page loads (with bytecode)
 * @property {SiteFile & {record: SnapshotMeta}} [snapshot] the memory snapshot shipped with the site
 * @property {{path: string, size: number, sha256: string}[]} [files] every file, for the service worker
 */

/**
 * The record kept beside a memory snapshot (web/boot/snapshot.js takeSnapshot).
 * @typedef {object} SnapshotMeta
 * @property {string} kind the snapshot format (SNAPSHOT_KIND)
 * @property {string | null} version the site's version (null in a shipped snapshot's record)
 * @property {string} bundle site-packages.bin's sha256
 * @property {number} size the snapshot's bytes
 * @property {string} checksum their checksum (web/boot/snapshot.js checksum)
 * @property {Record<string, string>} packages pyodide.loadedPackages when it was taken
 * @property {number} tableAtStart the function table's length when the runtime had started
 * @property {number} tableLength the function table's length when it was taken
 * @property {string} table a digest of the function table and the GOT (tableDigest)
 * @property {number} heap the memory's size
 * @property {LibraryRecord[]} libraries where the dynamic loader put each library
 */

/**
 * @typedef {object} LibraryRecord
 * @property {string} name its path in the runtime's file system
 * @property {string} path its path in site-packages
 * @property {number} handle its dlopen handle
 * @property {boolean} global
 * @property {number} memoryBase
 * @property {number} memorySize
 * @property {number} tableBase
 * @property {number} tableSize
 */

/**
 * A snapshot found (kept in Cache Storage, or shipped with the site): its bytes are read into
 * `bytes` (a buffer of the recorded size) while the runtime starts; `read` settles once they are
 * (and checked).
 * @typedef {object} FoundSnapshot
 * @property {SnapshotMeta} meta
 * @property {Uint8Array} bytes
 * @property {Promise<void>} read
 * @property {"kept" | "shipped"} source
 * @property {string} [keptStale] why the kept one was left out, when the shipped one is used instead
 */

/** @typedef {FoundSnapshot | {stale: string} | null} SnapshotLookup none, one of another build, or one */

// ---- web/boot/read-ahead.js ----

/**
 * The page to the read-ahead worker.
 * @typedef {object} ReadAheadRequest
 * @property {Manifest} manifest
 * @property {string} version the site's version (the cache to read the snapshot from)
 * @property {boolean} snapshot whether this visit wants the snapshot (not ?no-snapshot)
 */

/**
 * The read-ahead worker to the page, one message of each kind, each with an `error` if that read
 * did not work (the page then reads it itself).
 * @typedef {{kind: "snapshot-record", stale?: string | null, meta?: SnapshotMeta | null, error?: string}
 *   | {kind: "snapshot-bytes", bytes?: Uint8Array | null, error?: string}
 *   | {kind: "bundle", sha256?: string, raw?: Uint8Array, error?: string}} ReadAheadMessage
 */

/**
 * What the page makes of those messages (site-cache.js readAhead): a promise of each.
 * @typedef {object} ReadAhead
 * @property {Promise<Extract<ReadAheadMessage, {kind: "snapshot-record"}>>} snapshotRecord
 * @property {Promise<Extract<ReadAheadMessage, {kind: "snapshot-bytes"}>>} snapshotBytes
 * @property {Promise<Extract<ReadAheadMessage, {kind: "bundle"}>>} bundle
 */

// ---- web/boot/snapshot-worker.js ----

/**
 * The page to the snapshot worker.
 * @typedef {object} SnapshotRequest
 * @property {string} site the site's folder URL
 * @property {Manifest} manifest
 * @property {string} version the site's version
 * @property {string} cacheName the cache to keep the snapshot in (this version's)
 * @property {string} key its key in that cache
 */

/** @typedef {{ok: true, size: number} | {ok: false, error: string}} SnapshotReply the snapshot worker to the page */

// ---- web/sw.js ----

/** @typedef {{type: "cache-site"}} CacheSiteRequest the page to the service worker, once ready (with a port) */

/**
 * The service worker's reply, on that port.
 * @typedef {{ok: true, version: string, files: number} | {ok: false, error: string}} CacheSiteReply
 */

export {};
