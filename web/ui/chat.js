// @ts-check
// The conversation: renders the transcript Python sends (items: {entryId, message, branch?}),
// the reply being streamed (pulled once per animation frame), tool calls with their progress and
// results, errors with Retry (in py_agent/app/errors.py's words), Regenerate on every reply, branch
// switchers, inline editing of your own messages and "Show more" for long ones.

import {
  h,
  icon,
  iconButton,
  formatTokens,
  formatCost,
  friendlyError,
  copyText,
  announce,
  scrollRegion,
  collapseIfLong,
  nameNode,
  nameText,
  visibleName,
  visibleText,
  escapeHiddenJson,
} from "./dom.js";
import { renderMarkdownInto, appendMarkdownInto } from "./markdown-deferred.js";
import { toolRenderer } from "./extensions.js";
import { py } from "./bridge.js";

// The transcript is a window over the session's messages: the last WINDOW when it opens, PAGE
// more rendered when the user scrolls near either end of what is rendered (or presses "Show
// earlier/later messages"), and never more than MAX_RENDERED in the page: what moves far out of
// view is taken out again. A 10,000-message session costs what an 80-message one costs.
const WINDOW = 80;
const PAGE = 24; // small enough for a frame's budget, with Markdown to render
// A page the scroll asks for (not the buttons) stops after SLICE_MS of rendering: the rest follows
// at the next frames, as the edge is still near, so a frame never waits for a whole page on a slow
// or busy machine.
const SLICE_MS = 6;
const MAX_RENDERED = 200;
const NEAR_PX = 1200; // how close to a window's edge the scroll must get for the next page
const STICK_PX = 80;
// New text of a reply rendered in one task at most (a few ms of Markdown): a reply that grew by
// more between two updates (the page was busy; a long reply ends at once) is caught up with over
// the next tasks, so no task renders a whole long reply.
const RENDER_CHUNK = 8_000;

// A failed or stopped reply, as py_agent/app/errors.py describes it (item.errorView): our words,
// then the provider's own as a quote. Older pages' items without a view fall back to friendlyError.
function errorWords(item) {
  const m = item.message ?? {};
  const view = item.errorView;
  if (view) return { text: view.text, quote: view.quote ?? "" };
  if (m.stopReason === "aborted") {
    if (String(m.errorMessage ?? "").startsWith("Interrupted")) return { text: m.errorMessage, quote: "" };
    return {
      text: hasContent(m) ? "Stopped. The partial reply is kept." : "Stopped before anything arrived.",
      quote: "",
    };
  }
  return { text: friendlyError(m.errorMessage || "The request failed."), quote: "" };
}

function hasContent(message) {
  return (message?.content ?? []).some(
    (b) =>
      (b?.type === "text" && b.text?.trim()) ||
      (b?.type === "thinking" && b.thinking?.trim()) ||
      b?.type === "toolCall",
  );
}
const HAS_TEXT = /\S/;

function textOf(message) {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b?.type === "text")
    .map((b) => b.text ?? "")
    .join("\n\n");
}

// A user message with attachments (docs/attachments.md): the typed text, then per file a text
// block `<file name="PATH">…</file>` and, for an image, the image block after it. `attachments`
// (metadata) may be missing (sessions written by pi's CLI): the tiles come from the blocks.
const FILE_BLOCK = /^<file name="([^"]*)">/;

function unescapeAttr(value) {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&amp;/g, "&");
}

function userParts(message) {
  const content = message?.content;
  if (typeof content === "string") return { text: content, files: [] };
  if (!Array.isArray(content)) return { text: "", files: [] };
  const texts = [];
  const files = [];
  const meta = new Map((Array.isArray(message.attachments) ? message.attachments : []).map((a) => [a?.path, a]));
  for (const block of content) {
    const match = block?.type === "text" ? FILE_BLOCK.exec(block.text ?? "") : null;
    if (match) {
      const path = unescapeAttr(match[1]);
      files.push({ path, name: path.split("/").pop(), meta: meta.get(path) ?? null, image: null });
    } else if (block?.type === "image") {
      const last = files[files.length - 1];
      if (last && !last.image) last.image = block;
      else files.push({ path: null, name: "image", meta: null, image: block });
    } else if (block?.type === "text") texts.push(block.text ?? "");
  }
  return { text: texts.join("\n\n"), files };
}

