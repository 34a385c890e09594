// @ts-check
// py-agent's service worker: every file of the site in Cache Storage, so that a second visit
// needs no download and the app works offline; a new build of the site is used at the next visit.
//
// Registered by boot.js (after the page is ready) with the site's folder as its scope, so it
// works from any sub-path. It only ever answers same-origin GET/HEAD requests for files that
// manifest.json lists; everything else (providers' APIs, other origins) goes to the network
// untouched.
//
// Versions. build.py lists every file of the site in manifest.json ("files": path, size,
// sha256). A version of the site is named by the SHA-256 of manifest.json's bytes, and its files
// are kept in the cache "py-agent-site-<hash>" (with that manifest, and a marker once complete).
//
// - A page load (a top-level navigation) asks the network for manifest.json (no HTTP cache): its
//   version is the one this page gets, for all its files (frames in it too); offline (or no answer
//   in 4 s), the newest complete version is used. So a new build is picked up at the next visit:
//   its files come from the cache when an older version has the same path with the same sha256,
//   from the network otherwise (and are kept when their sha256 matches the manifest).
// - After boot, the page posts {type: "cache-site"}: the page's version is completed (every
//   listed file), marked complete, and older versions that no open page uses are deleted (with
//   the memory snapshot boot.js keeps in the same cache).

// The cache-name prefix and the byte helpers, shared with the page's start (a classic script that
// sets the global pyAgentBytes).
importScripts("boot/bytes.js");
const { CACHE_PREFIX: PREFIX, HTTP_CACHED, sha256, versionedPath } = pyAgentBytes;
const SCOPE = new URL(/** @type {ServiceWorkerScope} */ (self).registration.scope);
const MANIFEST_URL = new URL("manifest.json", SCOPE).href;
const COMPLETE_KEY = new URL("__sw__/complete", SCOPE).href;
const MANIFEST_TIMEOUT_MS = 4000;

/**
 * A version of the site: manifest.json's bytes and SHA-256 (hex), and its files by path.
 * @typedef {object} SiteVersion
 * @property {string} hash
 * @property {Uint8Array<ArrayBuffer>} bytes
 * @property {import("./boot/messages.js").Manifest} manifest
 * @property {Map<string, ManifestEntry>} byPath
 */
/** @typedef {{path: string, size: number, sha256: string}} ManifestEntry one of manifest.json's "files" */

/** @type {Map<string, SiteVersion>} */
const versions = new Map(); // hash -> { hash, bytes, manifest, byPath }
/** @type {Map<string, string>} */
const clientVersions = new Map(); // client id -> hash of the version its page was loaded with
/** @type {Promise<SiteVersion | null> | null} */
let latestPromise = null; // the version for requests of pages this worker did not load
/** @type {Map<string, Promise<Cache>>} */
const openCaches = new Map(); // cache name -> its Cache (opened once: a page's first screen waits for its files)

/** @param {string} name */
function openCache(name) {
  let cache = openCaches.get(name);
  if (!cache) {
    cache = caches.open(name);
    openCaches.set(name, cache);
  }
  return cache;
}

/** @type {ServiceWorkerScope} */ (self).addEventListener("install", () =>
  /** @type {ServiceWorkerScope} */ (self).skipWaiting(),
);
/** @type {ServiceWorkerScope} */ (self).addEventListener("activate", (event) =>
  event.waitUntil(/** @type {ServiceWorkerScope} */ (self).clients.claim()),
);

/** @type {ServiceWorkerScope} */ (self).addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" && request.method !== "HEAD") return;
  const url = new URL(request.url);
  if (url.origin !== SCOPE.origin || !url.pathname.startsWith(SCOPE.pathname)) return;
  // The runtime's WebAssembly under its version's URL: the page reads it from the HTTP cache
  // (web/boot/site-cache.js, runtimeFromHttpCache), and asks here (without the version) if it is not there.
  if (url.searchParams.has("v") && sitePath(url.href) === HTTP_CACHED) return;
  if (request.mode === "navigate" && request.destination === "document") {
    event.respondWith(navigate(event));
  } else {
    event.respondWith(subresource(event));
  }
});

/** @type {ServiceWorkerScope} */ (self).addEventListener("message", (event) => {
  if (event.data?.type === "http-cached") {
    event.waitUntil(answerHttpCached(event));
    return;
  }
  if (event.data?.type !== "cache-site") return;
  const port = event.ports[0];
  event.waitUntil(
    (async () => {
      try {
        const version =
          (await versionFor(/** @type {ServiceWorkerClient | null} */ (event.source)?.id)) ?? (await latestVersion());
        if (!version) throw new Error("manifest.json lists no files: nothing to cache");
        await complete(version);
        port?.postMessage({ ok: true, version: version.hash, files: version.manifest.files.length });
      } catch (error) {
        port?.postMessage({ ok: false, error: String(error?.message ?? error) });
      }
    })(),
  );
});

