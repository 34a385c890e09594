// @ts-check
// The first screen, drawn before the app's own modules and long before Python: web/boot/early-start.js
// (a classic script in index.html's head) imports this module as the page starts; its imports are
// few and small (IndexedDB, the session list, DOM helpers). It opens the app's IndexedDB at once
// and, once the page is parsed, shows the app: the sessions list (the records' metadata), the open
// session's last messages (web/boot/idb.js, recentMessages) in a light rendering (text and a little
// Markdown, built with DOM calls only) and a message box that takes typing. web/app.js takes over
// what this drew once its modules are loaded (`early.release()`): its full renderer replaces the
// light one, its composer handles the same text box (what was typed, the caret and the focus
// stay), and the messages sent meanwhile (`early.queue`, shown as queued) are sent once Python is
// ready.

import { adoptDatabase, openDatabase } from "./idb.js";
import { SessionList } from "../ui/sessions.js";
import {
  h,
  icon,
  iconButton,
  announce,
  copyText,
  formatTokens,
  formatCost,
  friendlyError,
  scrollRegion,
  collapseIfLong,
  nameNode,
  nameText,
} from "../ui/dom.js";

const PREVIEW_MESSAGES = 80; // as many as the transcript's first window (web/ui/chat.js)
const MAX_INPUT_HEIGHT = 240; // as web/ui/composer.js
// How long the first screen waits for IndexedDB before it shows the page without its data.
const SHELL_WAIT_MS = 200;

performance.mark("py-agent:early-module");
const root = document.documentElement;
/**
 * @param {string} id
 * @returns {any} the element (the form controls of index.html)
 */
const $ = (id) => document.getElementById(id);
const cleanups = [];

function listen(target, type, handler) {
  target.addEventListener(type, handler);
  cleanups.push(() => target.removeEventListener(type, handler));
}

export const early = {
  /** The app's IndexedDB (web/boot/idb.js Storage), opened as this module runs. */
  opening: null,
  /** Resolves once the first screen is drawn, or could not be (the app draws it then). */
  drawn: null,
  sessions: null, // the SessionList drawn here (the app keeps it, with its handlers in `hooks`)
  metas: null, // the sessions' metadata records, newest first
  preview: null, // {id, meta, items}: the open session's last messages as read here
  queue: [], // texts sent before the app was ready, in order
  hooks: {}, // the app's handlers for the session list's actions
  versionChanged: false,
  onVersionChange: null,
  released: false,
  /** The app's modules take over: the handlers set here stop. */
  release() {
    early.released = true;
    for (const cleanup of cleanups.splice(0)) cleanup();
  },
};

const storageOptions = {
  onVersionChange: () => {
    early.versionChanged = true;
    early.onVersionChange?.();
  },
};
// The connection web/boot/early-start.js opened as the page started, if it is this schema's, and the
// records it read with it for the first screen (only for that schema: null otherwise).
const started = window.pyAgentEarlyDatabase ?? Promise.resolve(null);
const startedRecords = window.pyAgentEarlyRecords ?? Promise.resolve(null);
delete window.pyAgentEarlyDatabase;
delete window.pyAgentEarlyRecords;
const adopted = started.then((db) => adoptDatabase(db, storageOptions));
early.opening = adopted.then((storage) => storage ?? openDatabase(storageOptions));
const prefetched = adopted.then((storage) => (storage ? startedRecords : null)).catch(() => null);
early.opening.catch(() => {}); // web/app.js reports it, once Python is ready
early.drawn = draw().catch((error) => console.warn("py-agent: the first screen could not be drawn early", error));

function parsed() {
  if (document.readyState !== "loading") return Promise.resolve();
  return new Promise((resolve) => document.addEventListener("readystatechange", resolve, { once: true }));
}

function failed() {
  return root.dataset.state === "error" || root.dataset.app === "error";
}

// What IndexedDB has for the first screen: {metas, preview} (either null when it could not be read).
async function read() {
  const [db, records] = await Promise.all([early.opening, prefetched]);
  const id = hashSession();
  const [metas, preview] = await Promise.all([
    db.listSessions(records).then(
      (json) => JSON.parse(json).filter((m) => m && typeof m.id === "string" && !m.corrupt),
      () => null, // Python lists them once it is ready, and says what is wrong
    ),
    id
      ? db.recentMessages(id, PREVIEW_MESSAGES, undefined, records?.session).then(
          (preview) => (preview ? { id, preview } : null),
          () => null,
        )
      : null,
  ]);
  return { metas, preview };
}

