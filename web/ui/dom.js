// @ts-check
// Small DOM helpers and formatters shared by the UI modules. No HTML strings from data: text goes
// in with textContent, so nothing a model or a file says can become markup here.

/**
 * An element: `props` are its attributes, except `class`, `text` (its textContent), `dataset`,
 * `hidden` and `on<event>` handlers; undefined, null and false leave one out, true sets it empty.
 * @template {string} K
 * @param {K} tag
 * @param {Record<string, any> | null} [props]
 * @param {...unknown} children nodes or text (arrays flattened; null, undefined and false skipped)
 * @returns {K extends keyof HTMLElementTagNameMap ? HTMLElementTagNameMap[K] : HTMLElement}
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "hidden") el.hidden = Boolean(value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return /** @type {any} */ (el);
}

/**
 * @template {ParentNode} P
 * @param {P} parent
 * @param {unknown[]} children nodes or text (arrays flattened; null, undefined and false skipped)
 * @returns {P}
 */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/**
 * The first element `selector` matches: one of the page's own HTML elements, or null.
 * @param {string} selector
 * @param {ParentNode} [root]
 * @returns {HTMLElement | null}
 */
export const $ = (selector, root = document) => /** @type {HTMLElement | null} */ (root.querySelector(selector));

// Saves ``text`` as a file the browser downloads.
/**
 * @param {string} filename
 * @param {BlobPart} text
 * @param {string} [type]
 */