// ---- Versions ----

/**
 * @param {Uint8Array<ArrayBuffer>} bytes manifest.json's
 * @returns {Promise<SiteVersion | null>} null when they are not a manifest with files
 */
async function remember(bytes) {
  const hash = await sha256(bytes);
  let version = versions.get(hash);
  if (!version) {
    /** @type {import("./boot/messages.js").Manifest} */
    let manifest;
    try {
      manifest = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      return null;
    }
    if (!Array.isArray(manifest?.files)) return null; // JSON, but not a manifest (null, a number, ...)
    version = { hash, bytes, manifest, byPath: new Map(manifest.files.map((f) => [f.path, f])) };
    versions.set(hash, version);
  }
  return version;
}

/** @returns {Promise<SiteVersion | null>} */
async function networkVersion() {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), MANIFEST_TIMEOUT_MS);
  try {
    const response = await fetch(MANIFEST_URL, { cache: "no-store", signal: controller.signal });
    if (!response.ok) return null;
    return await remember(new Uint8Array(await response.arrayBuffer()));
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** @param {string} name */
async function cachedVersion(name) {
  const response = await (await openCache(name)).match(MANIFEST_URL);
  return response ? remember(new Uint8Array(await response.arrayBuffer())) : null;
}

async function siteCacheNames() {
  return (await caches.keys()).filter((name) => name.startsWith(PREFIX));
}

/** @returns {Promise<SiteVersion | null>} */
async function newestCompleteVersion() {
  const names = await siteCacheNames(); // in creation order
  for (const name of names.reverse()) {
    const cache = await openCache(name);
    if (await cache.match(COMPLETE_KEY)) {
      const version = await cachedVersion(name);
      if (version) return version;
    }
  }
  return null;
}

/** @returns {Promise<SiteVersion | null>} */
function latestVersion() {
  latestPromise ??= (async () => (await networkVersion()) ?? (await newestCompleteVersion()))();
  return latestPromise;
}

/**
 * @param {string | undefined} clientId
 * @returns {Promise<SiteVersion | null | undefined>}
 */
async function versionFor(clientId) {
  const hash = clientId ? clientVersions.get(clientId) : undefined;
  return hash ? versions.get(hash) : null;
}

// ---- Answering requests ----

/** @param {string} url */
function sitePath(url) {
  const path = decodeURIComponent(new URL(url).pathname.slice(SCOPE.pathname.length));
  return path === "" ? "index.html" : path;
}

/** @param {FetchEvent} event */
async function navigate(event) {
  const version = (await networkVersion()) ?? (await newestCompleteVersion());
  if (version) {
    latestPromise = Promise.resolve(version);
    if (event.resultingClientId) clientVersions.set(event.resultingClientId, version.hash);
  }
  return answer(event, version);
}

/** @param {FetchEvent} event */
async function subresource(event) {
  const version = (await versionFor(event.clientId)) ?? (await latestVersion());
  return answer(event, version);
}

/**
 * @param {FetchEvent} event
 * @param {SiteVersion | null | undefined} version
 * @returns {Promise<Response>}
 */
async function answer(event, version) {
  const request = event.request;
  const path = sitePath(request.url);
  if (path === "manifest.json" && version) {
    // The page's own version, whatever the network says meanwhile.
    return new Response(request.method === "HEAD" ? null : version.bytes, {
      headers: { "content-type": "application/json", "content-length": String(version.bytes.length) },
    });
  }
  const entry = version?.byPath.get(path);
  if (!entry) return fetch(request);
  const key = new URL(path, SCOPE).href;
  const cache = await openCache(PREFIX + version.hash);
  let hit = await cache.match(key);
  if (!hit) {
    hit = await fromOlderVersion(version, entry, key);
    if (hit) event.waitUntil(keep(cache, version, key, hit.clone()));
  }
  if (hit) {
    return request.method === "HEAD" ? new Response(null, { status: hit.status, headers: hit.headers }) : hit;
  }
  // Not cached yet: from the network, revalidated (an older build may sit in the HTTP cache).
  const response = await fetch(request.mode === "navigate" ? request : new Request(request, { cache: "no-cache" }));
  if (request.method === "GET" && response.status === 200 && response.type === "basic" && !response.redirected) {
    event.waitUntil(keepVerified(cache, version, key, entry, response.clone()).catch(() => {}));
  }
  return response;
}

/**
 * The file from another version's cache, when that version has it with the same sha256.
 * @param {SiteVersion} version
 * @param {ManifestEntry} entry
 * @param {string} key
 * @returns {Promise<Response | null>}
 */
async function fromOlderVersion(version, entry, key) {
  for (const name of await siteCacheNames()) {
    if (name === PREFIX + version.hash) continue;
    const older = await cachedVersion(name);
    if (older?.byPath.get(entry.path)?.sha256 !== entry.sha256) continue;
    const hit = await (await openCache(name)).match(key);
    if (hit) return hit;
  }
  return null;
}

/**
 * @param {Cache} cache
 * @param {SiteVersion} version
 * @param {string} key
 * @param {Response} response
 */
async function keep(cache, version, key, response) {
  if (!(await cache.match(MANIFEST_URL))) {
    await cache.put(MANIFEST_URL, new Response(version.bytes, { headers: { "content-type": "application/json" } }));
  }
  await cache.put(key, response);
}

/**
 * @param {Cache} cache
 * @param {SiteVersion} version
 * @param {string} key
 * @param {ManifestEntry} entry
 * @param {Response} response
 * @returns {Promise<boolean>} whether its bytes matched the manifest's sha256 (and were kept)
 */
async function keepVerified(cache, version, key, entry, response) {
  const bytes = await response.arrayBuffer();
  if ((await sha256(bytes)) !== entry.sha256) return false;
  const headers = new Headers(response.headers);
  headers.set("content-length", String(bytes.byteLength));
  await keep(cache, version, key, new Response(bytes, { status: 200, statusText: response.statusText, headers }));
  return true;
}

/**
 * Whether the HTTP cache has a file of the site (the page's {type: "http-cached", url}, answered on
 * its port): web/boot/site-cache.js runtimeFromHttpCache asks before it reads the runtime's
 * WebAssembly from there. Asked here, a miss (a private window's HTTP cache, in memory, does not
 * keep a file this large; an evicted one) costs the page no failed request of its own.
 * @param {ExtendableMessageEvent} event
 */
async function answerHttpCached(event) {
  const port = event.ports[0];
  let cached = false;
  try {
    const url = new URL(String(/** @type {{url?: unknown}} */ (event.data).url), SCOPE);
    if (url.origin === SCOPE.origin && sitePath(url.href) === HTTP_CACHED) {
      const response = await fetch(url, { cache: "only-if-cached", mode: "same-origin" });
      cached = response.ok;
      await response.body?.cancel();
    }
  } catch {
    cached = false; // not in the HTTP cache
  }
  port?.postMessage({ cached });
}

// ---- Completing a version ----

/** @param {SiteVersion} version */
async function complete(version) {
  const cache = await openCache(PREFIX + version.hash);
  if (!(await cache.match(COMPLETE_KEY))) {
    /** @type {[ManifestEntry, string][]} */
    const missing = [];
    for (const entry of version.manifest.files) {
      const key = new URL(entry.path, SCOPE).href;
      if (!(await cache.match(key))) missing.push([entry, key]);
    }
    /** @type {string[]} */
    const failed = [];
    // A few at a time: the page that asked is usable meanwhile.
    for (let i = 0; i < missing.length; i += 4) {
      await Promise.all(
        missing.slice(i, i + 4).map(async ([entry, key]) => {
          const older = await fromOlderVersion(version, entry, key);
          if (older) return keep(cache, version, key, older);
          // The runtime's WebAssembly under its version's URL, which a first visit fetched it by
          // (web/boot/site-cache.js, runtimeFromHttpCache): a download saved when the HTTP cache has it.
          const response =
            entry.path === HTTP_CACHED
              ? await fetch(new URL(versionedPath(entry.path, entry.sha256), SCOPE), { cache: "force-cache" })
              : await fetch(key, { cache: "no-cache" });
          if (!response.ok || !(await keepVerified(cache, version, key, entry, response))) failed.push(entry.path);
        }),
      );
    }
    if (failed.length) throw new Error(`could not cache ${failed.join(", ")}`);
    await keep(cache, version, COMPLETE_KEY, new Response("complete"));
  }
  await removeOlderVersions(version);
}

/** @param {SiteVersion} version */
async function removeOlderVersions(version) {
  const open = await /** @type {ServiceWorkerScope} */ (self).clients.matchAll({
    includeUncontrolled: true,
  });
  const inUse = new Set(open.map((client) => clientVersions.get(client.id)).filter(Boolean));
  for (const id of clientVersions.keys()) {
    if (!open.some((client) => client.id === id)) clientVersions.delete(id);
  }
  for (const name of await siteCacheNames()) {
    const hash = name.slice(PREFIX.length);
    if (hash !== version.hash && !inUse.has(hash)) {
      openCaches.delete(name);
      await caches.delete(name);
      versions.delete(hash);
    }
  }
}