// A first visit: no service worker answers this page yet (web/boot/boot.js registers it once the app
// is ready, and sessions are saved only after that), and it was not a reload (a forced one
// bypasses the service worker). IndexedDB then has no session to show, and the first screen does
// not wait for it: in a new browser profile, storage takes a while to answer its first request.
function firstVisit() {
  const navigation = /** @type {PerformanceNavigationTiming | undefined} */ (
    performance.getEntriesByType?.("navigation")?.[0]
  );
  return (
    Boolean(navigator.serviceWorker) &&
    !navigator.serviceWorker.controller &&
    navigation?.type === "navigate" &&
    !hashSession()
  );
}

async function draw() {
  const reading = read();
  reading.catch(() => {}); // the app reports a storage failure once Python is ready
  await parsed();
  performance.mark("py-agent:early-parsed");
  if (failed() || early.released) return;
  const first = firstVisit();
  // Everything in one go when storage answers soon (one layout of the page, not two); the page and
  // its message box first otherwise.
  let data = first
    ? { metas: [], preview: null }
    : await Promise.race([
        reading.catch(() => ({})),
        new Promise((resolve) => setTimeout(resolve, SHELL_WAIT_MS, null)),
      ]);
  if (failed() || early.released) return;
  performance.mark("py-agent:early-data");
  showApp();
  if (!data) {
    focusInput();
    data = await reading.catch(() => null);
    if (!data || early.released || failed()) return; // drawn once what storage has is drawn
  }
  showData(data);
  focusInput();
  root.dataset.early = "drawn";
  performance.mark("py-agent:early-drawn");
  // The runtime's JavaScript (1.2 MB): preloaded from now on, not before (it held up the first
  // screen's own files), nor only once it is painted (web/boot/boot.js: Python's start then waited
  // for it). On a first visit web/boot/early-start.js preloaded it at once.
  if (navigator.serviceWorker?.controller) preloadModule("pyodide/pyodide.asm.js");
  if (first) {
    // Sessions after all (stored by a page that no service worker answered): shown when storage answers.
    const stored = await reading.catch(() => null);
    if (stored?.metas?.length && !early.released && !failed()) showData(stored);
  }
}

/** @param {string} path a file of the site (relative to the page) */
function preloadModule(path) {
  const link = document.createElement("link");
  link.rel = "modulepreload";
  link.href = path;
  document.head.append(link);
}

function showData({ metas, preview }) {
  if (metas) {
    early.metas = metas;
    early.sessions.sessions = metas;
    early.sessions.render();
  }
  if (preview && hashSession() === preview.id) showPreview(preview.id, preview.preview);
}

