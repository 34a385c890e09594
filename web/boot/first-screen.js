// @ts-check
// When the first screen is shown: Python's start waits for it (web/boot/boot.js).
//
// Python's start holds the page's thread for a while (instantiating the runtime, starting the
// interpreter, importing): the page's first screen, which web/boot/early.js (or else web/app.js) draws
// from IndexedDB meanwhile, goes first. Python's start (Pyodide's loader, which then compiles and
// instantiates the runtime) waits for it, at most FIRST_SCREEN_MS; the runtime's download goes on
// meanwhile. Work moved beside the first screen (compiling earlier, reading the snapshot earlier)
// took the first screen's time on two busy cores: see BENCHMARKS.md, "Time to ready". Once
// web/boot/early.js's drawing is painted, Python's start does not wait for web/app.js to draw the same
// screen again with its own views: that runs while the runtime compiles and the snapshot is read.
const FIRST_SCREEN_MS = 300;
/** @type {() => void} */
let firstScreenResolve;
/** @type {Promise<void>} */
const firstScreenPromise = new Promise((resolve) => {
  firstScreenResolve = resolve;
});

/** Called by web/app.js once its first screen is painted (or when it has none to draw). */
export function firstScreenDrawn() {
  firstScreenResolve();
}

// Once web/boot/early.js has drawn the first screen (<html data-early="drawn">) and it is painted.
/** @type {Promise<void>} */
const earlyScreenPainted = new Promise((resolve) => {
  const root = document.documentElement;
  const drawn = () => {
    if (root.dataset.early !== "drawn") return false;
    requestAnimationFrame(() => setTimeout(resolve, 0)); // a rAF callback runs just before the frame is painted
    return true;
  };
  if (drawn()) return;
  const observer = new MutationObserver(() => drawn() && observer.disconnect());
  observer.observe(root, { attributes: true, attributeFilter: ["data-early"] });
});

/**
 * Settles once the first screen is painted (web/boot/early.js's or web/app.js's), at most FIRST_SCREEN_MS from now.
 * @returns {Promise<void>}
 */
export function firstScreenShown() {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  return Promise.race([
    firstScreenPromise,
    earlyScreenPainted,
    new Promise((resolve) => (timer = setTimeout(resolve, FIRST_SCREEN_MS))),
  ]).finally(() => clearTimeout(timer));
}
