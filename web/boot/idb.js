// @ts-check
// IndexedDB for py-agent: the versioned schema and the few transactions the Python storage layer
// (py_agent/app/storage.py, through py_agent/browser/idb.py) needs. Values cross into Python as
// strings (JSON, or entry lines joined by "\n"), so one call moves one string, however many
// records it touches.
//
// Schema versions: UPGRADES[i] takes the database from version i to i + 1, inside the upgrade
// transaction. Never edit a released step: add the next one (create stores or indexes, transform
// records with the transaction's cursors). Opening runs every step the stored database lacks.

export const DB_NAME = "py-agent";

/**
 * Each schema version's upgrade, run in order from the stored version: (db, the upgrade's transaction).
 * @type {((db: IDBDatabase, tx: IDBTransaction | null) => void)[]}
 */
export const UPGRADES = [
  // 1: sessions as pi's entries (one record per entry), metadata, drafts, settings, keys, providers.
  (db) => {
    const sessions = db.createObjectStore("sessions", { keyPath: "id" });
    sessions.createIndex("updated", "updated");
    db.createObjectStore("entries", { keyPath: ["sessionId", "seq"] });
    db.createObjectStore("drafts", { keyPath: "sessionId" });
    db.createObjectStore("settings");
    db.createObjectStore("keys");
    db.createObjectStore("providers");
  },
];

export const SCHEMA_VERSION = UPGRADES.length;

const KV_STORES = new Set(["settings", "keys", "providers"]);

function storageError(error, fallback = "Storage failed") {
  const e = error instanceof Error || error instanceof DOMException ? error : new Error(String(error ?? fallback));
  const wrapped = new Error(`${e.name || "Error"}: ${e.message || fallback}`);
  wrapped.name = e.name || "Error";
  return wrapped;
}

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(storageError(req.error));
  });
}

function done(tx) {
  // Resolves when the transaction has committed: a commit-time failure (quota) rejects.
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(storageError(tx.error, "Transaction aborted"));
    // A failed request (e.g. add() of an entry another tab wrote) must abort the transaction:
    // calling preventDefault() here would let the rest commit (a stale tab's metadata over the
    // current one) and report success. The abort is reported once, by onabort.
  });
}

/**
 * Runs `work` (requests only: nothing awaited) in one readwrite transaction, all or nothing, and
 * commits it at once. A transaction left to commit on its own needs the page to see its requests
 * succeed first, and is aborted when the page goes before that (a reload right after Enter loses
 * the message: tests/browser/test_first_token.py); one committed is finished by the browser.
 * @param {IDBDatabase} db
 * @param {string | string[]} stores
 * @param {IDBTransactionOptions} options
 * @param {(tx: IDBTransaction) => unknown} work
 */
async function write(db, stores, options, work) {
  const tx = db.transaction(stores, "readwrite", options);
  const finished = done(tx);
  try {
    work(tx);
    tx.commit();
  } catch (error) {
    // A request that throws at once must not leave the others to commit.
    finished.catch(() => {});
    try {
      tx.abort();
    } catch {
      // already finished
    }
    throw storageError(error);
  }
  await finished;
}

function sessionRange(sessionId) {
  return IDBKeyRange.bound([sessionId, -Infinity], [sessionId, Infinity]);
}

/** @param {{name?: string, version?: number, onVersionChange?: () => void}} [options] */
export function openDatabase({ name = DB_NAME, version = SCHEMA_VERSION, onVersionChange } = {}) {
  return new Promise((resolve, reject) => {
    let req;
    try {
      req = indexedDB.open(name, version);
    } catch (error) {
      reject(storageError(error, "IndexedDB is not available"));
      return;
    }
    req.onupgradeneeded = (event) => {
      const db = req.result;
      for (let v = event.oldVersion; v < version; v += 1) UPGRADES[v](db, req.transaction);
    };
    req.onblocked = () => {
      const error = new Error("blocked: another tab keeps an older version of the app open");
      error.name = "BlockedError";
      reject(error);
    };
    req.onerror = () => {
      if (req.error?.name === "VersionError") {
        // Data of a newer app version: never touch it; the newer page (a reload) can read it.
        const error = new Error(
          `VersionError: this browser holds py-agent data in a newer format than this page knows (version ${version}): reload the page to get the current app. Nothing was changed.`,
        );
        error.name = "VersionError";
        reject(error);
        return;
      }
      reject(storageError(req.error, "IndexedDB could not be opened"));
    };
    req.onsuccess = () => {
      const db = req.result;
      db.onversionchange = () => {
        db.close();
        onVersionChange?.();
      };
      resolve(new Storage(db));
    };
  });
}

/**
 * A connection opened without a version (web/boot/early-start.js, as the page starts) as a Storage, if
 * it is this schema's version with its stores; otherwise null, and the connection is closed (so
 * that openDatabase() can upgrade it).
 * @param {IDBDatabase | null} db
 * @param {{version?: number, onVersionChange?: () => void}} [options]
 */