function hashSession() {
  const match = /^#\/s\/(.+)$/.exec(location.hash);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}

// ---- the app's screen and its message box ----

function showApp() {
  $("boot-screen").hidden = true;
  $("app").hidden = false;
  // A boot that fails shows its error on the boot screen (web/boot/boot.js, web/boot/boot-watchdog.js).
  const watch = new MutationObserver(() => {
    if (!failed()) return;
    watch.disconnect();
    $("boot-screen").hidden = false;
    $("app").hidden = true;
  });
  watch.observe(root, { attributes: true, attributeFilter: ["data-state", "data-app"] });
  early.sessions = new SessionList({
    root: $("session-list"),
    search: $("session-search"),
    onOpen: (...args) => early.hooks.onOpen?.(...args),
    onRename: (...args) => early.hooks.onRename?.(...args),
    onExport: (...args) => early.hooks.onExport?.(...args),
    onDelete: (...args) => early.hooks.onDelete?.(...args),
  });
  const input = $("input");
  // As web/ui/composer.js draws it while no reply streams.
  $("composer-hint").textContent = "Enter sends · Shift+Enter new line";
  updateSend();
  listen(input, "keydown", (event) => {
    if (event.key !== "Enter" || event.isComposing || event.keyCode === 229 || event.shiftKey) return;
    event.preventDefault();
    queueInput();
  });
  listen(input, "input", autosize);
  listen($("composer"), "submit", (event) => {
    event.preventDefault();
    queueInput();
  });
  listen(window, "hashchange", () => {
    const id = hashSession();
    if (!id) {
      clearPreview();
      return;
    }
    early.opening
      .then((db) => db.recentMessages(id, PREVIEW_MESSAGES))
      .then((preview) => {
        if (early.released || hashSession() !== id) return;
        if (preview) showPreview(id, preview);
        else clearPreview();
      })
      .catch(() => {});
  });
}

// The message box takes typing at once, unless the user has put the focus elsewhere meanwhile.
// Without scrolling it into view (it is in view: the app fills the window), which would lay the
// page out here rather than once, for the frame that shows it.
function focusInput() {
  const active = document.activeElement;
  if (!active || active === document.body || active === $("input")) $("input").focus({ preventScroll: true });
}

function updateSend() {
  $("send-button").disabled = !$("input").value.trim();
}

function autosize() {
  const el = $("input");
  el.style.height = "auto";
  el.style.height = `${Math.min(el.scrollHeight, MAX_INPUT_HEIGHT)}px`;
  el.style.overflowY = el.scrollHeight > MAX_INPUT_HEIGHT ? "auto" : "hidden";
  updateSend();
}

function queueInput() {
  const input = $("input");
  const text = input.value;
  if (!text.trim()) return;
  early.queue.push(text);
  input.value = "";
  autosize();
  renderQueue();
  announce("Queued: it is sent as soon as the app is ready.");
}

// The same list as web/ui/composer.js renderQueue draws (web/app.js draws it again when it takes over).
function renderQueue() {
  const list = $("queue");
  list.replaceChildren(
    ...early.queue.map((text, i) => {
      const remove = iconButton("close", `Take back queued message: ${text.slice(0, 40)}`, { class: "small" });
      remove.addEventListener("click", () => {
        if (early.released) return;
        const [back] = early.queue.splice(i, 1);
        renderQueue();
        const input = $("input");
        input.value = input.value ? `${back}\n\n${input.value}` : back;
        autosize();
        input.focus();
      });
      return h(
        "li",
        { class: "queued follow_up" },
        h("span", { class: "queued-mode", text: "Waiting for Python" }),
        h("span", { class: "queued-text", text }),
        h("span", { class: "queued-state", text: "queued" }),
        remove,
      );
    }),
  );
  list.hidden = early.queue.length === 0;
}

// ---- the open session's last messages, lightly rendered ----

function showPreview(id, preview) {
  early.preview = { id, meta: preview.meta, items: preview.items };
  const title = preview.meta?.title || "Untitled";
  $("session-title").replaceChildren(nameNode(title));
  document.title = `${nameText(title)} · py-agent`;
  early.sessions?.setCurrent(id);
  const transcript = $("transcript");
  const fragment = document.createDocumentFragment();
  const results = new Map(
    preview.items.filter((i) => i.message?.role === "toolResult").map((i) => [i.message.toolCallId, i.message]),
  );
  for (const item of preview.items) {
    const node = renderItem(item, results);
    if (node) fragment.append(node);
  }
  transcript.replaceChildren(fragment);
  transcript.setAttribute("aria-busy", "true"); // as web/ui/chat.js shows a preview
  scrollToEnd();
}

// To the last message, in the frame that shows them (a requestAnimationFrame callback runs before
// that frame's layout and paint): reading scrollHeight now would lay the page out once here and
// again for the frame, after the focus and the rest of the drawing (and again once the style
// sheets still on their way have arrived).
let scrollPending = false;
function scrollToEnd() {
  if (scrollPending) return;
  scrollPending = true;
  requestAnimationFrame(() => {
    scrollPending = false;
    if (early.released) return; // web/ui/chat.js places its own rendering
    const scroller = $("scroller");
    scroller.scrollTop = scroller.scrollHeight;
  });
}

function clearPreview() {
  early.preview = null;
  $("transcript").replaceChildren();
  $("transcript").removeAttribute("aria-busy");
  $("session-title").textContent = "New chat";
  document.title = "py-agent";
  early.sessions?.setCurrent(null);
}

function textOf(message) {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b?.type === "text" && !/^<file name="/.test(b.text ?? ""))
    .map((b) => b.text ?? "")
    .join("\n\n");
}

// The same elements and classes as web/ui/chat.js, so that its rendering replaces this one in place;
// the actions are there but disabled, as in its preview.
function renderItem(item, results) {
  const m = item.message ?? {};
  let node;
  if (m.role === "user") {
    const text = textOf(m);
    const body = h("div", { class: "user-text", text });
    const bubble = h("div", { class: "bubble" }, body);
    collapseIfLong(bubble, body, text);
    const actions = h(
      "div",
      { class: "msg-actions" },
      disabled(iconButton("edit", "Edit and resend this message", { class: "small edit-msg" })),
      copyButton(text, "Copy message"),
    );
    node = h("article", { class: "msg user", "aria-label": "Your message" }, bubble, actions);
  } else if (m.role === "assistant") {
    const content = Array.isArray(m.content) ? m.content : [];
    node = h(
      "article",
      { class: "msg assistant", "aria-label": "Assistant's reply" },
      h("div", { class: "blocks" }, ...content.map((b) => block(b, m, results))),
    );
    if (m.stopReason === "error" || m.stopReason === "aborted") {
      node.append(
        h("div", { class: `msg-error ${m.stopReason}` }, h("span", { class: "msg-error-text", text: errorText(m) })),
      );
    }
    node.append(foot(m));
  } else if (m.role === "toolResult" || (m.role === "custom" && m.display === false)) {
    return null;
  } else {
    const text = typeof m.content === "string" ? m.content : textOf(m) || m.summary || "";
    node = h(
      "article",
      { class: "msg note", "aria-label": "Note" },
      h("div", { class: "note-text", text: String(text) }),
    );
  }
  if (item.entryId) node.dataset.entryId = item.entryId;
  return node;
}

// As web/ui/chat.js words a failed or stopped reply that Python has not described yet.
function errorText(m) {
  if (m.stopReason === "aborted") {
    if (String(m.errorMessage ?? "").startsWith("Interrupted")) return m.errorMessage;
    const content = (Array.isArray(m.content) ? m.content : []).some(
      (b) =>
        (b?.type === "text" && b.text?.trim()) ||
        (b?.type === "thinking" && b.thinking?.trim()) ||
        b?.type === "toolCall",
    );
    return content ? "Stopped. The partial reply is kept." : "Stopped before anything arrived.";
  }
  return friendlyError(m.errorMessage || "The request failed.");
}

function disabled(button) {
  button.disabled = true;
  return button;
}

function copyButton(text, label) {
  const copy = iconButton("copy", label, { class: "small" });
  copy.addEventListener("click", () => copyText(text, copy));
  return copy;
}

function block(b, _message, results) {
  if (b?.type === "text") {
    const el = h("div", { class: "md text-block" }, lightMarkdown(b.text ?? ""));
    el.hidden = !/\S/.test(b.text ?? "");
    return el;
  }
  if (b?.type === "thinking") {
    const details = h(
      "details",
      { class: "thinking" },
      h(
        "summary",
        {},
        icon("chevron", "icon chev"),
        h("span", { class: "thinking-label", text: b.redacted ? "Thinking (redacted)" : "Thinking" }),
      ),
      h("div", { class: "thinking-body md" }, lightMarkdown(b.thinking ?? "")),
    );
    details.hidden = !/\S/.test(b.thinking ?? "") && !b.redacted;
    return details;
  }
  if (b?.type === "toolCall") {
    // Its state as web/ui/chat.js tells it from the stored messages; its body comes with the full rendering.
    const result = results.get(b.id);
    const status = result ? (result.isError ? "error" : "done") : "interrupted";
    const words = { done: "done", error: "failed", interrupted: "stopped" };
    const output = (Array.isArray(result?.content) ? result.content : [])
      .map((c) => (c?.type === "text" ? (c.text ?? "") : ""))
      .join("\n")
      .split("\n")
      .filter((line) => line.trim());
    return h(
      "details",
      { class: "tool", dataset: { toolCallId: b.id ?? "", status } },
      h(
        "summary",
        {},
        h("span", { class: "tool-status", "aria-hidden": "true" }),
        icon("tool", "icon tool-icon"),
        h("span", { class: "tool-title", text: b.name ?? "tool" }),
        h("span", { class: "tool-summary", text: shortArgs(b.arguments) }),
        h("span", { class: "tool-state", text: words[status] }),
        // As web/ui/chat.js previews it (previewLines): the first two lines of the output.
        h("span", {
          class: "tool-preview",
          text: output.slice(0, 2).join("\n").slice(0, 240) + (output.length > 2 ? " …" : ""),
        }),
      ),
      h("div", { class: "tool-body" }),
    );
  }
  return h("div", { class: "md" });
}

function shortArgs(args) {
  if (!args || typeof args !== "object") return "";
  const values = Object.values(args).filter((v) => typeof v === "string" || typeof v === "number");
  const text = values.map(String).join(" · ").replace(/\s+/g, " ");
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

function foot(m) {
  const el = h("div", { class: "msg-foot" });
  const usage = m.usage ?? {};
  if (usage.input || usage.output) {
    const cost = usage.cost?.total ?? 0;
    el.append(
      h(
        "span",
        { class: "usage" },
        `↑${formatTokens(usage.input ?? 0)} ↓${formatTokens(usage.output ?? 0)}`,
        cost ? ` · ${formatCost(cost)}` : "",
      ),
    );
  }
  if (m.model) el.append(h("span", { class: "model-tag", text: m.model }));
  if (m.stopReason !== "error" && m.stopReason !== "aborted")
    el.append(disabled(iconButton("retry", "Regenerate this reply", { class: "small regenerate" })));
  const text = textOf(m);
  if (text) el.append(copyButton(text, "Copy reply"));
  return el;
}

// A little Markdown, enough for the first screen to look like the full rendering (web/ui/markdown.js)
// that replaces it: paragraphs, headings, lists, quotes, rules and fenced code; inline code, bold
// and italics. Everything goes in as text (textContent): nothing in a message becomes markup.
function lightMarkdown(text) {
  const fragment = document.createDocumentFragment();
  const lines = String(text).split("\n");
  let paragraph = [];
  let list = null;
  const flush = () => {
    if (paragraph.length) fragment.append(h("p", {}, inline(paragraph.join("\n"))));
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    const fence = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/.exec(line);
    if (fence) {
      flush();
      list = null;
      const code = [];
      for (i += 1; i < lines.length && !lines[i].trimStart().startsWith(fence[1]); i += 1) code.push(lines[i]);
      const language = fence[2];
      const pre = h("pre", scrollRegion(language ? `${language} code` : "Code"), h("code", { text: code.join("\n") }));
      const copy = h(
        "button",
        { type: "button", class: "code-copy", "aria-label": "Copy code", title: "Copy code" },
        icon("copy"),
        icon("check", "icon done"),
      );
      copy.addEventListener("click", () => copyText(code.join("\n"), copy));
      fragment.append(
        h(
          "div",
          { class: "code-block" },
          h("div", { class: "code-bar" }, h("span", { class: "code-lang", text: language || "text" }), copy),
          pre,
        ),
      );
      continue;
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    const item = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line);
    if (!line.trim()) {
      flush();
      list = null;
    } else if (heading) {
      flush();
      list = null;
      fragment.append(h(`h${heading[1].length}`, {}, inline(heading[2])));
    } else if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      list = null;
      fragment.append(h("hr"));
    } else if (item) {
      flush();
      const tag = /\d/.test(item[1]) ? "ol" : "ul";
      if (!list || list.tagName.toLowerCase() !== tag) {
        list = h(tag);
        fragment.append(list);
      }
      list.append(h("li", {}, inline(item[2])));
    } else if (/^\s{0,3}>/.test(line)) {
      flush();
      list = null;
      fragment.append(h("blockquote", {}, h("p", {}, inline(line.replace(/^\s{0,3}>\s?/, "")))));
    } else if (list && /^\s+\S/.test(line)) {
      /** @type {Element} */ (list.lastChild).append(" ", ...inline(line.trim()));
    } else {
      list = null;
      paragraph.push(line);
    }
  }
  flush();
  return fragment;
}

const INLINE =
  /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__|\*(?=\S)([\s\S]*?\S)\*|_(?=\S)([\s\S]*?\S)_(?!\w)|\[([^\]\n]+)\]\([^)\s]*\)/g;

function inline(text) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) nodes.push(text.slice(last, match.index));
    if (match[1]) nodes.push(h("code", { text: match[2].trim() ? match[2].replace(/^ (.*) $/s, "$1") : match[2] }));
    else if (match[3] ?? match[4]) nodes.push(h("strong", {}, inline(match[3] ?? match[4])));
    else if (match[5] ?? match[6]) nodes.push(h("em", {}, inline(match[5] ?? match[6])));
    else nodes.push(match[7]); // a link's text, as text: the full rendering makes it a link
    last = match.index + match[0].length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}
