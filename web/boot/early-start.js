// @ts-check
// Starts the first screen (web/boot/early.js: drawn from IndexedDB before the app's modules and Python)
// as soon as the page's head is read. A classic script, not a module script: the browser runs a
// module script only when its scheduling of module scripts comes round, which can be well after
// the module has arrived; a dynamic import runs it once it and its imports are here (which can
// still be late: the browser handles the arriving files of the page's head first, see below).
performance.mark("py-agent:early-start");

// An MCP server's sign-in popup (Settings → MCP servers, web/ui/mcp-settings.js) comes back to this
// page with the authorization server's answer: hand it to the page that opened it, and close.
// (Not by the window's name: browsers clear it when a window goes to another site and back.)
{
  const answer = new URLSearchParams(location.search); // a block: no page global
  if (window.opener && answer.has("state") && (answer.has("code") || answer.has("error"))) {
    window.opener.postMessage({ ...Object.fromEntries(answer), type: "py-agent-mcp-oauth" }, location.origin);
    window.close();
  }
}
import("./early.js").catch((error) => console.warn("py-agent: the first screen is drawn by the app instead", error));

// Meanwhile it opens the app's IndexedDB, without a version: the one stored, which web/boot/early.js
// uses if it is the one web/boot/idb.js expects (web/boot/idb.js opens it again otherwise); when there is
// none yet, creating it is left to web/boot/idb.js (the upgrade is aborted here). Not on a first visit
// (no service worker answers the page yet): there is nothing stored to read then, and a new
// profile's storage is slow to start.
//
// And it reads what the first screen shows, in one transaction as soon as the database is open:
// the sessions' records (as web/boot/idb.js listSessions) and, for the session in the address
// (#/s/<id>), its record and its last entries (where web/boot/idb.js recentMessages starts). Modules
// are evaluated late while the page loads (measured: often only once it is parsed, 100-250 ms
// in), and IndexedDB takes a while to answer: this way its answer is usually there when
// web/boot/early.js runs. web/boot/early.js uses these records only if the database is the version
// web/boot/idb.js expects; they are records as stored, read here without interpreting them.
// (In a function: a classic script's names would be the page's globals.)
(() => {
  // The last entries read with the session's record: as many as web/boot/idb.js recentMessages reads
  // first for the first screen's messages (it reads on from there when they are not enough).
  const EARLY_ENTRIES = 200;

  // A first visit (no service worker has the site yet) asks for the runtime's files at once, from the
  // network, while the page's scripts load: the WebAssembly and the standard library's zip that
  // index.html names (as the build writes them), and the runtime's JavaScript. A later visit asks
  // for none of them here: the first two come from Cache Storage when Pyodide asks (preloaded, their
  // 14 MB were handed to the page's thread while it drew the first screen: BENCHMARKS.md, "Time to
  // ready"), the JavaScript once the first screen is drawn (web/boot/early.js: parsed with the
  // page's head, it held up the first screen's files).
  if (!navigator.serviceWorker?.controller) {
    const preload = (/** @type {string} */ href, /** @type {string} */ rel, /** @type {string} */ as = "") => {
      const link = document.createElement("link");
      link.rel = rel;
      link.href = href;
      if (as) {
        link.as = as;
        link.crossOrigin = "anonymous"; // as Pyodide's fetch() asks for them
      }
      document.head.append(link);
    };
    const named = document.querySelector('meta[name="py-agent-first-visit-preloads"]')?.getAttribute("content");
    for (const href of (named ?? "").split(/\s+/).filter(Boolean)) preload(href, "preload", "fetch");
    preload("pyodide/pyodide.asm.js", "modulepreload");
  }
  if (navigator.serviceWorker && !navigator.serviceWorker.controller) return;
  const parsed = () => {
    showFrame();
    window.pyAgentEarlyReadAhead = startReadAhead();
  };
  if (document.readyState === "loading") document.addEventListener("readystatechange", parsed, { once: true });
  else parsed();
  window.pyAgentEarlyDatabase = new Promise((resolve) => {
    let request;
    try {
      request = indexedDB.open("py-agent");
    } catch {
      resolve(null);
      return;
    }
    request.onupgradeneeded = () => request.transaction.abort();
    request.onsuccess = () => {
      performance.mark("py-agent:early-db-open");
      resolve(request.result);
    };
    request.onerror = (event) => {
      event.preventDefault();
      resolve(null);
    };
  });
  window.pyAgentEarlyRecords = window.pyAgentEarlyDatabase.then((db) => (db ? readFirstScreen(db) : null));

  // The app's frame, with its message box focused, as soon as the page is parsed: the box takes
  // typing then, before web/boot/early.js (a module: evaluated 50-500 ms later on a busy page, after
  // the head's other modules) draws the sessions and the transcript into it. The boot screen comes
  // back if the boot fails before that drawing watches for it (web/boot/early.js, showApp).
  function showFrame() {
    const root = document.documentElement;
    const app = document.getElementById("app");
    const boot = document.getElementById("boot-screen");
    const input = document.getElementById("input");
    const failed = () => root.dataset.state === "error" || root.dataset.app === "error";
    if (!app || !boot || !input || failed() || !app.hidden) return;
    boot.hidden = true;
    app.hidden = false;
    const active = document.activeElement;
    if (!active || active === document.body) input.focus({ preventScroll: true });
    performance.mark("py-agent:early-frame");
    const watch = new MutationObserver(() => {
      if (!failed()) return;
      watch.disconnect();
      boot.hidden = false;
      app.hidden = true;
    });
    watch.observe(root, { attributes: true, attributeFilter: ["data-state", "data-app"] });
  }

  // The worker that reads the kept memory snapshot and the packages off the page's thread
  // (web/boot/read-ahead.js), started once the page is parsed (started with the page's head, it
  // held up the frame by ~20 ms): web/boot/site-cache.js readAhead hands it its request once
  // web/boot/boot.js has manifest.json. Started there, it took ~200 ms to load and run, with the
  // runtime's start waiting for its first answer (BENCHMARKS.md, "Time to ready"). What it reports
  // before then (only a failure to load) is held for readAhead.
  function startReadAhead() {
    try {
      const worker = new Worker("boot/read-ahead.js", { type: "module", name: "py-agent read-ahead" });
      /** @type {(string | null)[]} */
      const failures = [];
      worker.onerror = (event) => {
        event.preventDefault();
        failures.push(event.message ?? null);
      };
      return { worker, failures };
    } catch {
      return null;
    }
  }

  function readFirstScreen(db) {
    const match = /^#\/s\/(.+)$/.exec(location.hash);
    let id = null;
    try {
      id = match ? decodeURIComponent(match[1]) : null;
    } catch {
      id = null;
    }
    return new Promise((resolve) => {
      const read = { records: null, count: null, session: null };
      let tx;
      try {
        tx = db.transaction(["sessions", "entries"], "readonly");
        const sessions = tx.objectStore("sessions");
        const records = sessions.index("updated").getAll();
        records.onsuccess = () => (read.records = records.result);
        const count = sessions.count();
        count.onsuccess = () => (read.count = count.result);
        if (id !== null) {
          const entryStore = tx.objectStore("entries");
          const record = sessions.get(id);
          if (typeof entryStore.getAllRecords === "function") {
            // The last entries read beside the record, newest first (not after it, from where its
            // count says they start): one round trip to IndexedDB less before the first screen.
            const last = entryStore.getAllRecords({
              query: IDBKeyRange.bound([id, -Infinity], [id, Infinity]),
              count: EARLY_ENTRIES,
              direction: "prev",
            });
            record.onsuccess = () => {
              read.session = { id, record: record.result ?? null, lower: 0, entries: null };
            };
            last.onsuccess = () => {
              if (!read.session?.record) return;
              const entries = last.result.map((r) => r.value).reverse();
              read.session.lower = entries.length ? entries[0].seq : 0;
              read.session.entries = entries;
            };
          } else {
            record.onsuccess = () => {
              const total = record.result?.meta?.entryCount;
              const lower = Math.max(0, (Number.isInteger(total) ? total : 0) - EARLY_ENTRIES);
              read.session = { id, record: record.result ?? null, lower, entries: null };
              if (!record.result) return;
              const entries = entryStore.getAll(IDBKeyRange.bound([id, lower], [id, Infinity], false, true));
              entries.onsuccess = () => (read.session.entries = entries.result);
            };
          }
        }
      } catch {
        resolve(null); // another schema (web/boot/idb.js upgrades it): web/boot/early.js reads it itself
        return;
      }
      tx.oncomplete = () => {
        performance.mark("py-agent:early-records");
        resolve(read);
      };
      tx.onabort = () => resolve(null);
      tx.onerror = (event) => event.preventDefault();
    });
  }
})();
