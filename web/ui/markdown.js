// @ts-check
// Markdown for model output: marked (GFM) -> DOMPurify (allow-list) -> highlight.js, all vendored
// from npm by build.py. Whatever a reply contains (raw HTML, SVG, event handlers, `javascript:`
// links), only inert markup reaches the page:
// - raw HTML is sanitized by DOMPurify with the HTML profile only (no SVG, no MathML), without
//   forms, frames, styles or images;
// - links keep only absolute http(s) and mailto URLs and open in a new tab without an opener;
// - images are never loaded (they could leak the conversation through their URL): they become
//   links that the user can choose to open.
// Code is highlighted from its text (highlight.js escapes it), never from HTML.

import { Marked } from "../vendor/marked.esm.js";
import DOMPurify from "../vendor/purify.es.js";
import hljs from "../vendor/highlight.min.js";
import { h, icon, copyText, scrollRegion } from "./dom.js";

/** @typedef {import("../vendor/marked.esm.js").Token} Token */
/**
 * What renderMarkdownInto keeps on its element (`_markdown`) between calls: the text rendered in
 * finished blocks (`done`) and the rest (`rest`, rendered as `tail`).
 * @typedef {object} MarkdownState
 * @property {string} done
 * @property {string} rest
 * @property {boolean} cr whether the text read so far ends with "\r"
 * @property {ChildNode[]} tail
 * @property {boolean} highlight
 * @property {boolean} whole whether the whole text is rendered at every update
 */
/** @typedef {HTMLElement & { _markdown?: MarkdownState | null }} MarkdownElement */

const SAFE_URL = /^(?:https?:|mailto:)/i;

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    image({ href, text }) {
      const label = text || "image";
      if (!href || !SAFE_URL.test(href)) return escapeHtml(`[${label}]`);
      return `<a href="${escapeAttr(href)}" class="md-image-link">[image: ${escapeHtml(label)}]</a>`;
    },
  },
});

/**
 * @param {unknown} text
 * @returns {string}
 */
function escapeHtml(text) {
  return String(text).replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c],
  );
}

/** @param {string} text */
function escapeAttr(text) {
  return escapeHtml(text);
}

/** @type {import("../vendor/purify.es.js").Config} */
const PURIFY_CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [
    "style",
    "script",
    "form",
    "input",
    "button",
    "textarea",
    "select",
    "option",
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "link",
    "meta",
    "base",
    "img",
    "picture",
    "source",
    "video",
    "audio",
    "track",
    "svg",
    "math",
    "template",
    "dialog",
    "noscript",
  ],
  FORBID_ATTR: ["style", "srcset", "formaction", "action", "background", "poster", "ping", "target"],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: true,
  RETURN_DOM_FRAGMENT: true,
};
// Parsed once: a config passed to each sanitize() call is parsed again at every call, a good part
// of a message's cost when a page of 24 messages is rendered (web/ui/chat.js) and nothing else
// in the page uses DOMPurify.
DOMPurify.setConfig(PURIFY_CONFIG);

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.nodeName === "A") {
    const href = node.getAttribute("href") ?? "";
    if (!SAFE_URL.test(href.trim())) node.removeAttribute("href");
    else {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer nofollow");
      node.setAttribute("referrerpolicy", "no-referrer");
    }
  }
  // Only a code block's language class is kept (for highlighting); ids could clash with the app's.
  if (node.hasAttribute?.("id")) node.removeAttribute("id");
  if (
    node.hasAttribute?.("class") &&
    !(node.nodeName === "CODE" && /^language-[\w+#.-]+$/.test(node.getAttribute("class")))
  ) {
    node.removeAttribute("class");
  }
});

const HIGHLIGHT_LIMIT = 60_000;

/**
 * @param {DocumentFragment} fragment
 * @param {{ highlight: boolean }} options
 */
