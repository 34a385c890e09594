// @ts-check
// A folder on the user's disk as a session's workspace (the File System Access API: Chromium).
//
// Python's FolderWorkspaceStore (py_agent/browser/folder.py) reads and writes the folder through
// these functions; the handle of each session's folder is kept in IndexedDB (database
// "py-agent-folders", store "handles", key = session id, value {handle, name}), so a reload can
// ask for permission again. Paths are workspace paths ("src/app.py"); the API cannot name
// anything outside the folder (no "..", no symlinks followed out of it).

const DB_NAME = "py-agent-folders";
const STORE = "handles";
/** Folders never read into the workspace: history and installed packages (see docs/folders.md). */
export const SKIPPED_FOLDERS = Object.freeze([".git", "node_modules"]);

/** Chromium's own file beside one being written (createWritable), gone once the write is closed. */
const SWAP = ".crswap";

/** Whether this browser can open folders (Chromium's showDirectoryPicker). */
export function supported() {
  return typeof window.showDirectoryPicker === "function";
}

/** The folder the user picks (rejects with AbortError when the picker is closed). */
export function pick() {
  return window.showDirectoryPicker({ id: "py-agent-folder", mode: "readwrite" });
}

/** @type {Promise<IDBDatabase> | null} */
let opening = null;
/** @returns {Promise<IDBDatabase>} */
function db() {
  opening ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  opening.catch(() => {
    opening = null;
  });
  return opening;
}

/**
 * @template T
 * @param {IDBTransactionMode} mode
 * @param {(store: IDBObjectStore) => IDBRequest<T>} work
 * @returns {Promise<T>} the request's result once the transaction is done
 */
async function store(mode, work) {
  const tx = (await db()).transaction(STORE, mode);
  const request = work(tx.objectStore(STORE));
  // Committed at once: a write the page leaves to commit on its own is lost if the page goes first.
  if (mode === "readwrite") tx.commit();
  await new Promise((resolve, reject) => {
    tx.oncomplete = resolve;
    tx.onerror = tx.onabort = () => reject(tx.error);
  });
  return request.result;
}

/**
 * @param {unknown} session
 * @param {FileSystemDirectoryHandle} handle
 */
export const remember = (session, handle) =>
  store("readwrite", (s) => s.put({ handle, name: handle.name }, String(session)));
/**
 * The session's folder: {handle, name}, or undefined.
 * @param {unknown} session
 * @returns {Promise<{ handle: FileSystemDirectoryHandle, name: string } | undefined>}
 */
export const recall = (session) => store("readonly", (s) => s.get(String(session)));
/** @param {unknown} session */
export const forget = (session) => store("readwrite", (s) => s.delete(String(session)));

/**
 * "granted", "prompt" or "denied" for reading and writing.
 * @param {FileSystemDirectoryHandle} handle
 */
export const permission = (handle) => handle.queryPermission({ mode: "readwrite" });
/**
 * Asks the user (needs a click); resolves to the new state.
 * @param {FileSystemDirectoryHandle} handle
 */
export const allow = (handle) => handle.requestPermission({ mode: "readwrite" });

/**
 * Whether the folder is still there (gone or renamed: a NotFoundError; other errors are said when it is read).
 * @param {FileSystemDirectoryHandle} handle
 */
export async function reachable(handle) {
  try {
    for await (const _ of handle.keys()) break;
    return true;
  } catch (error) {
    return error?.name !== "NotFoundError";
  }
}

/**
 * `work(item)` for every item, `width` at a time (the API's calls are slow one by one, fast together).
 * @template I, R
 * @param {I[]} items
 * @param {(item: I) => Promise<R>} work
 * @param {number} [width]
 * @returns {Promise<R[]>} the results in the items' order
 */
async function together(items, work, width = 64) {
  const results = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return results;
}

/**
 * The folder's files, compared with `known` ({path: [size, mtime]}, what Python has):
 * {changed: [{path, size, mtime, data: Uint8Array}], gone: [path], skipped: [folder], capped: n}.
 * Only new and changed files (size or lastModified differ) are read; at most `maxFiles` files of
 * up to `maxFileBytes`, `maxTotalBytes` in all, are taken in path order (the rest are counted in
 * `capped`).
 * @param {FileSystemDirectoryHandle} handle
 * @param {Record<string, [number, number]>} [known]
 * @param {{ maxFiles?: number, maxFileBytes?: number, maxTotalBytes?: number }} [limits]
 */
