// @ts-check
// The page's side of grep's regex search (py_agent/browser/grep.py calls start() through
// globalThis.pyAgentSandbox.grep). The search runs in a same-origin dedicated worker
// (grep-worker.js): a catastrophic pattern such as (a+)+$ spins there, not on the page's main
// thread, and the worker is terminated when the time limit passes or the run is aborted.
// One finished worker is kept warm for the next search.

/** @typedef {import("../messages").GrepRequest} GrepRequest */
/** @typedef {import("../messages").GrepReply} GrepReply */
/** @typedef {import("../messages").GrepResult} GrepResult */

const WORKER_URL = new URL("./grep-worker.js", import.meta.url);
/** @type {Worker | null} */
let warm = null;
let runs = 0;

/**
 * Start a search: {source, flags} of a RegExp, the most line numbers to return (`limit`) and
 * the time limit. Returns {result, add(items), end(), abort()}: send the files with add()
 * ([[index, text], ...]; false once the run has ended) and end(); `result` resolves (never
 * rejects) with {ok: true, matches} or {ok: false, timedOut | aborted | error}, and durationMs.
 * @param {{source: string, flags: string, limit: number, timeoutMs?: number}} search
 */
export function start({ source, flags, limit, timeoutMs = 5000 }) {
  const started = performance.now();
  const id = ++runs;
  const worker = warm ?? new Worker(WORKER_URL, { name: "py-agent grep" });
  warm = null;
  /** @param {GrepRequest} message */
  const post = (message) => worker.postMessage(message);
  let settled = false;
  /** @type {(result: GrepResult) => void} */
  let resolveResult = () => {};
  /** @type {Promise<GrepResult>} */
  const result = new Promise((resolve) => (resolveResult = resolve));
  /**
   * @param {import("../messages").GrepOutcome} value
   * @param {boolean} reusable whether the worker may serve the next search
   */
  const finish = (value, reusable) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    worker.onmessage = null;
    worker.onerror = null;
    if (reusable && warm === null) warm = worker;
    else worker.terminate();
    resolveResult({ ...value, durationMs: Math.round(performance.now() - started) });
  };
  const timer = setTimeout(() => finish({ ok: false, timedOut: true }, false), timeoutMs);
  /** @param {MessageEvent<GrepReply>} event */
  worker.onmessage = ({ data }) => {
    if (data?.id !== id) return;
    if (data.type === "done") finish({ ok: true, matches: data.matches }, true);
    else if (data.type === "error") finish({ ok: false, error: data.message }, true);
  };
  worker.onerror = (event) => {
    event.preventDefault();
    finish({ ok: false, error: event.message || "the search worker could not run" }, false);
  };
  post({ type: "start", id, source, flags, limit });
  return {
    result,
    /** @param {import("../messages").GrepFile[]} items */
    add(items) {
      if (settled) return false;
      post({ type: "files", id, items });
      return true;
    },
    end() {
      if (!settled) post({ type: "end", id });
    },
    abort() {
      finish({ ok: false, aborted: true }, false);
    },
  };
}