export function adoptDatabase(db, { version = SCHEMA_VERSION, onVersionChange } = {}) {
  if (!db) return null;
  const stores = ["sessions", "entries", "drafts", "settings", "keys", "providers"];
  if (db.version !== version || !stores.every((name) => db.objectStoreNames.contains(name))) {
    db.close();
    return null;
  }
  db.onversionchange = () => {
    db.close();
    onVersionChange?.();
  };
  return new Storage(db);
}

export class Storage {
  constructor(db) {
    this.db = db;
  }

  close() {
    this.db.close();
  }

  async appendEntries(sessionId, firstSeq, linesJson, recordJson, clearDraft) {
    const lines = JSON.parse(linesJson);
    const record = JSON.parse(recordJson);
    await write(this.db, ["entries", "sessions", "drafts"], { durability: "strict" }, (tx) => {
      const entries = tx.objectStore("entries");
      lines.forEach((line, i) => {
        entries.add({ sessionId, seq: firstSeq + i, line });
      });
      tx.objectStore("sessions").put(record);
      if (clearDraft) tx.objectStore("drafts").delete(sessionId);
    });
  }

  async putSessionRecord(recordJson) {
    const record = JSON.parse(recordJson);
    await write(this.db, "sessions", {}, (tx) => tx.objectStore("sessions").put(record));
  }

  async loadSession(sessionId) {
    const tx = this.db.transaction(["sessions", "entries", "drafts"], "readonly");
    const [record, entries, draft] = await Promise.all([
      request(tx.objectStore("sessions").get(sessionId)),
      request(tx.objectStore("entries").getAll(sessionRange(sessionId))),
      request(tx.objectStore("drafts").get(sessionId)),
    ]);
    if (!record) return null;
    // A damaged record (not an object, no line) becomes an empty line: the Python side warns and skips it.
    const lines = entries.map((e) => (e && typeof e.line === "string" ? e.line.replace(/\n/g, " ") : ""));
    return {
      record: JSON.stringify(record),
      lines: lines.join("\n"),
      count: lines.length,
      // Damaged records are skipped when read, but their places stay taken: append after them.
      nextSeq:
        entries.length && Number.isInteger(entries[entries.length - 1]?.seq)
          ? entries[entries.length - 1].seq + 1
          : lines.length,
      draft: draft && typeof draft.message === "string" ? draft.message : null,
    };
  }

  /**
   * The last `count` messages of a session's current branch, read by the page itself (no Python):
   * the entries newest first, following the parents from the record's leaf; at most `scanLimit`
   * entries are read. Only what the page needs to draw the transcript before Python has loaded
   * the session: `{meta, items: [{entryId, message}], complete}` (`complete`: the branch's first
   * message is among them), or null (no such session, or a format this page does not read).
   * `prefetched`: the session's record and its last entries as web/boot/early-start.js read them
   * (`{id, record, lower, entries}`: the entries from sequence number `lower` on); reading goes on
   * from there when they hold too few of the branch's messages.
   */
  recentMessages(sessionId, count, scanLimit = count * 4 + 400, prefetched = null) {
    // Read in chunks of entries from the end (one getAll each, by sequence number: the record
    // says how many entries there are), newest first, until the branch has `count` messages.
    const CHUNK = count * 2 + 40;
    let meta = null;
    const found = [];
    let next; // the id of the next entry up the branch (undefined: the newest entry)
    let scanned = 0;
    const result = () => (meta ? { meta, items: found.reverse(), complete: next === null } : null);
    // The record's metadata, and where the last entries start (null: nothing this page can read).
    const start = (record) => {
      let header = null;
      try {
        header = record && typeof record.header === "string" ? JSON.parse(record.header) : null;
      } catch {
        header = null;
      }
      if (!record || typeof record.meta !== "object" || !record.meta || header?.version !== 3) return null;
      meta = record.meta;
      if (typeof meta.leafId === "string") next = meta.leafId;
      // The last CHUNK entries at least (damaged records keep their places: the sequence
      // numbers can only run ahead of the count).
      const total = Number.isInteger(meta.entryCount) ? meta.entryCount : 0;
      return Math.max(0, total - CHUNK);
    };
    // One chunk of entries (from sequence number `lower` on), newest first: the sequence number
    // to read on below, or null when the branch is complete or enough has been read.
    const take = (records, lower) => {
      for (let i = records.length - 1; i >= 0; i -= 1) {
        scanned += 1;
        let entry = null;
        try {
          entry = typeof records[i]?.line === "string" ? JSON.parse(records[i].line) : null;
        } catch {
          entry = null;
        }
        if (!entry || typeof entry.id !== "string" || (next !== undefined && entry.id !== next)) continue;
        if (entry.type === "message" && entry.message && typeof entry.message === "object") {
          found.push({ entryId: entry.id, message: entry.message });
        }
        next = entry.parentId ?? null;
        if (next === null || found.length >= count) return null;
      }
      const lowest = records.length ? records[0].seq : lower;
      return lowest > 0 && scanned < scanLimit ? lowest : null;
    };
    let from; // where to read on (undefined: from the record)
    if (prefetched?.id === sessionId && (prefetched.record === null || Array.isArray(prefetched.entries))) {
      if (start(prefetched.record) === null) return Promise.resolve(null);
      from = take(prefetched.entries, prefetched.lower);
      if (from === null) return Promise.resolve(result());
    }
    return new Promise((resolve, reject) => {
      const tx = this.db.transaction(["sessions", "entries"], "readonly");
      const entries = tx.objectStore("entries");
      const read = (lower, upper) => {
        const get = entries.getAll(IDBKeyRange.bound([sessionId, lower], [sessionId, upper], false, true));
        get.onsuccess = () => {
          const below = take(get.result, lower);
          if (below !== null) read(Math.max(0, below - CHUNK), below);
        };
      };
      if (from !== undefined) {
        read(Math.max(0, from - CHUNK), from);
      } else {
        const getRecord = tx.objectStore("sessions").get(sessionId);
        getRecord.onsuccess = () => {
          const lower = start(getRecord.result);
          if (lower !== null) read(lower, Infinity);
        };
      }
      tx.oncomplete = () => resolve(result());
      tx.onabort = () => reject(storageError(tx.error, "Transaction aborted"));
      tx.onerror = () => reject(storageError(tx.error, "Reading the session failed"));
    });
  }

