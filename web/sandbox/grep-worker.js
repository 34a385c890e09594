// @ts-check
// grep's regex search, in a dedicated worker so that a pattern that backtracks for ever cannot
// freeze the page: web/sandbox/grep.js starts it and terminates it at the time limit or on abort.
// The pattern arrives already translated from Python's syntax (py_agent/tools/grep_regex.py).
//
// Messages in: GrepRequest (start, files with their text normalized to LF, end); out: GrepReply
// (done: at most `limit` line numbers in all, sent early once the limit is reached; error: RegExp
// refused the pattern). Both in web/messages.d.ts.
// A line is text.split("\n") without a last empty one, as grep's Python side splits it.
"use strict";

/** @typedef {import("../messages").GrepRequest} GrepRequest */
/** @typedef {import("../messages").GrepReply} GrepReply */
/** @typedef {import("../messages").GrepMatch} GrepMatch */

const scope = /** @type {import("../messages").WorkerScope<GrepRequest, GrepReply>} */ (/** @type {unknown} */ (self));

/** @type {{id: number, regex: RegExp, limit: number, count: number, matches: GrepMatch[]} | null} */
let run = null;

scope.onmessage = ({ data }) => {
  if (data.type === "start") {
    run = null;
    let regex;
    try {
      regex = new RegExp(data.source, data.flags);
    } catch (error) {
      scope.postMessage({ type: "error", id: data.id, message: String(error?.message ?? error) });
      return;
    }
    run = { id: data.id, regex, limit: data.limit, count: 0, matches: [] };
    return;
  }
  if (run === null || data.id !== run.id) return; // a finished run's late batches
  if (data.type === "files") {
    const { regex, limit } = run;
    for (const [index, text] of data.items) {
      const lines = text.split("\n");
      if (lines.length && lines[lines.length - 1] === "") lines.pop();
      /** @type {number[] | null} */
      let hits = null;
      for (let i = 0; i < lines.length; i++) {
        if (!regex.test(lines[i])) continue;
        hits ??= [];
        hits.push(i + 1);
        if (++run.count >= limit) break;
      }
      if (hits) run.matches.push([index, hits]);
      if (run.count >= limit) {
        finish();
        return;
      }
    }
  } else if (data.type === "end") {
    finish();
  }
};

function finish() {
  if (run === null) return;
  scope.postMessage({ type: "done", id: run.id, matches: run.matches });
  run = null;
}
