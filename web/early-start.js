// Starts web/early.js (the first screen, drawn from IndexedDB before the app's modules and Python)
// as soon as the page's head is read. A classic script, not a module script: the browser runs a
// module script only when its scheduling of module scripts comes round, which can be well after
// the module has arrived; a dynamic import runs it as soon as it and its imports are here.
import("./early.js").catch((error) => console.warn("py-agent: the first screen is drawn by the app instead", error));