export async function scan(
  handle,
  known = {},
  { maxFiles = 10_000, maxFileBytes = 25 * 1024 * 1024, maxTotalBytes = 200 * 1024 * 1024 } = {},
) {
  /** @type {[string, FileSystemFileHandle][]} */
  const entries = [];
  /** @type {string[]} */
  const skipped = [];
  /**
   * @param {FileSystemDirectoryHandle} folder
   * @param {string} prefix
   * @returns {Promise<void>}
   */
  const walk = async (folder, prefix) => {
    /** @type {Promise<void>[]} */
    const below = [];
    for await (const [name, entry] of folder.entries()) {
      const path = prefix + name;
      if (entry.kind === "file") {
        if (!name.endsWith(SWAP)) entries.push([path, /** @type {FileSystemFileHandle} */ (entry)]);
      } else if (SKIPPED_FOLDERS.includes(name)) skipped.push(path);
      else below.push(walk(/** @type {FileSystemDirectoryHandle} */ (entry), `${path}/`).catch(() => {})); // a folder removed meanwhile: gone
    }
    await Promise.all(below);
  };
  await walk(handle, "");
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const taken = entries.slice(0, maxFiles);
  let capped = entries.length - taken.length;
  // A file deleted between the listing and getFile() (an editor's temporary file) is not there.
  const files = await together(taken, ([, entry]) => entry.getFile().catch(() => null));
  /** @type {Set<string>} */
  const seen = new Set();
  /** @type {[string, File][]} */
  const wanted = [];
  let total = 0;
  taken.forEach(([path], index) => {
    const file = files[index];
    if (!file) return;
    if (file.size > maxFileBytes || total + file.size > maxTotalBytes) {
      capped += 1;
      return;
    }
    total += file.size;
    seen.add(path);
    const was = known[path];
    if (!was || was[0] !== file.size || was[1] !== file.lastModified) wanted.push([path, file]);
  });
  // A file changed again while it is read is read at the next look (its lastModified moved on).
  const read = await together(wanted, async ([path, file]) => {
    try {
      return { path, size: file.size, mtime: file.lastModified, data: new Uint8Array(await file.arrayBuffer()) };
    } catch {
      return null;
    }
  });
  const changed = read.filter(Boolean);
  const gone = Object.keys(known).filter((path) => !seen.has(path));
  return { changed, gone, skipped: skipped.sort(), capped };
}

/**
 * @param {FileSystemDirectoryHandle} handle
 * @param {string} path
 * @param {boolean} create
 * @returns {Promise<[FileSystemDirectoryHandle, string]>} the folder that holds `path`, and the file's name
 */
async function parentOf(handle, path, create) {
  const parts = path.split("/");
  const name = parts.pop();
  let folder = handle;
  for (const part of parts) folder = await folder.getDirectoryHandle(part, { create });
  return [folder, name];
}

/**
 * Writes `data` (Uint8Array) at `path`, folders created; resolves to [size, lastModified]. Unless
 * `replace`, a file already there (one the workspace did not read: over its limits, or in a folder
 * it skips) is not overwritten: rejects with a sentence that says so.
 * @param {FileSystemDirectoryHandle} handle
 * @param {string} path
 * @param {Uint8Array<ArrayBuffer>} data
 * @param {boolean} replace
 * @returns {Promise<[number, number]>}
 */
export async function write(handle, path, data, replace) {
  const [folder, name] = await parentOf(handle, path, true);
  if (
    !replace &&
    (await folder.getFileHandle(name).then(
      () => true,
      (error) => error?.name !== "NotFoundError",
    ))
  ) {
    throw new Error(
      "a file of that name is in the folder but was not read (over the workspace's limits or in a skipped folder), so it was not overwritten",
    );
  }
  const entry = await folder.getFileHandle(name, { create: true });
  const writable = await entry.createWritable();
  await writable.write(data);
  await writable.close();
  const file = await entry.getFile();
  return [file.size, file.lastModified];
}

/**
 * Deletes the file at `path` (its folders stay: they are the user's).
 * @param {FileSystemDirectoryHandle} handle
 * @param {string} path
 */
export async function remove(handle, path) {
  try {
    const [folder, name] = await parentOf(handle, path, false);
    await folder.removeEntry(name);
  } catch (error) {
    if (error?.name !== "NotFoundError") throw error;
  }
}
