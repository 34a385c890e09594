// Starts the first screen (web/early.js: drawn from IndexedDB before the app's modules and Python)
// as soon as the page's head is read. A classic script, not a module script: the browser runs a
// module script only when its scheduling of module scripts comes round, which can be well after
// the module has arrived; a dynamic import runs it as soon as it and its imports are here.
import("./early.js").catch((error) => console.warn("py-agent: the first screen is drawn by the app instead", error));

// Meanwhile it opens the app's IndexedDB, without a version: the one stored, which web/early.js
// uses if it is the one web/idb.js expects (web/idb.js opens it again otherwise); when there is
// none yet, creating it is left to web/idb.js (the upgrade is aborted here). Not on a first visit
// (no service worker answers the page yet): there is nothing stored to read then, and a new
// profile's storage is slow to start.
if (!navigator.serviceWorker || navigator.serviceWorker.controller) {
  window.pyAgentEarlyDatabase = new Promise((resolve) => {
    let request;
    try {
      request = indexedDB.open("py-agent");
    } catch {
      resolve(null);
      return;
    }
    request.onupgradeneeded = () => request.transaction.abort();
    request.onsuccess = () => resolve(request.result);
    request.onerror = (event) => {
      event.preventDefault();
      resolve(null);
    };
  });
}
