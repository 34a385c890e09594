// @ts-check
// Pyodide instances started beside the app's own, one at a time: the memory-snapshot worker
// (web/boot/site-cache.js makeSnapshot) and the python tool's interpreters (web/sandbox/host.js).
// Compiling Pyodide (a 10 MB WebAssembly module, and its optimizing tier-up in the background)
// is the largest transient memory a renderer of this app takes; two at once double the peak, and
// where the browser keeps the sandbox frames in the page's process (Chromium keeps them apart:
// docs/web-architecture.md, "A renderer's memory") they would share one. A start waits for the one
// under way to end (ready, failed or stopped) before it begins.

let last = Promise.resolve();

/**
 * Runs `start` (returning a promise that settles once that Pyodide is up, or gave up) after every
 * start asked for before it has settled. Resolves or rejects as `start` does.
 * @template T
 * @param {() => Promise<T>} start
 * @returns {Promise<T>}
 */
export function startPyodideInTurn(start) {
  const turn = last.then(() => start());
  last = turn.then(
    () => undefined,
    () => undefined,
  );
  return turn;
}