  /**
   * The sessions' metadata, newest first, as JSON. `prefetched`: the records of the "updated"
   * index and the store's count as web/boot/early-start.js read them (`{records, count}`).
   */
  async listSessions(prefetched = null) {
    let records;
    let count;
    if (Array.isArray(prefetched?.records) && Number.isInteger(prefetched.count)) {
      ({ records, count } = prefetched);
    } else {
      // The records and their count in one round trip (the page's first screen waits for it).
      const store = this.db.transaction("sessions", "readonly").objectStore("sessions");
      [records, count] = await Promise.all([request(store.index("updated").getAll()), request(store.count())]);
    }
    const metas = [];
    for (let i = records.length - 1; i >= 0; i -= 1) {
      const r = records[i];
      metas.push(r && typeof r.meta === "object" && r.meta ? r.meta : { id: r?.id ?? null, corrupt: "no metadata" });
    }
    // Records without an `updated` value are not in the index: add them at the end.
    if (records.length !== count) {
      const all = await request(this.db.transaction("sessions").objectStore("sessions").getAll());
      const seen = new Set(records.map((r) => r.id));
      for (const r of all) if (!seen.has(r.id)) metas.push(r?.meta ?? { id: r?.id ?? null, corrupt: "no metadata" });
    }
    return JSON.stringify(metas);
  }

  async deleteSession(sessionId) {
    await write(this.db, ["sessions", "entries", "drafts"], {}, (tx) => {
      tx.objectStore("sessions").delete(sessionId);
      tx.objectStore("entries").delete(sessionRange(sessionId));
      tx.objectStore("drafts").delete(sessionId);
    });
  }

  async putDraft(sessionId, message) {
    await write(this.db, "drafts", {}, (tx) =>
      tx.objectStore("drafts").put({ sessionId, message, savedAt: Date.now() }),
    );
  }

  async deleteDraft(sessionId) {
    await write(this.db, "drafts", {}, (tx) => tx.objectStore("drafts").delete(sessionId));
  }

  checkStore(store) {
    if (!KV_STORES.has(store)) throw new Error(`not a key/value store: ${store}`);
  }

  async kvGet(store, key) {
    this.checkStore(store);
    const value = await request(this.db.transaction(store).objectStore(store).get(key));
    return value === undefined ? null : JSON.stringify(value);
  }

  async kvPut(store, key, json) {
    this.checkStore(store);
    const value = JSON.parse(json);
    await write(this.db, store, {}, (tx) => tx.objectStore(store).put(value, key));
  }

  async kvDelete(store, key) {
    this.checkStore(store);
    await write(this.db, store, {}, (tx) => tx.objectStore(store).delete(key));
  }

  async kvAll(store) {
    this.checkStore(store);
    const tx = this.db.transaction(store);
    const os = tx.objectStore(store);
    const [keys, values] = await Promise.all([request(os.getAllKeys()), request(os.getAll())]);
    const out = {};
    keys.forEach((k, i) => {
      out[String(k)] = values[i];
    });
    return JSON.stringify(out);
  }

  async kvClear(store) {
    this.checkStore(store);
    await write(this.db, store, {}, (tx) => tx.objectStore(store).clear());
  }
}