function decorateCode(fragment, { highlight }) {
  for (const code of fragment.querySelectorAll("pre > code")) {
    const pre = code.parentElement;
    const match = /language-([\w+#.-]+)/.exec(code.className);
    const language = match ? match[1].toLowerCase() : "";
    if (highlight && code.textContent.length < HIGHLIGHT_LIMIT) {
      const known = language && hljs.getLanguage(language);
      const result = known
        ? hljs.highlight(code.textContent, { language, ignoreIllegals: true })
        : code.textContent.length < 4000
          ? hljs.highlightAuto(code.textContent)
          : null;
      if (result) {
        // highlight.js escapes the code itself: its output is spans with hljs-* classes only.
        code.innerHTML = result.value;
        code.classList.add("hljs");
      }
    }
    const copy = h(
      "button",
      { type: "button", class: "code-copy", "aria-label": "Copy code", title: "Copy code" },
      icon("copy"),
      icon("check", "icon done"),
    );
    copy.addEventListener("click", () => copyText(code.textContent, copy));
    const bar = h("div", { class: "code-bar" }, h("span", { class: "code-lang", text: language || "text" }), copy);
    const wrapper = h("div", { class: "code-block" }, bar);
    pre.replaceWith(wrapper);
    for (const [name, value] of Object.entries(scrollRegion(language ? `${language} code` : "Code")))
      pre.setAttribute(name, value);
    wrapper.append(pre);
  }
  for (const table of fragment.querySelectorAll("table")) {
    const scroll = h("div", { class: "table-scroll", ...scrollRegion("Table") });
    table.replaceWith(scroll);
    scroll.append(table);
  }
}

/**
 * A sanitized DocumentFragment for `text` (Markdown).
 * @param {unknown} text
 * @param {{ highlight?: boolean }} [options]
 * @returns {DocumentFragment}
 */
export function renderMarkdown(text, { highlight = true } = {}) {
  let html;
  try {
    html = marked.parse(String(text ?? ""), { async: false });
  } catch {
    html = `<p>${escapeHtml(text)}</p>`;
  }
  return fragmentOf(html, highlight);
}

/**
 * @param {string} html
 * @param {boolean} highlight
 */
function fragmentOf(html, highlight) {
  const fragment = DOMPurify.sanitize(html);
  decorateCode(fragment, { highlight });
  return fragment;
}

// ---- Incremental rendering of a growing text (a streaming reply) ----
//
// A reply only grows, so the blocks it has finished are rendered once (parsed, sanitized and
// highlighted) and kept in the element; each update lexes and renders only what follows them.
// A block is finished when a blank line and a complete line starting with a non-blank character
// follow it: nothing appended later can change a block that such a line has closed (after a blank
// line, a list goes on only with an indented line or an item of its own kind, an indented code
// block only with an indented line; a fenced code block or an HTML block still open extends to
// the end of the text, so it is never followed by anything). Two things make the split unsafe, and the element then falls back to rendering the
// whole text at every update: raw HTML (an unclosed tag reaches into the blocks that follow it
// when the browser parses the HTML) and link reference definitions (they apply to the whole
// text, earlier blocks too). The element's children are at every update the same as those of
// renderMarkdown() on the same text, except that finished code blocks are highlighted while the
// text streams (tests/browser/test_markdown_stream.py checks both).

/**
 * @param {Token[] | undefined} tokens
 * @returns {boolean}
 */
function containsHtml(tokens) {
  for (const token of tokens ?? []) {
    if (token.type === "html") return true;
    if (containsHtml(token.tokens) || containsHtml(token.items)) return true;
    if (token.type === "table") {
      for (const cell of token.header) if (containsHtml(cell.tokens)) return true;
      for (const row of token.rows) for (const cell of row) if (containsHtml(cell.tokens)) return true;
    }
  }
  return false;
}

/**
 * Whether `src` up to `end` ends with a blank line (only spaces or tabs between its last two newlines).
 * @param {string} src
 * @param {number} end
 */
function endsWithBlankLine(src, end) {
  let i = end - 1;
  if (src[i] !== "\n") return false;
  i -= 1;
  while (i >= 0 && (src[i] === " " || src[i] === "\t")) i -= 1;
  return i >= 0 && src[i] === "\n";
}

/**
 * How many of `tokens` (lexed from `src`) are finished, and how many characters they span.
 * @param {Token[]} tokens
 * @param {string} src
 * @returns {{ count: number, length: number }}
 */
function finishedPrefix(tokens, src) {
  let count = 0;
  let length = 0;
  let offset = 0;
  for (let i = 0; i < tokens.length - 1; i += 1) {
    const token = tokens[i];
    if (token.type !== "space" && containsHtml([token])) break;
    offset += token.raw.length;
    const next = tokens[i + 1];
    if (
      token.type === "space" &&
      /^\S/.test(next.raw) &&
      src.includes("\n", offset) &&
      endsWithBlankLine(src, offset)
    ) {
      count = i + 1;
      length = offset;
    }
  }
  return { count, length };
}

/**
 * Render `text` (Markdown) into `el`, reusing what an earlier call rendered there when `text`
 * extends that call's text. `highlight`: highlight the code blocks; `streaming`: the text may
 * still grow (the unfinished tail's code is then not highlighted: it changes at every update).
 * @param {MarkdownElement} el
 * @param {unknown} text
 * @param {{ highlight?: boolean, streaming?: boolean }} [options]
 */
export function renderMarkdownInto(el, text, { highlight = true, streaming = false } = {}) {
  // Work that grows with the text is kept to a scan or two at native speed (indexOf, startsWith):
  // this runs at every animation frame of a streaming reply (appendMarkdownInto has none).
  const raw = String(text ?? "");
  const source = normalize(raw);
  let state = el._markdown;
  if (!state || state.highlight !== highlight || !source.startsWith(state.done)) state = reset(el, highlight);
  state.rest = source.slice(state.done.length);
  state.cr = raw.endsWith("\r");
  update(el, state, highlight, streaming, () => source);
}

/**
 * Render `text` into `el` when it is the text last rendered there (by renderMarkdownInto or this
 * function) followed by `added`: only `added` is read, so the cost does not grow with the text.
 * Gives the same DOM as renderMarkdownInto(el, text, options); without an earlier render with the
 * same `highlight`, it is that call.
 * @param {MarkdownElement} el
 * @param {unknown} text
 * @param {unknown} added
 * @param {{ highlight?: boolean, streaming?: boolean }} [options]
 */
export function appendMarkdownInto(el, text, added, { highlight = true, streaming = false } = {}) {
  const state = el._markdown;
  if (!state || state.highlight !== highlight) {
    renderMarkdownInto(el, text, { highlight, streaming });
    return;
  }
  const raw = String(added ?? "");
  let piece = raw;
  if (raw) {
    // A "\r\n" split between two pieces is one line break, as in the whole text.
    if (state.cr && piece[0] === "\n") piece = piece.slice(1);
    state.cr = raw.endsWith("\r");
  }
  state.rest += normalize(piece);
  update(el, state, highlight, streaming, () => String(text ?? "").replace(/\r\n|\r/g, "\n"));
}

/** @param {string} text */
function normalize(text) {
  return text.indexOf("\r") === -1 ? text : text.replace(/\r\n|\r/g, "\n");
}

/**
 * @param {MarkdownElement} el
 * @param {boolean} highlight
 * @returns {MarkdownState}
 */
function reset(el, highlight) {
  el.replaceChildren();
  el._markdown = { done: "", rest: "", cr: false, tail: [], highlight, whole: false };
  return el._markdown;
}

/**
 * @param {MarkdownElement} el
 * @param {MarkdownState} state
 * @param {boolean} highlight
 * @param {boolean} streaming
 * @param {() => string} wholeSource the whole text, read only when rendering it in parts fails
 */
function update(el, state, highlight, streaming, wholeSource) {
  for (const node of state.tail) node.remove();
  state.tail = [];
  try {
    renderRest(el, state, highlight, streaming);
  } catch {
    el.replaceChildren(renderMarkdown(wholeSource(), { highlight: highlight && !streaming }));
    el._markdown = null;
  }
}

/**
 * @param {MarkdownElement} el
 * @param {MarkdownState} state
 * @param {boolean} highlight
 * @param {boolean} streaming
 */
function renderRest(el, state, highlight, streaming) {
  const rest = state.rest;
  let tokens = marked.lexer(rest);
  if (!state.whole && Object.keys(tokens.links).length > 0) state.whole = true;
  if (state.whole && state.done) {
    // Everything is rendered again from here on, the blocks kept so far too.
    el.replaceChildren();
    state.rest = state.done + rest;
    state.done = "";
    tokens = marked.lexer(state.rest);
  }
  /** @type {Token[]} */
  let tail = tokens;
  if (!state.whole) {
    const { count, length } = finishedPrefix(tokens, rest);
    const finished = tokens.slice(0, count);
    if (count > 0 && finished.map((t) => t.raw).join("") === rest.slice(0, length)) {
      el.append(fragmentOf(marked.parser(finished), highlight));
      state.done += rest.slice(0, length);
      state.rest = rest.slice(length);
      tail = tokens.slice(count);
    }
  }
  const fragment = fragmentOf(marked.parser(tail), highlight && !streaming);
  state.tail = [...fragment.childNodes];
  el.append(fragment);
}