export function download(filename, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h("a", { href: url, download: filename, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// Inline icons: fixed, trusted markup (never built from data).
/** @type {Record<string, string>} */
const ICONS = {
  send: '<path d="M12 19V5M5 12l7-7 7 7"/>',
  stop: '<rect x="7" y="7" width="10" height="10" rx="1.5"/>',
  plus: '<path d="M12 5v14M5 12h14"/>',
  menu: '<path d="M4 7h16M4 12h16M4 17h16"/>',
  close: '<path d="M6 6l12 12M18 6L6 18"/>',
  more: '<circle cx="5" cy="12" r="1.3"/><circle cx="12" cy="12" r="1.3"/><circle cx="19" cy="12" r="1.3"/>',
  edit: '<path d="M4 20h4L19 9l-4-4L4 16v4z"/><path d="M13.5 6.5l4 4"/>',
  copy: '<rect x="9" y="9" width="11" height="11" rx="2"/><path d="M5 15V5a2 2 0 0 1 2-2h8"/>',
  check: '<path d="M5 12.5l4.5 4.5L19 7"/>',
  retry: '<path d="M20 11a8 8 0 1 0-2.3 5.7"/><path d="M20 5v6h-6"/>',
  chevron: '<path d="M9 6l6 6-6 6"/>',
  left: '<path d="M15 6l-6 6 6 6"/>',
  right: '<path d="M9 6l6 6-6 6"/>',
  settings:
    '<circle cx="12" cy="12" r="3"/><path d="M19.4 15a1.7 1.7 0 0 0 .3 1.8l.1.1a2 2 0 1 1-2.8 2.8l-.1-.1a1.7 1.7 0 0 0-1.8-.3 1.7 1.7 0 0 0-1 1.5V21a2 2 0 1 1-4 0v-.1a1.7 1.7 0 0 0-1.1-1.5 1.7 1.7 0 0 0-1.8.3l-.1.1a2 2 0 1 1-2.8-2.8l.1-.1a1.7 1.7 0 0 0 .3-1.8 1.7 1.7 0 0 0-1.5-1H3a2 2 0 1 1 0-4h.1a1.7 1.7 0 0 0 1.5-1.1 1.7 1.7 0 0 0-.3-1.8l-.1-.1a2 2 0 1 1 2.8-2.8l.1.1a1.7 1.7 0 0 0 1.8.3H9a1.7 1.7 0 0 0 1-1.5V3a2 2 0 1 1 4 0v.1a1.7 1.7 0 0 0 1 1.5 1.7 1.7 0 0 0 1.8-.3l.1-.1a2 2 0 1 1 2.8 2.8l-.1.1a1.7 1.7 0 0 0-.3 1.8V9a1.7 1.7 0 0 0 1.5 1H21a2 2 0 1 1 0 4h-.1a1.7 1.7 0 0 0-1.5 1z"/>',
  tool: '<path d="M14.7 6.3a4 4 0 0 0-5.4 5.4L3 18v3h3l6.3-6.3a4 4 0 0 0 5.4-5.4l-2.5 2.5-2.4-.6-.6-2.4z"/>',
  brain:
    '<path d="M9 4a3 3 0 0 0-3 3 3 3 0 0 0-2 5 3 3 0 0 0 2 5 3 3 0 0 0 6 0V7a3 3 0 0 0-3-3z"/><path d="M15 4a3 3 0 0 1 3 3 3 3 0 0 1 2 5 3 3 0 0 1-2 5 3 3 0 0 1-6 0"/>',
  eye: '<path d="M2 12s3.5-7 10-7 10 7 10 7-3.5 7-10 7S2 12 2 12z"/><circle cx="12" cy="12" r="3"/>',
  key: '<circle cx="8" cy="15" r="4"/><path d="M11 12l9-9M17 6l3 3M15 8l2 2"/>',
  folder: '<path d="M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z"/>',
  download: '<path d="M12 4v11M7 10l5 5 5-5M5 20h14"/>',
  upload: '<path d="M12 20V9M7 14l5-5 5 5M5 4h14"/>',
  trash: '<path d="M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13"/>',
  search: '<circle cx="11" cy="11" r="6"/><path d="M20 20l-4.5-4.5"/>',
  spark: '<path d="M12 3l1.8 5.4L19 10l-5.2 1.6L12 17l-1.8-5.4L5 10l5.2-1.6z"/>',
  down: '<path d="M12 5v14M5 12l7 7 7-7"/>',
  compress: '<path d="M4 12h16M12 3v6M9 6l3 3 3-3M12 21v-6M9 18l3-3 3 3"/>',
  external: '<path d="M14 4h6v6M20 4l-9 9M19 14v5a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1V6a1 1 0 0 1 1-1h5"/>',
};

// Each icon's markup is parsed once and then cloned: a page of transcript messages has dozens.
/** @type {Map<string, SVGSVGElement>} */
const ICON_NODES = new Map();

/**
 * @param {string} name one of ICONS
 * @param {string} [cls]
 * @returns {SVGSVGElement}
 */
export function icon(name, cls = "icon") {
  let model = ICON_NODES.get(name);
  if (!model) {
    model = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    model.setAttribute("viewBox", "0 0 24 24");
    model.setAttribute("aria-hidden", "true");
    model.setAttribute("focusable", "false");
    model.innerHTML = ICONS[name] ?? "";
    ICON_NODES.set(name, model);
  }
  const svg = /** @type {SVGSVGElement} */ (model.cloneNode(true));
  svg.setAttribute("class", cls);
  return svg;
}

/**
 * @param {string} name one of ICONS
 * @param {string} label
 * @param {Record<string, any>} [props] as h()'s; `class` is added to icon-btn
 */
export function iconButton(name, label, props = {}) {
  const { class: extra = "", ...rest } = props;
  return h(
    "button",
    { type: "button", "aria-label": label, title: label, ...rest, class: `icon-btn ${extra}`.trim() },
    icon(name),
  );
}

/** @param {number} n */
export function formatTokens(n) {
  if (!n) return "0";
  if (n < 1000) return String(n);
  if (n < 10000) return `${(n / 1000).toFixed(1)}k`;
  if (n < 1e6) return `${Math.round(n / 1000)}k`;
  return `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)}M`;
}

/**
 * A whole number with its thousands grouped ("12,345"), as `toLocaleString("en")` writes it, without
 * its first call's ~20 ms of setting up number formatting (the context meter writes one as the app
 * starts).
 * @param {number} n
 */
export function formatCount(n) {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** @param {number} cost */
export function formatCost(cost) {
  if (!cost) return "$0";
  if (cost < 0.0001) return "<$0.0001";
  if (cost < 1) return `$${cost.toFixed(4)}`;
  return `$${cost.toFixed(2)}`;
}

/** @param {number} n */
export function formatContext(n) {
  if (!n) return "";
  if (n >= 1e6) return `${(n / 1e6).toFixed(n % 1e6 ? 1 : 0)}M`;
  return `${Math.round(n / 1000)}K`;
}

/** @param {{ input?: number, output?: number } | null | undefined} cost */
export function formatPrice(cost) {
  if (!cost || (!cost.input && !cost.output)) return "Free";
  /** @param {number} v */
  const f = (v) =>
    v >= 10 ? v.toFixed(0) : v >= 1 ? v.toFixed(2).replace(/\.?0+$/, "") : v.toFixed(3).replace(/0+$/, "");
  return `$${f(cost.input)} / $${f(cost.output)}`;
}

/** @param {string | number | Date} iso */
export function relativeDay(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const today = new Date();
  /** @param {Date} d */
  const startOf = (d) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((startOf(today) - startOf(date)) / 86400000);
  if (days <= 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days < 7) return "Previous 7 days";
  if (days < 30) return "Previous 30 days";
  return date.toLocaleDateString(undefined, { year: "numeric", month: "long" });
}

// What the stream errors of py_agent.ai.providers mean for a person; the saved message
// keeps pi's wording, shown after the explanation.
/** @type {[RegExp, (match: RegExpExecArray) => string][]} */
const STREAM_ERRORS = [
  [
    /^Connection error: (network error|Failed to fetch|Load failed)\b/i,
    () => "The connection to the provider was lost before the reply was complete.",
  ],
  [/^Connection error: Request timed out/, () => "The provider did not answer in time."],
  [
    /^Stream stalled: no data for (\S+)/,
    (m) => `The provider sent nothing for ${m[1]}, so the reply was stopped (the stall timeout is in Settings → Chat).`,
  ],
  [/^Stream ended unexpectedly/, () => "The reply was cut off before its end."],
  [/^Invalid JSON in SSE data/, () => "The provider sent data that could not be read."],
];

// Provider errors arrive as pi words them, e.g. `401 {"type":"error","error":{"message":"..."}}`.
/**
 * @param {unknown} text
 * @returns {string}
 */
export function friendlyError(text) {
  const match = /^(\d{3})\s+(\{[\s\S]*\})\s*$/.exec(String(text ?? "").trim());
  if (match) {
    try {
      const body = JSON.parse(match[2]);
      const message = body?.error?.message ?? (typeof body?.error === "string" ? body.error : body?.message);
      if (typeof message === "string" && message) return `${match[1]}: ${message}`;
    } catch {
      // not JSON after all
    }
  }
  const raw = String(text ?? "");
  for (const [pattern, explain] of STREAM_ERRORS) {
    const m = pattern.exec(raw);
    if (m) return `${explain(m)} (${raw})`;
  }
  return raw;
}

/** @type {ReturnType<typeof setTimeout> | null} */
let liveTimer = null;
/** @param {string} text */
export function announce(text) {
  const region = document.getElementById("sr-status");
  if (!region) return;
  clearTimeout(liveTimer);
  region.textContent = "";
  liveTimer = setTimeout(() => {
    region.textContent = text;
  }, 30);
}

/**
 * @param {string} text
 * @param {Element | null} [button] marked "copied" for a moment
 */
export async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    if (button) {
      button.classList.add("copied");
      const label = button.getAttribute("aria-label");
      button.setAttribute("aria-label", "Copied");
      setTimeout(() => {
        button.classList.remove("copied");
        button.setAttribute("aria-label", label);
      }, 1400);
    }
  } catch {
    // Clipboard refused (no permission): nothing to do, the text stays selectable.
  }
}

/** Props for a box that may scroll (code, tool output): keyboard users can focus it to scroll it,
 * and a screen reader names what it holds. A group, not a region: many of them are not landmarks.
 * @param {string} label
 */
export function scrollRegion(label) {
  return { tabindex: "0", role: "group", "aria-label": label };
}

// A long message (over LONG_CHARS characters or LONG_LINES lines) starts clipped to a few lines,
// with "Show more" / "Show less" after it: in the transcript (web/ui/chat.js) and on the first
// screen (web/boot/early.js) alike.
const LONG_CHARS = 1200;
const LONG_LINES = 14;
/**
 * @param {HTMLElement} bubble
 * @param {HTMLElement} body
 * @param {string} text
 */
export function collapseIfLong(bubble, body, text) {
  const lines = text.split("\n").length;
  if (text.length <= LONG_CHARS && lines <= LONG_LINES) return;
  const button = h("button", { type: "button", class: "btn ghost small show-more", "aria-expanded": "false" });
  /** @param {boolean} open */
  const set = (open) => {
    body.classList.toggle("collapsed", !open);
    body.style.maxHeight = open ? "" : "14em";
    body.style.overflow = open ? "" : "hidden";
    body.style.maskImage = open ? "" : "linear-gradient(to bottom, #000 70%, transparent)";
    button.setAttribute("aria-expanded", String(open));
    button.textContent = open
      ? "Show less"
      : `Show more (${text.length.toLocaleString()} characters, ${lines.toLocaleString()} lines)`;
  };
  button.addEventListener("click", () => set(button.getAttribute("aria-expanded") !== "true"));
  set(false);
  bubble.append(button);
}

// ---- names the user gave: files, folders, sessions ----
// A name is drawn isolated from the text around it (<bdi dir="auto">; FSI…PDI in drawn plain text:
// title tooltips, the tab's title) with its control and invisible characters shown as codes
// (⟨U+202E⟩), so that no name can reorder or hide what is around it, or pass for another extension.
// An aria-label gets visibleName: spoken, not drawn, it then still contains the visible text.
// tests/browser/test_names.py checks every place that draws one.

// Controls (C0, DEL, C1), format characters (bidi controls, zero-width joiners and spaces, BOM,
// soft hyphen, tags), line and paragraph separators, and the blank letters that draw nothing.
// biome-ignore lint/suspicious/noMisleadingCharacterClass: joiners and combining marks are matched alone, on purpose
const HIDDEN_CHARS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0]/gu;

/** @param {string} char */
function charCode(char) {
  return `⟨U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`;
}

/**
 * The name with its hidden characters written as codes (not isolated: see nameText, nameNode).
 * @param {unknown} name
 * @returns {string}
 */
export function visibleName(name) {
  return String(name ?? "").replace(HIDDEN_CHARS, charCode);
}

/** Text (a tool's output, which lists paths) with its hidden characters as codes, its line breaks
 * and tabs kept.
 * @param {unknown} text
 * @returns {string}
 */
export function visibleText(text) {
  return String(text ?? "").replace(HIDDEN_CHARS, (char) => ("\n\r\t".includes(char) ? char : charCode(char)));
}

/**
 * JSON text with its hidden characters as \uXXXX escapes (the same JSON; its line breaks kept).
 * @param {unknown} json
 * @returns {string}
 */
export function escapeHiddenJson(json) {
  return String(json).replace(HIDDEN_CHARS, (char) =>
    char === "\n"
      ? char
      : [...Array(char.length).keys()].map((i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""),
  );
}

/**
 * The name for plain-text places (aria-label, title, document.title): visible, isolated by FSI…PDI.
 * @param {unknown} name
 * @returns {string}
 */
export function nameText(name) {
  return `\u2068${visibleName(name)}\u2069`;
}

/**
 * The name as an element: <bdi dir="auto" class="uname">, each hidden character a marked code.
 * @param {unknown} name
 * @param {string} [className]
 * @returns {HTMLElement}
 */
export function nameNode(name, className = "") {
  const node = document.createElement("bdi");
  node.dir = "auto";
  node.className = `uname ${className}`.trim();
  const text = String(name ?? "");
  let last = 0;
  for (const match of text.matchAll(HIDDEN_CHARS)) {
    if (match.index > last) node.append(text.slice(last, match.index));
    node.append(h("span", { class: "uname-code", text: charCode(match[0]) }));
    last = match.index + match[0].length;
  }
  if (last < text.length) node.append(text.slice(last));
  return node;
}

/** A message (e.g. an error from Python) with each of `names` in it drawn as nameNode, and any
 * other hidden character made visible: nodes for h() or append().
 * @param {unknown} text
 * @param {unknown[]} names
 * @returns {(string | HTMLElement)[]}
 */
export function withNames(text, names) {
  const wanted = [...new Set(names.filter(Boolean).map(String))].sort((a, b) => b.length - a.length);
  /** @type {(string | HTMLElement)[]} */
  const out = [];
  let rest = String(text ?? "");
  while (rest) {
    let found = null;
    for (const name of wanted) {
      const at = rest.indexOf(name);
      if (at !== -1 && (!found || at < found.at)) found = { at, name };
    }
    if (!found) break;
    if (found.at) out.push(visibleName(rest.slice(0, found.at)));
    out.push(nameNode(found.name));
    rest = rest.slice(found.at + found.name.length);
  }
  if (rest) out.push(visibleName(rest));
  return out;
}
