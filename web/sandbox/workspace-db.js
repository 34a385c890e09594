// @ts-check
// Workspace files in IndexedDB: database "py-agent-workspaces", apart from the app's own
// database, so a workspace can be cleared or quota-checked on its own.
//
// Store "files", key [sessionId, path], record {session, path, kind: "text"|"bytes", data:
// string|Uint8Array, mtime}. Python's IndexedDBWorkspaceStore (py_agent/browser/workspace.py)
// calls these functions; every one returns a Promise and rejects with a readable Error.
// Store "changes" (version 2), key [sessionId, call, path]: what the agent's tool calls changed,
// kept for undo until the session is deleted (py_agent/tools/history.py, records as JSON text).

const DB_NAME = "py-agent-workspaces";
const DB_VERSION = 2;
const STORE = "files";
const CHANGES = "changes";

/** @type {Promise<IDBDatabase> | null} */
let opening = null;

/**
 * @param {any} error what IndexedDB rejected or threw
 * @returns {Error}
 */
function describe(error) {
  if (error?.name === "QuotaExceededError") {
    return new Error("The browser's storage is full (quota exceeded): delete files or sessions to make room");
  }
  return error instanceof Error ? error : new Error(String(error?.message ?? error));
}

/** @returns {Promise<IDBDatabase>} */
export function openDb() {
  opening ??= new Promise((resolve, reject) => {
    let request;
    try {
      request = indexedDB.open(DB_NAME, DB_VERSION);
    } catch (error) {
      reject(describe(error));
      return;
    }
    request.onupgradeneeded = () => {
      const db = request.result;
      if (!db.objectStoreNames.contains(STORE)) {
        const store = db.createObjectStore(STORE, { keyPath: ["session", "path"] });
        store.createIndex("session", "session", { unique: false });
      }
      if (!db.objectStoreNames.contains(CHANGES))
        db.createObjectStore(CHANGES, { keyPath: ["session", "call", "path"] });
    };
    request.onsuccess = () => {
      const db = request.result;
      db.onversionchange = () => {
        db.close();
        opening = null;
      };
      resolve(db);
    };
    request.onerror = () => reject(describe(request.error));
    request.onblocked = () =>
      reject(new Error("The workspace database is blocked by another tab: close it and reload"));
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
 * @param {string} [name] the store
 * @returns {Promise<T>} the request's result once the transaction is done
 */
async function transaction(mode, work, name = STORE) {
  const db = await openDb();
  const tx = db.transaction(name, mode);
  const store = tx.objectStore(name);
  const result = work(store);
  // Committed at once: a write the page leaves to commit on its own is lost if the page goes first.
  if (mode === "readwrite") tx.commit();
  await new Promise((resolve, reject) => {
    tx.oncomplete = resolve;
    tx.onerror = () => reject(describe(tx.error));
    tx.onabort = () => reject(describe(tx.error ?? new Error("The workspace transaction was aborted")));
  });
  return result instanceof IDBRequest ? result.result : result;
}

/** @param {string} session */
function range(session) {
  // [session] sorts before every [session, path] and [session, []] after (arrays follow strings).
  return IDBKeyRange.bound([session], [session, []]);
}

/** Every file of a session: [{path, kind, data, mtime}]; malformed records are skipped. */
/** @param {unknown} session */
export async function loadAll(session) {
  const records = await transaction("readonly", (store) => store.getAll(range(String(session))));
  return records.filter(
    (r) =>
      r &&
      typeof r.path === "string" &&
      ((r.kind === "text" && typeof r.data === "string") || (r.kind === "bytes" && r.data instanceof Uint8Array)),
  );
}

/**
 * @param {unknown} session
 * @param {string} path
 * @param {"text" | "bytes"} kind
 * @param {string | Uint8Array} data
 * @param {number} mtime
 */
export async function put(session, path, kind, data, mtime) {
  await transaction("readwrite", (store) => store.put({ session: String(session), path, kind, data, mtime }));
}

/**
 * @param {unknown} session
 * @param {string} path
 */
export async function remove(session, path) {
  await transaction("readwrite", (store) => store.delete([String(session), path]));
}

/** @param {unknown} session */
export async function clear(session) {
  await transaction("readwrite", (store) => store.delete(range(String(session))));
}

/** Session ids that have a workspace. */
/** @returns {Promise<unknown[]>} */
export async function sessions() {
  const keys = await transaction("readonly", (store) => store.index("session").getAllKeys());
  return [...new Set(keys.map((key) => key[0]))];
}

/** The changes kept for undo of a session: [record JSON text]. */
/**
 * @param {unknown} session
 * @returns {Promise<string[]>}
 */
export async function loadChanges(session) {
  const records = await transaction("readonly", (store) => store.getAll(range(String(session))), CHANGES);
  return records.filter((r) => r && typeof r.json === "string").map((r) => r.json);
}

/** Keep (or replace) one change: `record` is its JSON text, with `call` and `path`. */
/**
 * @param {unknown} session
 * @param {string} call
 * @param {string} path
 * @param {string} json
 */
export async function putChange(session, call, path, json) {
  await transaction("readwrite", (store) => store.put({ session: String(session), call, path, json }), CHANGES);
}

/** @param {unknown} session */
export async function clearChanges(session) {
  await transaction("readwrite", (store) => store.delete(range(String(session))), CHANGES);
}