function formatBytes(bytes) {
  if (typeof bytes !== "number") return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MB`;
}

function attachmentTiles(files) {
  return h(
    "ul",
    { class: "msg-attachments", "aria-label": "Attachments" },
    ...files.map((file) => {
      const mime = file.image?.mimeType ?? "";
      const visual =
        file.image && /^image\/(png|jpeg|gif|webp)$/.test(mime)
          ? h("img", { class: "att-thumb", alt: "", src: `data:${mime};base64,${file.image.data}` })
          : h("span", {
              class: "att-icon",
              "aria-hidden": "true",
              text: (file.name.split(".").pop() || "file").slice(0, 4).toUpperCase(),
            });
      const size = formatBytes(file.meta?.size);
      const body = [
        visual,
        h(
          "span",
          { class: "att-meta" },
          h("span", { class: "att-name" }, nameNode(file.name)),
          ...(size ? [h("span", { class: "att-size", text: size })] : []),
        ),
      ];
      if (!file.path) return h("li", { class: "att-tile" }, ...body);
      // Named by its visible text (the name, the size) with "Open … in Files" around it for a
      // screen reader: an aria-label of the path would leave the size out of the name.
      const open = h(
        "button",
        { type: "button", class: "att-tile", title: `Open ${nameText(file.path)} in Files` },
        h("span", { class: "visually-hidden", text: "Open " }),
        ...body,
        h("span", { class: "visually-hidden", text: " in Files" }),
      );
      open.addEventListener("click", () =>
        py("panel_message", { panel: "workspace", data: { type: "open", path: file.path } }).catch(() => {}),
      );
      return h("li", {}, open);
    }),
  );
}

function resultText(result) {
  const content = result?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b) => (b?.type === "text" ? (b.text ?? "") : b?.type === "image" ? `[image ${b.mimeType ?? ""}]` : ""))
    .join("\n");
}

// A tool call's state as its card says it, in visible text (and so in its accessible name).
const TOOL_STATE_WORDS = {
  streaming: "preparing",
  running: "running",
  done: "done",
  error: "failed",
  interrupted: "stopped",
};
const PREVIEW_LINES = 2;
const PREVIEW_CHARS = 240;

function previewLines(text) {
  const lines = text.split("\n").filter((line) => line.trim());
  let shown = lines.slice(0, PREVIEW_LINES).join("\n");
  if (shown.length > PREVIEW_CHARS) shown = `${shown.slice(0, PREVIEW_CHARS - 1)}…`;
  else if (lines.length > PREVIEW_LINES) shown += " …";
  return shown;
}

function jsonText(value) {
  try {
    // A tool's arguments often hold paths: their hidden characters are shown, escaped.
    return escapeHiddenJson(JSON.stringify(value ?? {}, null, 2));
  } catch {
    return String(value);
  }
}

function shortArgs(args) {
  if (!args || typeof args !== "object") return "";
  const values = Object.values(args).filter((v) => typeof v === "string" || typeof v === "number");
  const text = values.map(String).join(" · ").replace(/\s+/g, " ");
  return visibleName(text.length > 80 ? `${text.slice(0, 77)}…` : text);
}

/** Whether `text` is the text `entry` showed last followed by `added` (lengths only: the caller knows it extends it). */
function grewBy(entry, text, added) {
  return (
    typeof added === "string" && typeof entry.text === "string" && entry.text.length + added.length === text.length
  );
}

/**
 * Apply a streaming update's operations (py_agent/app/stream_delta.py) to `message`; returns
 * what was appended to each block's text or thinking, by block index.
 */
function applyOps(message, ops) {
  if (!Array.isArray(message.content)) message.content = [];
  const content = message.content;
  const appended = new Map();
  for (const op of ops) {
    const i = op.i;
    const block = content[i];
    if (op.block) {
      content[i] = op.block;
    } else if (typeof op.text === "string" && block) {
      block.text = (block.text ?? "") + op.text;
      appended.set(i, op.text);
    } else if (typeof op.thinking === "string" && block) {
      block.thinking = (block.thinking ?? "") + op.thinking;
      appended.set(i, op.thinking);
    } else if (Array.isArray(op.args) && block) {
      const args = { ...(block.arguments ?? {}) };
      for (const [key, how, value] of op.args) args[key] = how === "append" ? String(args[key] ?? "") + value : value;
      content[i] = { ...block, arguments: args };
    }
  }
  return appended;
}

// What a pi 1.x context_edit did to a message: it stays in the transcript, the model no longer sees it
// (or sees a replacement).
function contextEditNote(kind) {
  const text =
    kind === "removed"
      ? "Not sent to the model (removed from its context in pi)"
      : "The model sees an edited version (edited in pi)";
  return h("p", { class: "context-edit-note", text });
}

export class ChatView {
  constructor({ scroller, transcript, onRetry, onEdit, onSwitch, onJump }) {
    this.scroller = scroller;
    this.root = transcript;
    this.onRetry = onRetry;
    this.onEdit = onEdit;
    this.onSwitch = onSwitch;
    this.items = [];
    this.nodes = new Map(); // entryId -> article
    this.toolResults = new Map(); // toolCallId -> toolResult message
    this.toolStatus = new Map(); // toolCallId -> {status, partial}
    this.renderedFrom = 0; // the window: items[renderedFrom, renderedTo) are rendered
    this.renderedTo = 0;
    this.rendered = new Map(); // item index -> its node (items without one are not in it)
    this.earlier = null; // the buttons at the window's edges, when it has more beyond them
    this.later = null;
    this.edges = new IntersectionObserver((entries) => this.onEdge(entries), {
      root: scroller,
      rootMargin: `${NEAR_PX}px 0px`,
    });
    /**
     * The reply being streamed; `_catchUp`: the timer of its catching up (catchUpStream), 0 when none.
     * @type {(HTMLElement & { _catchUp?: ReturnType<typeof setTimeout> | 0 }) | null}
     */
    this.streamNode = null;
    this.streamMessage = null; // the reply being streamed, as the page has it (revision streamRev)
    this.streamRev = null;
    this.streaming = false;
    this.previewing = false; // showing what the page read from storage before Python had it
    this.stick = true;
    this.sessionId = null;
    this.jump = onJump;
    scroller.addEventListener("scroll", () => this.updateStick(), { passive: true });
    new ResizeObserver(() => this.keepPinned()).observe(transcript);
  }

  // ---- scrolling ----

  atBottom() {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < STICK_PX;
  }

  updateStick() {
    this.stick = this.atBottom();
    this.jump?.(!this.stick);
  }

  keepPinned() {
    if (this.stick && !this.empty) this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  scrollToBottom() {
    this.stick = true;
    this.scroller.scrollTop = this.empty ? 0 : this.scroller.scrollHeight;
    this.jump?.(false);
  }

  // ---- transcript ----

  setTranscript(sessionId, items) {
    this.previewing = false;
    this.root.removeAttribute("aria-busy");
    this.sessionId = sessionId;
    this.items = items;
    this.toolResults.clear();
    for (const item of items) this.indexResult(item);
    this.streamNode = null;
    this.renderEnd();
    this.scrollToBottom();
  }

  /**
   * A session's last messages as the page read them from storage itself, shown until Python has
   * loaded the session and sends its transcript (which replaces them): nothing in it can be
   * edited or retried meanwhile.
   */
  showPreview(sessionId, items) {
    if (this.sessionId === sessionId && !this.previewing) return; // the real transcript came first
    this.setTranscript(sessionId, items);
    this.previewing = true;
    this.root.setAttribute("aria-busy", "true");
    this.refreshActions();
  }

  /** Render the window at the end of the transcript (its last WINDOW items), nothing else. */
  renderEnd() {
    this.nodes.clear();
    this.rendered.clear();
    this.renderedFrom = Math.max(0, this.items.length - WINDOW);
    this.renderedTo = this.items.length;
    const fragment = document.createDocumentFragment();
    for (let i = this.renderedFrom; i < this.renderedTo; i += 1) {
      const node = this.renderAt(i);
      if (node) fragment.append(node);
    }
    this.root.replaceChildren(fragment);
    if (this.streamNode) this.root.append(this.streamNode);
    this.updateEdges();
    this.refreshActions();
  }

  get empty() {
    return this.items.length === 0 && !this.streamNode;
  }

  get atEnd() {
    return this.renderedTo >= this.items.length;
  }

  renderAt(index) {
    const node = this.renderItem(this.items[index], index);
    if (node) this.rendered.set(index, node);
    return node;
  }

  unrender(index) {
    const node = this.rendered.get(index);
    if (!node) return;
    this.rendered.delete(index);
    node.remove();
    const entryId = this.items[index]?.entryId;
    if (entryId && this.nodes.get(entryId) === node) this.nodes.delete(entryId);
  }

  /** The edge buttons, for what the window leaves out before and after it. */
  updateEdges() {
    const before = this.renderedFrom;
    const after = this.items.length - this.renderedTo;
    this.earlier = this.edgeButton(this.earlier, before, "earlier", () => this.showEarlier());
    this.later = this.edgeButton(this.later, after, "later", () => this.showLater());
    if (this.earlier && this.root.firstChild !== this.earlier) this.root.prepend(this.earlier);
    if (this.later) {
      const last = this.streamNode?.isConnected ? this.streamNode : null;
      if (this.later.nextSibling !== last || this.later.parentNode !== this.root)
        this.root.insertBefore(this.later, last);
    }
  }

  edgeButton(button, hidden, kind, show) {
    if (button) {
      this.edges.unobserve(button);
      button.remove();
    }
    if (hidden <= 0) return null;
    const text = `Show ${Math.min(hidden, PAGE)} ${kind} messages (${hidden} hidden)`;
    const next = h("button", { type: "button", class: `btn ghost ${kind}`, text });
    next.addEventListener("click", show);
    // Observed again from scratch: the observer reports at once whether it is near the viewport,
    // so a short page of messages is followed by the next one until the edge is out of reach.
    queueMicrotask(() => {
      if (next.isConnected) this.edges.observe(next);
    });
    return next;
  }

  onEdge(entries) {
    for (const entry of entries) {
      if (!entry.isIntersecting || !entry.target.isConnected) continue;
      if (entry.target === this.earlier) this.showEarlier(SLICE_MS);
      else if (entry.target === this.later) this.showLater(SLICE_MS);
    }
  }

  /** Keep what is on screen where it is while the DOM above it changes. */
  keepInPlace(change) {
    const anchor = this.visibleNode();
    const top = anchor?.getBoundingClientRect().top;
    change();
    if (anchor?.isConnected) this.scroller.scrollTop += anchor.getBoundingClientRect().top - top;
  }

  /** The first message whose bottom is below the scroller's top (the children are in vertical order: a binary search). */
  visibleNode() {
    const top = this.scroller.getBoundingClientRect().top;
    const children = this.root.children;
    let low = 0;
    let high = children.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (children[middle].getBoundingClientRect().bottom > top) high = middle;
      else low = middle + 1;
    }
    for (let i = low; i < children.length; i += 1) {
      const node = children[i];
      if (node !== this.earlier && node !== this.later) return node;
    }
    return null;
  }

  /** Render up to PAGE messages before the window (nearest first), for at most `budget` ms if given. */
  showEarlier(budget = Infinity) {
    if (this.renderedFrom <= 0) return;
    const t0 = performance.now();
    const limit = Math.max(0, this.renderedFrom - PAGE);
    let start = this.renderedFrom;
    const nodes = [];
    while (start > limit) {
      const node = this.renderAt(--start);
      if (node) nodes.push(node);
      if (performance.now() - t0 > budget) break;
    }
    const fragment = document.createDocumentFragment();
    fragment.append(...nodes.reverse());
    this.refreshActions(fragment);
    this.keepInPlace(() => {
      this.root.insertBefore(fragment, this.earlier?.nextSibling ?? this.root.firstChild);
      this.renderedFrom = start;
      // Far below the viewport now: out of the page (it comes back when scrolled to).
      while (this.renderedTo - this.renderedFrom > MAX_RENDERED) this.unrender(--this.renderedTo);
      if (!this.atEnd) this.streamNode?.remove();
      this.updateEdges();
    });
  }

  /** Render up to PAGE messages after the window, for at most `budget` ms if given. */
  showLater(budget = Infinity) {
    if (this.atEnd) return;
    const t0 = performance.now();
    const limit = Math.min(this.items.length, this.renderedTo + PAGE);
    let end = this.renderedTo;
    const fragment = document.createDocumentFragment();
    while (end < limit) {
      const node = this.renderAt(end++);
      if (node) fragment.append(node);
      if (performance.now() - t0 > budget) break;
    }
    this.refreshActions(fragment);
    this.keepInPlace(() => {
      this.root.insertBefore(fragment, this.later ?? (this.streamNode?.isConnected ? this.streamNode : null));
      this.renderedTo = end;
      if (this.atEnd && this.streamNode && !this.streamNode.isConnected) this.root.append(this.streamNode);
      while (this.renderedTo - this.renderedFrom > MAX_RENDERED) this.unrender(this.renderedFrom++);
      this.updateEdges();
    });
  }

  indexResult(item) {
    const m = item.message;
    if (m?.role === "toolResult" && m.toolCallId) this.toolResults.set(m.toolCallId, m);
  }

  append(item) {
    const wasAtEnd = this.atEnd;
    this.items.push(item);
    const index = this.items.length - 1;
    const role = item.message?.role;
    if (role === "toolResult") {
      this.indexResult(item);
      this.updateToolCard(item.message.toolCallId);
      if (wasAtEnd) this.renderedTo = this.items.length;
      else this.updateEdges();
      return;
    }
    if (!wasAtEnd) {
      // The window is far above the end: your own message brings it back to the end; others
      // wait beyond it (the "later" edge counts them) until scrolled to.
      if (this.streamNode && !this.streamNode.isConnected && role === "assistant") this.streamNode = null;
      if (role === "user") {
        this.renderEnd();
        this.scrollToBottom();
      } else this.updateEdges();
      return;
    }
    this.renderedTo = this.items.length;
    if (role === "assistant" && this.streamNode) {
      const node = this.streamNode;
      this.streamNode = null;
      this.nodes.set(item.entryId, node);
      this.rendered.set(index, node);
      node.dataset.entryId = item.entryId;
      this.finishStreamed(node, item, index);
    } else {
      const node = this.renderAt(index);
      if (node) {
        if (this.streamNode) this.root.insertBefore(node, this.streamNode);
        else this.root.append(node);
      }
    }
    if (role === "assistant") {
      const m = item.message;
      if (m.stopReason === "error") {
        const { text, quote } = errorWords(item);
        announce(`The reply failed: ${text}${quote ? ` The provider said: ${quote}` : ""}`);
      } else if (m.stopReason === "aborted") announce(errorWords(item).text);
      else if (!m.content?.some((b) => b.type === "toolCall")) announce("Reply complete.");
    }
    if (role === "user") this.scrollToBottom();
    this.refreshActions();
  }

  /** The streamed reply `node`, now finished as `item`: shown as such once its text is all rendered. */
  finishStreamed(node, item, index) {
    clearTimeout(node._catchUp);
    node._catchUp = 0;
    if (!this.fillAssistant(node, item, index, false)) {
      node._catchUp = setTimeout(() => {
        node._catchUp = 0;
        if (this.rendered.get(index) !== node) return; // the transcript was rendered anew meanwhile
        this.finishStreamed(node, item, index);
        this.refreshActions();
      }, 0);
      return;
    }
    node.classList.remove("streaming");
    node.removeAttribute("aria-busy");
    node.setAttribute("aria-label", "Assistant's reply"); // no longer "in progress"
  }

  renderItem(item, index) {
    const role = item.message?.role;
    let node = null;
    if (item.compaction) node = this.renderCompaction(item);
    else if (role === "user") node = this.renderUser(item);
    else if (role === "assistant") {
      node = h("article", { class: "msg assistant", "aria-label": "Assistant's reply" });
      this.fillAssistant(node, item, index, false);
    } else if (role === "toolResult") return null;
    else if (role === "system") node = this.renderPromptChange(item);
    else node = this.renderOther(item);
    if (node && item.contextEdit) node.append(contextEditNote(item.contextEdit));
    if (node && item.entryId) {
      node.dataset.entryId = item.entryId;
      this.nodes.set(item.entryId, node);
    }
    if (node && item.compacted) {
      // Before the cut: kept in the session (and exports), no longer sent to the model.
      node.classList.add("compacted");
      node.title = "Summarized: the model now reads the summary instead of this message.";
    }
    return node;
  }

  // Where a compaction cut the conversation: the summary the model reads instead of the
  // messages above, collapsed (its Markdown rendered when first opened).
  renderCompaction(item) {
    const { summary, tokensBefore } = item.compaction;
    const before = tokensBefore ? ` (about ${formatTokens(tokensBefore)} tokens before)` : "";
    const body = h("div", { class: "compaction-summary md" });
    const details = h("details", { class: "compaction-details" }, h("summary", { text: "Summary" }), body);
    details.addEventListener("toggle", () => {
      if (details.open && !body.childNodes.length) renderMarkdownInto(body, summary);
    });
    return h(
      "article",
      { class: "msg compaction", "aria-label": "Conversation compacted" },
      h("p", {
        class: "compaction-cut",
        text: `Earlier messages compacted${before}: the model reads this summary instead of the messages above.`,
      }),
      details,
    );
  }

  renderOther(item) {
    const m = item.message ?? {};
    const text = typeof m.content === "string" ? m.content : textOf(m) || m.summary || "";
    if (m.role === "custom" && m.display === false) return null;
    return h(
      "article",
      { class: "msg note", "aria-label": "Note" },
      h("div", { class: "note-text", text: String(text) }),
    );
  }

  // A system message of a session from pi 1.x (its prompt sections or tools changed there): a
  // collapsed marker. The page sends its own prompt and tools (docs/deviations.md).
  renderPromptChange(item) {
    const m = item.message ?? {};
    const parts = typeof m.content === "string" && m.content ? [m.content] : [];
    for (const [name, value] of Object.entries(m.sections ?? {}))
      parts.push(value === null ? `${name}: removed` : `${name}:\n${value}`);
    const names = (tools) => (Array.isArray(tools) ? tools.map((t) => t?.name).filter(Boolean) : []);
    const added = names(m.toolsAdded);
    const removed = names(m.toolsRemoved);
    if (added.length) parts.push(`Tools added: ${added.join(", ")}`);
    if (removed.length) parts.push(`Tools removed: ${removed.join(", ")}`);
    return h(
      "article",
      { class: "msg note prompt-change", "aria-label": "Prompt changed" },
      h(
        "details",
        {},
        h("summary", { text: "Prompt changed (in pi)" }),
        h("pre", { class: "prompt-change-text", text: parts.join("\n\n") || "(empty)" }),
      ),
    );
  }

  // ---- user messages ----

  renderUser(item) {
    const { text, files } = userParts(item.message);
    const body = h("div", { class: "user-text", text });
    const bubble = h("div", { class: "bubble" }, ...(files.length ? [attachmentTiles(files)] : []), body);
    collapseIfLong(bubble, body, text);
    const actions = h("div", { class: "msg-actions" });
    const article = h("article", { class: "msg user", "aria-label": "Your message" }, bubble, actions);
    if (item.branch) actions.append(this.branchSwitcher(item));
    const edit = iconButton("edit", "Edit and resend this message", { class: "small edit-msg" });
    edit.addEventListener("click", () => this.startEdit(article, item));
    const copy = iconButton("copy", "Copy message", { class: "small" });
    copy.addEventListener("click", () => copyText(text, copy));
    actions.append(edit, copy);
    return article;
  }

  startEdit(article, item) {
    if (this.streaming || this.previewing) return;
    const original = userParts(item.message).text;
    const area = h("textarea", { class: "edit-area", "aria-label": "Edit your message", rows: "3" });
    area.value = original;
    const save = h("button", { type: "button", class: "btn primary small", text: "Send" });
    const cancel = h("button", { type: "button", class: "btn ghost small", text: "Cancel" });
    const hint = h("span", { class: "hint", text: "Sending starts a new branch; the original stays available." });
    const editor = h("div", { class: "editor" }, area, h("div", { class: "editor-bar" }, hint, cancel, save));
    const bubble = article.querySelector(".bubble");
    const actions = article.querySelector(".msg-actions");
    bubble.hidden = true;
    actions.hidden = true;
    article.insertBefore(editor, actions);
    const close = () => {
      editor.remove();
      bubble.hidden = false;
      actions.hidden = false;
      article.querySelector(".edit-msg")?.focus();
    };
    const submit = () => {
      const text = area.value.trim();
      if (!text) return;
      close();
      this.onEdit(item.entryId, text);
    };
    save.addEventListener("click", submit);
    cancel.addEventListener("click", close);
    area.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        close();
      } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        submit();
      }
    });
    area.focus();
    area.setSelectionRange(area.value.length, area.value.length);
  }

  branchSwitcher(item) {
    const { index, count, ids } = item.branch;
    const prev = iconButton("left", "Previous version", { class: "small" });
    const next = iconButton("right", "Next version", { class: "small" });
    prev.disabled = index <= 0 || this.streaming;
    next.disabled = index >= count - 1 || this.streaming;
    prev.addEventListener("click", () => this.onSwitch(ids[index - 1]));
    next.addEventListener("click", () => this.onSwitch(ids[index + 1]));
    return h(
      "span",
      { class: "branch", role: "group", "aria-label": `Version ${index + 1} of ${count}` },
      prev,
      h("span", { class: "branch-count", text: `${index + 1} / ${count}`, "aria-hidden": "true" }),
      next,
    );
  }

  // ---- assistant messages ----

  /**
   * Render `item` (an assistant message) into `article`; `appended`: what a streaming update
   * appended to each block (showStreaming). Returns false when a text is not all rendered yet
   * (RENDER_CHUNK): the article is then left as streaming, for the caller to call again.
   */
  fillAssistant(article, item, index, streaming, appended = null) {
    const m = item.message ?? {};
    let blocks = article.querySelector(":scope > .blocks");
    if (!blocks) {
      blocks = h("div", { class: "blocks" });
      article.prepend(blocks);
    }
    const content = Array.isArray(m.content) ? m.content : [];
    article._blocks ??= [];
    const cache = article._blocks;
    let behind = false;
    content.forEach((block, i) => {
      let entry = cache[i];
      if (!entry || entry.type !== block.type) {
        const el = this.createBlock(block);
        if (entry) entry.el.replaceWith(el);
        else blocks.append(el);
        entry = cache[i] = { type: block.type, el, sig: null };
      }
      if (this.updateBlock(entry, block, m, streaming, appended?.get(i)) === false) behind = true;
    });
    for (let i = content.length; i < cache.length; i += 1) cache[i].el.remove();
    cache.length = content.length;
    const live = streaming || behind;
    const visible = cache.some((e) => e.hasText || e.type === "toolCall");
    article.classList.toggle("waiting", live && !visible);
    this.placeCursor(article, blocks, live);

    article.querySelector(":scope > .msg-foot")?.remove();
    article.querySelector(":scope > .msg-error")?.remove();
    if (live) {
      article.classList.add("streaming");
      article.setAttribute("aria-busy", "true");
      return !behind;
    }
    const isLast = index === this.lastAssistantIndex();
    if (m.stopReason === "error" || m.stopReason === "aborted") {
      const { text, quote } = errorWords(item);
      const words = h("span", { class: "msg-error-text", text });
      if (quote)
        words.append(" ", h("span", { class: "msg-error-quote" }, "The provider said: ", h("q", { text: quote })));
      const box = h(
        "div",
        { class: `msg-error ${m.stopReason}`, role: m.stopReason === "error" ? "alert" : "status" },
        words,
      );
      if (isLast && item.entryId) {
        const retry = h(
          "button",
          { type: "button", class: "btn small retry", "aria-label": "Retry this reply" },
          icon("retry"),
          "Retry",
        );
        retry.addEventListener("click", () => this.onRetry(item.entryId));
        box.append(retry);
      }
      article.append(box);
    }
    const foot = h("div", { class: "msg-foot" });
    if (item.branch) foot.append(this.branchSwitcher(item));
    const usage = m.usage ?? {};
    if (usage.input || usage.output) {
      const cost = usage.cost?.total ?? 0;
      const title = `Input ${usage.input ?? 0} · output ${usage.output ?? 0} · cache read ${usage.cacheRead ?? 0} · cache write ${usage.cacheWrite ?? 0} tokens · ${formatCost(cost)}`;
      foot.append(
        h(
          "span",
          { class: "usage", title },
          `↑${formatTokens(usage.input ?? 0)} ↓${formatTokens(usage.output ?? 0)}`,
          cost ? ` · ${formatCost(cost)}` : "",
        ),
      );
    }
    if (m.model) foot.append(h("span", { class: "model-tag", text: m.model }));
    if (item.entryId && m.stopReason !== "error" && m.stopReason !== "aborted") {
      // A new reply to the same messages, on a new branch (the versions stay reachable).
      const regenerate = iconButton("retry", "Regenerate this reply", { class: "small regenerate" });
      regenerate.disabled = this.streaming;
      regenerate.addEventListener("click", () => this.onRetry(item.entryId));
      foot.append(regenerate);
    }
    const text = textOf(m);
    if (text) {
      const copy = iconButton("copy", "Copy reply", { class: "small" });
      copy.addEventListener("click", () => copyText(text, copy));
      foot.append(copy);
    }
    article.append(foot);
    return true;
  }

  lastAssistantIndex() {
    for (let i = this.items.length - 1; i >= 0; i -= 1) {
      const role = this.items[i].message?.role;
      if (role === "assistant") return i;
      if (role === "user") return -1;
    }
    return -1;
  }

  createBlock(block) {
    if (block.type === "thinking") {
      const details = h(
        "details",
        { class: "thinking" },
        h("summary", {}, icon("chevron", "icon chev"), h("span", { class: "thinking-label", text: "Thinking" })),
        h("div", { class: "thinking-body md" }),
      );
      return details;
    }
    if (block.type === "toolCall") {
      const card = h(
        "details",
        { class: "tool", dataset: { toolCallId: block.id ?? "" } },
        h(
          "summary",
          {},
          h("span", { class: "tool-status", "aria-hidden": "true" }),
          icon("tool", "icon tool-icon"),
          h("span", { class: "tool-title" }),
          h("span", { class: "tool-summary" }),
          h("span", { class: "tool-state" }),
          h("span", { class: "tool-preview" }),
        ),
        h("div", { class: "tool-body" }),
      );
      return card;
    }
    if (block.type === "text") return h("div", { class: "md text-block" });
    return h("div", { class: "md" });
  }

  /**
   * `added`: what a streaming update appended to the block's text (showStreaming); the text is
   * then that of the last update plus `added`, and only `added` is read (the work per frame does
   * not grow with the reply).
   */
  updateBlock(entry, block, message, streaming, added) {
    const el = entry.el;
    if (block.type === "text") return this.updateText(entry, block.text ?? "", streaming, added);
    if (block.type === "thinking") {
      const text = block.thinking ?? "";
      const grew = grewBy(entry, text, added);
      const shown = grew && entry.shown === entry.text && entry.live && streaming;
      entry.hasText = grew ? entry.hasText || HAS_TEXT.test(added) : HAS_TEXT.test(text);
      entry.text = text;
      entry.live = streaming;
      el.hidden = !entry.hasText && !block.redacted;
      el.classList.toggle("live", streaming);
      el.querySelector(".thinking-label").textContent = streaming
        ? "Thinking…"
        : block.redacted
          ? "Thinking (redacted)"
          : "Thinking";
      const sig = `${streaming}|${el.open}`;
      if (entry.sig === sig && entry.shown === text) return;
      entry.sig = sig;
      if (el.open || !streaming) {
        const body = el.querySelector(".thinking-body");
        if (shown) appendMarkdownInto(body, text, added, { highlight: false, streaming });
        else renderMarkdownInto(body, text, { highlight: false, streaming });
        entry.shown = text;
      }
      if (!el._toggle) {
        el._toggle = true;
        el.addEventListener("toggle", () => {
          if (el.open)
            renderMarkdownInto(el.querySelector(".thinking-body"), entry.text ?? "", {
              highlight: false,
              streaming: entry.live,
            });
          entry.sig = null;
        });
      }
    } else if (block.type === "toolCall") {
      entry.block = block;
      entry.message = message;
      entry.streaming = streaming;
      this.paintTool(el, block, message, streaming);
    }
  }

  /**
   * A text block: only the Markdown blocks the text has not finished are rendered again
   * (markdown.js), and only what was added is read when the text extends the one shown. At most
   * RENDER_CHUNK new characters are rendered: returns false when some are left for a next call.
   */
  updateText(entry, text, streaming, added) {
    const el = entry.el;
    if (entry.text === text && entry.streaming === streaming) return true;
    const shown = entry.text;
    let piece = null; // what extends the text shown, when it does (its Markdown was rendered as streaming)
    if (typeof shown === "string" && entry.streaming) {
      if (grewBy(entry, text, added)) piece = added;
      else if (text.length >= shown.length && text.startsWith(shown)) piece = text.slice(shown.length);
    }
    const whole = piece === null || piece.length <= RENDER_CHUNK;
    if (!whole) {
      piece = piece.slice(0, RENDER_CHUNK);
      text = shown + piece;
      streaming = true;
    }
    if (piece !== null) {
      appendMarkdownInto(el, text, piece, { streaming });
      // /\S/ rather than trim(), and on the new text only: this runs at every frame.
      entry.hasText ||= HAS_TEXT.test(piece);
    } else {
      renderMarkdownInto(el, text, { streaming });
      entry.hasText = HAS_TEXT.test(text);
    }
    entry.text = text;
    entry.streaming = streaming;
    el.hidden = !entry.hasText;
    return whole;
  }

  toolState(block, message, streaming) {
    const result = this.toolResults.get(block.id);
    if (result) return { status: result.isError ? "error" : "done", result };
    const live = this.toolStatus.get(block.id);
    if (streaming) return { status: "streaming" };
    if (live?.status === "running") return { status: "running", partial: live.partial };
    if (message?.stopReason === "aborted" || message?.stopReason === "error") return { status: "interrupted" };
    if (this.streaming) return { status: "running" };
    return { status: "interrupted" };
  }

  paintTool(card, block, message, streaming) {
    const state = this.toolState(block, message, streaming);
    const call = { name: block.name, id: block.id, sessionId: this.sessionId, args: block.arguments ?? {}, ...state };
    let custom = null;
    const renderer = toolRenderer(block.name);
    if (renderer) {
      try {
        custom = renderer(call) ?? null;
      } catch (error) {
        console.warn(`py-agent: the renderer of tool ${block.name} failed`, error);
      }
    }
    card.dataset.status = state.status;
    card.querySelector(".tool-title").textContent = custom?.title ?? block.name ?? "tool";
    // A renderer's summary may be nodes (paths drawn as names: web/sandbox/renderers.js).
    card.querySelector(".tool-summary").replaceChildren(custom?.summary ?? shortArgs(call.args));
    card.querySelector(".tool-state").textContent = TOOL_STATE_WORDS[state.status];
    // The first lines of what it gave, readable without opening the card (opening shows it all).
    const output = state.status === "done" || state.status === "error" ? resultText(state.result).trim() : "";
    card.querySelector(".tool-preview").textContent = output ? previewLines(visibleText(output)) : "";
    const body = card.querySelector(".tool-body");
    const sig = JSON.stringify([call.args, state.status, state.result?.content, state.partial]);
    if (card._sig === sig && !custom?.body) return;
    card._sig = sig;
    if (custom?.body) {
      body.replaceChildren(custom.body);
      return;
    }
    const parts = [
      h(
        "div",
        { class: "tool-section" },
        h("div", { class: "tool-label", text: "Arguments" }),
        h("pre", { class: "tool-pre", ...scrollRegion("Arguments"), text: jsonText(call.args) }),
      ),
    ];
    if (state.result) {
      parts.push(
        h(
          "div",
          { class: `tool-section ${state.status === "error" ? "is-error" : ""}` },
          h("div", { class: "tool-label", text: state.status === "error" ? "Error" : "Result" }),
          h("pre", {
            class: "tool-pre",
            ...scrollRegion(state.status === "error" ? "Error" : "Result"),
            // What the model got, its hidden characters shown (a listed path cannot reorder the rest).
            text: visibleText(resultText(state.result)) || "(no output)",
          }),
        ),
      );
    } else if (state.partial) {
      parts.push(
        h(
          "div",
          { class: "tool-section" },
          h("div", { class: "tool-label", text: "Progress" }),
          h("pre", {
            class: "tool-pre",
            ...scrollRegion("Progress"),
            text: visibleText(resultText(state.partial)) || jsonText(state.partial),
          }),
        ),
      );
    } else if (state.status === "interrupted") {
      parts.push(h("p", { class: "hint", text: "This tool call did not finish." }));
    }
    body.replaceChildren(...parts);
  }

  updateToolCard(toolCallId) {
    for (const node of this.root.querySelectorAll(".msg.assistant")) {
      for (const entry of node._blocks ?? []) {
        if (entry.type === "toolCall" && entry.block?.id === toolCallId)
          this.paintTool(entry.el, entry.block, entry.message, entry.streaming);
      }
    }
  }

  setToolStatus(event) {
    this.toolStatus.set(event.toolCallId, event);
    this.updateToolCard(event.toolCallId);
  }

  // ---- streaming ----

  /** The revision of the streaming reply the page has (Python sends the changes since then). */
  get streamRevision() {
    return this.streamNode && this.streamMessage ? this.streamRev : null;
  }

  /** Characters of the streaming reply's text and thinking shown (bench/streaming.py). */
  get streamChars() {
    const content = this.streamNode ? this.streamMessage?.content : null;
    if (!Array.isArray(content)) return 0;
    return content.reduce((n, b) => n + (b?.text?.length ?? 0) + (b?.thinking?.length ?? 0), 0);
  }

  /**
   * The reply being streamed (py_agent/app/stream_delta.py): whole (`message`), or the changes
   * (`ops`) to revision `base` of it, which the page applies only if it has that revision (else
   * the next update brings it whole).
   */
  showStreaming(snapshot) {
    let appended = null;
    if (snapshot?.ops) {
      if (!this.streamNode || !this.streamMessage || snapshot.base !== this.streamRev) {
        this.streamRev = null;
        return;
      }
      appended = applyOps(this.streamMessage, snapshot.ops);
    } else if (snapshot?.message) {
      this.streamMessage = snapshot.message;
    } else return;
    this.streamRev = snapshot.rev ?? null;
    for (const t of snapshot.tools ?? []) this.toolStatus.set(t.toolCallId, t);
    if (!this.streamNode) {
      this.streamNode = h("article", {
        class: "msg assistant streaming",
        "aria-label": "Assistant's reply (in progress)",
        "aria-busy": "true",
      });
      // Beyond a window scrolled far above the end, it joins the page when the window reaches it.
      if (this.atEnd) this.root.append(this.streamNode);
      announce("The assistant is replying.");
    }
    if (!this.fillAssistant(this.streamNode, { message: this.streamMessage }, this.items.length, true, appended))
      this.catchUpStream();
  }

  /** The rest of a streaming reply that grew by more than RENDER_CHUNK, over the next tasks. */
  catchUpStream() {
    const node = this.streamNode;
    if (node._catchUp) return;
    node._catchUp = setTimeout(() => {
      node._catchUp = 0;
      if (this.streamNode !== node || !this.streamMessage) return;
      if (!this.fillAssistant(node, { message: this.streamMessage }, this.items.length, true)) this.catchUpStream();
    }, 0);
  }

  /**
   * The streaming cursor: after the reply's last element while its last block is text. A class
   * on that element (chat.css), not a selector that matches any last element: ending the stream
   * then restyles that one element, not every element of a long reply.
   */
  placeCursor(article, blocks, streaming) {
    const last = blocks.lastElementChild;
    const target = streaming && last?.classList.contains("text-block") ? last.lastElementChild : null;
    const current = article._cursor;
    if (current === target) return;
    if (current) {
      current.classList.remove("stream-end");
      if (!current.classList.length) current.removeAttribute("class");
    }
    target?.classList.add("stream-end");
    article._cursor = target;
  }

  clearStreaming() {
    this.streamNode?.remove();
    this.streamNode = null;
  }

  setStreaming(streaming) {
    if (this.streaming === streaming) return;
    this.streaming = streaming;
    this.root.classList.toggle("is-streaming", streaming);
    if (!streaming) {
      // Tool cards that were waiting are final now (done, failed or not finished).
      for (const node of this.root.querySelectorAll(".msg.assistant")) {
        for (const entry of node._blocks ?? [])
          if (entry.type === "toolCall") this.paintTool(entry.el, entry.block, entry.message, false);
      }
    }
    this.refreshActions();
  }

  /**
   * The state of the messages' buttons (disabled while a reply streams or before Python has the
   * session; Retry on the last reply only); `scope`: only the messages in it (a page about to be
   * added: the others' state does not change with the window).
   */
  refreshActions(scope = null) {
    const root = scope ?? this.root;
    const busy = this.streaming || this.previewing;
    for (const button of root.querySelectorAll(".edit-msg, .branch button, .retry, .regenerate")) {
      if (
        button.classList.contains("retry") ||
        button.classList.contains("regenerate") ||
        button.closest(".branch") ||
        button.classList.contains("edit-msg")
      ) {
        if (busy) button.setAttribute("disabled", "");
        else if (!button.closest(".branch")) button.removeAttribute("disabled");
      }
    }
    for (const group of root.querySelectorAll(".branch")) {
      const [prev, next] = group.querySelectorAll("button");
      const label = group.getAttribute("aria-label");
      const match = /Version (\d+) of (\d+)/.exec(label);
      if (!match) continue;
      const index = Number(match[1]) - 1;
      const count = Number(match[2]);
      prev.disabled = this.streaming || index <= 0;
      next.disabled = this.streaming || index >= count - 1;
    }
    // Retry is offered on the last reply only.
    const last = this.lastAssistantIndex();
    const nodes = scope
      ? [...scope.querySelectorAll(".msg[data-entry-id]")].map((node) => [node.dataset.entryId, node])
      : this.nodes;
    for (const [entryId, node] of nodes) {
      const retry = node.querySelector(".retry");
      if (!retry) continue;
      const isLast = last >= 0 && this.items[last]?.entryId === entryId;
      retry.hidden = !isLast;
    }
  }
}
