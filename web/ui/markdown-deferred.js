// @ts-check
// web/ui/markdown.js (marked, DOMPurify, highlight.js), loaded once the app is ready rather than with
// the page: until then the text of a message is drawn as plain text, and drawn again as Markdown
// once it has loaded. Evaluated and used for the first time while Python starts, they took
// ~100 ms of the page's thread, and the app's ready waited for it (BENCHMARKS.md, "Time to ready").
// The views call these functions as they would markdown.js's; web/app.js calls loadMarkdown() once
// the app is ready.

import { appScriptsFault } from "../boot/host-faults.js";
import { toast } from "./toasts.js";

/** @typedef {typeof import("./markdown.js")} MarkdownModule */
/** @typedef {{ highlight?: boolean, streaming?: boolean }} MarkdownOptions */

/** @type {MarkdownModule | null} */
let markdown = null;
/** @type {Promise<void> | null} */
let loading = null;
/** @type {Map<HTMLElement, [unknown, MarkdownOptions]>} elements drawn as plain text, to draw again */
const plain = new Map();
/** @type {Map<HTMLElement, [unknown, MarkdownOptions]>} placeholders of renderMarkdown's fragments */
const holders = new Map();

/** Loads web/ui/markdown.js (once) and draws again what was drawn as plain text meanwhile. */
export function loadMarkdown() {
  loading ??= import("./markdown.js").then(
    (module) => {
      markdown = module;
      for (const [el, [text, options]] of plain) {
        el.classList.remove("md-plain");
        if (el.isConnected) module.renderMarkdownInto(el, text, options);
      }
      plain.clear();
      for (const [holder, [text, options]] of holders) holder.replaceWith(module.renderMarkdown(text, options));
      holders.clear();
    },
    (error) => {
      loading = null; // tried again at the next call
      console.warn("py-agent: web/ui/markdown.js did not load; messages stay plain text", error);
      explainFailure(error);
    },
  );
  return loading;
}

// Said on the page, naming the file and the fix when the host got one wrong (its type, a 404...):
// the module graph's failure itself names nothing.
/** @param {any} error */
async function explainFailure(error) {
  const manifest = window.pyAgent?.manifest;
  const fault = manifest
    ? await appScriptsFault((path) => new URL(path, document.baseURI).href, manifest).catch(() => null)
    : null;
  const why = fault ? `${fault.message} ${fault.hint ?? ""}`.trim() : `(${error?.message ?? error})`;
  toast(`Messages are shown as plain text: the Markdown renderer did not load. ${why}`, "error", {
    id: "markdown",
  });
}

/**
 * @param {HTMLElement} el
 * @param {unknown} text
 * @param {MarkdownOptions} options
 */
function drawPlain(el, text, options) {
  el.textContent = String(text ?? "");
  el.classList.add("md-plain");
  plain.set(el, [text, options]);
}

/**
 * markdown.js's renderMarkdownInto, or plain text until it has loaded.
 * @param {HTMLElement} el
 * @param {unknown} text
 * @param {MarkdownOptions} [options]
 */
export function renderMarkdownInto(el, text, options = {}) {
  if (!markdown) {
    drawPlain(el, text, options);
    return;
  }
  if (plain.delete(el)) el.classList.remove("md-plain");
  markdown.renderMarkdownInto(el, text, options);
}

/**
 * markdown.js's appendMarkdownInto, or plain text until it has loaded.
 * @param {HTMLElement} el
 * @param {unknown} text
 * @param {unknown} added
 * @param {MarkdownOptions} [options]
 */
export function appendMarkdownInto(el, text, added, options = {}) {
  if (!markdown || plain.has(el)) {
    renderMarkdownInto(el, text, options);
    return;
  }
  markdown.appendMarkdownInto(el, text, added, options);
}

/**
 * markdown.js's renderMarkdown (a fragment), or a placeholder with the plain text that the
 * fragment replaces once it has loaded.
 * @param {unknown} text
 * @param {{ highlight?: boolean }} [options]
 * @returns {Node}
 */
export function renderMarkdown(text, options = {}) {
  if (markdown) return markdown.renderMarkdown(text, options);
  const holder = document.createElement("div");
  holder.className = "md-plain";
  holder.textContent = String(text ?? "");
  holders.set(holder, [text, options]);
  return holder;
}
