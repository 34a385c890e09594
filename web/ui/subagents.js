// @ts-check
// The card of the `subagent` tool (pi's subagent renderCall/renderResult): what was asked
// (single / parallel / chain), live progress from the tool's updates ("2/3 done, 1 running"), and
// every child with its last steps, its final output (Markdown) and its usage; each child expands to
// its full transcript. Model-written text reaches the DOM as text or through renderMarkdown()
// (sanitized), never as HTML. Every update carries a snapshot of every child, so painting is
// throttled and a child is repainted only when it changed.

import { h, scrollRegion } from "./dom.js";
import { renderMarkdown } from "./markdown-deferred.js";
import { registerToolRenderer } from "./extensions.js";
import "./agents-settings.js";

/**
 * A child run's usage, as the subagent tool reports it (every field optional).
 * @typedef {object} Usage
 * @property {number} [input]
 * @property {number} [output]
 * @property {number} [cacheRead]
 * @property {number} [cacheWrite]
 * @property {number} [cost]
 * @property {number} [turns]
 * @property {number} [contextTokens]
 */
/**
 * One child run in the tool's details (py_agent/tools/subagent.py); `messages` are pi's message JSON.
 * @typedef {object} ChildResult
 * @property {string} [agent]
 * @property {string} [agentSource]
 * @property {string} [task]
 * @property {string} [status] "pending", "running", "completed", "failed" or "aborted"
 * @property {number} [step]
 * @property {Record<string, any>[]} [messages]
 * @property {Usage} [usage]
 * @property {string} [model]
 * @property {string} [errorMessage]
 * @property {string} [stopReason]
 * @property {string} [systemPrompt]
 * @property {string[]} [tools]
 */
/** @typedef {{ mode?: string, results?: ChildResult[] }} SubagentDetails */
/** @typedef {{ content?: unknown, details?: SubagentDetails }} SubagentResult */
/**
 * The call as the chat's renderer hook passes it (web/ui/extensions.js).
 * @typedef {object} SubagentCall
 * @property {string} [id]
 * @property {Record<string, any> | null} [args]
 * @property {string} status "streaming", "running", "done", "error" or "interrupted"
 * @property {SubagentResult | null} [result]
 * @property {SubagentResult | null} [partial]
 */
/**
 * A child's place in the card, repainted when its signature changes.
 * @typedef {object} Child
 * @property {HTMLDivElement} el
 * @property {HTMLDetailsElement} details its full transcript, rendered when opened
 * @property {string | null} sig
 * @property {ChildResult | null} result
 * @property {boolean} stale whether the transcript is older than `result`
 */
/**
 * @typedef {object} Card
 * @property {HTMLDivElement} root
 * @property {HTMLDivElement} progress
 * @property {HTMLDivElement} list
 * @property {HTMLDivElement} foot
 * @property {Child[]} children
 * @property {ReturnType<typeof setTimeout> | null} timer
 * @property {number | null} paintedAt
 * @property {SubagentCall | null} call
 */

const STYLE_ID = "py-agent-subagents-css";
if (!document.getElementById(STYLE_ID)) {
  const link = h("link", { id: STYLE_ID, rel: "stylesheet", href: new URL("./subagents.css", import.meta.url).href });
  document.head.append(link);
}

const PAINT_INTERVAL_MS = 250;
const MAX_CARDS = 100;
const RECENT_ITEMS = 5;
/** @type {Record<string, string>} */
const ICONS = { pending: "○", running: "⏳", completed: "✓", failed: "✗", aborted: "✗" };

/** @type {Map<string, Card>} */
const cards = new Map(); // toolCallId -> card state

// ---- text helpers (pi's formatting) ----

/**
 * @param {unknown} text
 * @param {number} n
 */
function cut(text, n) {
  const s = String(text ?? "")
    .replace(/\s+/g, " ")
    .trim();
  return s.length > n ? `${s.slice(0, n)}...` : s;
}

/** @param {number} n */
function tokens(n) {
  if (n < 1000) return String(n);
  if (n < 10000) return `${(n / 1000).toFixed(1)}k`;
  if (n < 1000000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1000000).toFixed(1)}M`;
}

/**
 * @param {Usage} [u]
 * @param {string} [model]
 */
export function formatUsage(u = {}, model = "") {
  /** @type {string[]} */
  const parts = [];
  if (u.turns) parts.push(`${u.turns} turn${u.turns > 1 ? "s" : ""}`);
  if (u.input) parts.push(`↑${tokens(u.input)}`);
  if (u.output) parts.push(`↓${tokens(u.output)}`);
  if (u.cacheRead) parts.push(`R${tokens(u.cacheRead)}`);
  if (u.cacheWrite) parts.push(`W${tokens(u.cacheWrite)}`);
  if (u.cost) parts.push(`$${Number(u.cost).toFixed(4)}`);
  if (u.contextTokens > 0) parts.push(`ctx:${tokens(u.contextTokens)}`);
  if (model) parts.push(model);
  return parts.join(" ");
}

/**
 * @param {ChildResult[]} results
 * @returns {Usage}
 */
function sumUsage(results) {
  /** @type {Record<string, number>} */
  const t = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, turns: 0 };
  for (const r of results) for (const k of Object.keys(t)) t[k] += Number(r.usage?.[k] ?? 0) || 0;
  return t;
}

/**
 * @param {Record<string, any> | null | undefined} message
 * @returns {string}
 */
function textBlocks(message) {
  const c = message?.content;
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return "";
  return c
    .filter((b) => b?.type === "text")
    .map((b) => b.text ?? "")
    .join("\n");
}

/**
 * @param {Record<string, any>[]} [messages]
 * @returns {string}
 */
function finalOutput(messages = []) {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const m = messages[i];
    if (m?.role !== "assistant" || !Array.isArray(m.content)) continue;
    const block = m.content.find((b) => b?.type === "text");
    if (block) return String(block.text ?? "");
  }
  return "";
}

/** @param {unknown} p */
function shortPath(p) {
  return String(p ?? "");
}

/**
 * @param {string} name
 * @param {unknown} [args] the call's arguments, as the model wrote them
 */
function toolCallLine(name, args = {}) {
  const a = /** @type {Record<string, any>} */ (args && typeof args === "object" ? args : {});
  switch (name) {
    case "read":
    case "write":
    case "edit":
    case "ls":
      return `→ ${name} ${shortPath(a.path ?? a.file_path ?? ".")}`;
    case "grep":
    case "find":
      return `→ ${name} ${cut(a.pattern ?? "", 40)}${a.path ? ` in ${a.path}` : ""}`;
    case "bash":
      return `$ ${cut(a.command ?? "", 60)}`;
    default: {
      const text = Object.values(a)
        .filter((v) => typeof v === "string" || typeof v === "number")
        .join(" ");
      return `→ ${name} ${cut(text, 50)}`;
    }
  }
}

/**
 * @param {Record<string, any>[]} [messages]
 */
function displayItems(messages = []) {
  /** @type {({ type: "text", text: string } | { type: "toolCall", name: string, args: unknown })[]} */
  const items = [];
  for (const m of messages) {
    if (m?.role !== "assistant" || !Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b?.type === "text" && String(b.text ?? "").trim()) items.push({ type: "text", text: b.text });
      else if (b?.type === "toolCall") items.push({ type: "toolCall", name: b.name, args: b.arguments });
    }
  }
  return items;
}

// ---- the call (before any result) ----

/**
 * @param {Record<string, any>} args
 * @returns {{ mode: string, text: string }}
 */
function callSummary(args) {
  if (Array.isArray(args.chain) && args.chain.length)
    return { mode: "chain", text: `chain (${args.chain.length} step${args.chain.length > 1 ? "s" : ""})` };
  if (Array.isArray(args.tasks) && args.tasks.length)
    return { mode: "parallel", text: `parallel (${args.tasks.length} task${args.tasks.length > 1 ? "s" : ""})` };
  if (args.agent) return { mode: "single", text: `${args.agent} · ${cut(args.task ?? "", 60)}` };
  return { mode: "single", text: "" };
}

/** @param {Record<string, any>} args */
function callPlan(args) {
  const list =
    (Array.isArray(args.chain) && args.chain.length ? args.chain : Array.isArray(args.tasks) ? args.tasks : null) ?? [];
  const chain = Array.isArray(args.chain) && args.chain.length > 0;
  const ul = h("ol", { class: "subagent-plan" });
  list.slice(0, 3).forEach((item, i) => {
    const task = chain
      ? String(item?.task ?? "")
          .replaceAll("{previous}", "")
          .trim()
      : item?.task;
    ul.append(
      h(
        "li",
        {},
        h("span", { class: "subagent-agent", text: String(item?.agent ?? "?") }),
        " ",
        h("span", { class: "muted", text: cut(task, 40) }),
        chain ? null : h("span", { class: "visually-hidden", text: ` (task ${i + 1})` }),
      ),
    );
  });
  if (list.length > 3) ul.append(h("li", { class: "muted", text: `... +${list.length - 3} more` }));
  if (!list.length && args.agent)
    ul.append(
      h(
        "li",
        {},
        h("span", { class: "subagent-agent", text: String(args.agent) }),
        " ",
        h("span", { class: "muted", text: cut(args.task ?? "", 60) }),
      ),
    );
  return ul;
}

// ---- progress ----

/** @param {ChildResult[]} results */
function counts(results) {
  let running = 0;
  let pending = 0;
  for (const r of results) {
    if (r.status === "running") running += 1;
    else if (r.status === "pending") pending += 1;
  }
  return { done: results.length - running - pending, running, pending };
}

/**
 * @param {SubagentDetails | null | undefined} details
 * @param {Record<string, any>} args
 * @param {boolean} finished
 * @returns {string}
 */
export function progressText(details, args, finished) {
  const results = details?.results ?? [];
  const mode = details?.mode ?? callSummary(args).mode;
  const failed = results.filter((r) => r.status === "failed" || r.status === "aborted").length;
  if (mode === "parallel") {
    const total = results.length || args.tasks?.length || 0;
    const c = counts(results);
    if (!finished)
      return `⏳ parallel ${c.done}/${total} done, ${c.running} running${c.pending ? `, ${c.pending} pending` : ""}`;
    return `${failed ? "✗" : "✓"} parallel ${total - failed}/${total} succeeded`;
  }
  if (mode === "chain") {
    const total = args.chain?.length ?? results.length;
    const done = results.filter((r) => r.status === "completed").length;
    if (!finished) return `⏳ chain step ${Math.min(results.length || 1, total)}/${total}`;
    return failed ? `✗ chain stopped at step ${results.length}/${total}` : `✓ chain ${done}/${total} steps`;
  }
  const r = results[0];
  if (!finished) return `⏳ ${r?.agent ?? args.agent ?? "subagent"} running`;
  return `${failed ? "✗" : "✓"} ${r?.agent ?? args.agent ?? "subagent"}`;
}

// ---- a child's transcript ----

/** @param {ChildResult} result */
function transcriptNode(result) {
  const box = h("div", { class: "subagent-transcript-body" });
  if (result.systemPrompt) {
    box.append(
      h(
        "details",
        { class: "subagent-system" },
        h("summary", { text: "System prompt" }),
        h("pre", { class: "tool-pre", ...scrollRegion("System prompt"), text: result.systemPrompt }),
      ),
    );
  }
  if (Array.isArray(result.tools))
    box.append(
      h("div", { class: "muted small", text: `Tools: ${result.tools.length ? result.tools.join(", ") : "none"}` }),
    );
  for (const m of result.messages ?? []) {
    if (m?.role === "user") {
      box.append(
        h(
          "div",
          { class: "subagent-msg user" },
          h("div", { class: "subagent-role", text: "Task" }),
          h("div", { class: "subagent-user-text", text: textBlocks(m) }),
        ),
      );
    } else if (m?.role === "assistant") {
      const node = h(
        "div",
        { class: "subagent-msg assistant" },
        h("div", { class: "subagent-role", text: "Assistant" }),
      );
      for (const b of Array.isArray(m.content) ? m.content : []) {
        if (b?.type === "text" && String(b.text ?? "").trim())
          node.append(h("div", { class: "md" }, renderMarkdown(b.text, { highlight: false })));
        else if (b?.type === "thinking" && String(b.thinking ?? "").trim())
          node.append(
            h(
              "details",
              { class: "subagent-thinking" },
              h("summary", { text: "Thinking" }),
              h("div", { class: "muted small subagent-pre-text", text: b.thinking }),
            ),
          );
        else if (b?.type === "toolCall")
          node.append(h("div", { class: "subagent-call mono small", text: toolCallLine(b.name, b.arguments) }));
      }
      if (m.errorMessage) node.append(h("div", { class: "subagent-error", text: String(m.errorMessage) }));
      box.append(node);
    } else if (m?.role === "toolResult") {
      const text = Array.isArray(m.content)
        ? m.content.map((b) => (b?.type === "text" ? (b.text ?? "") : b?.type === "image" ? "[image]" : "")).join("\n")
        : textBlocks(m);
      box.append(
        h(
          "details",
          { class: `subagent-msg tool-result${m.isError ? " is-error" : ""}` },
          h("summary", { text: `${m.isError ? "✗" : "↳"} ${m.toolName ?? "tool"} result (${text.length} chars)` }),
          h("pre", {
            class: "tool-pre",
            ...scrollRegion(`${m.toolName ?? "tool"} result`),
            text: text || "(no output)",
          }),
        ),
      );
    }
  }
  if (!(result.messages ?? []).length) box.append(h("div", { class: "muted small", text: "(no messages yet)" }));
  return box;
}

// ---- one child ----

/** @param {ChildResult} r */
function childSig(r) {
  return JSON.stringify([r.status, r.messages?.length ?? 0, r.usage, r.errorMessage, r.task, r.agent, r.stopReason]);
}

/**
 * @param {Child} child
 * @param {ChildResult} r
 * @param {string} mode
 * @param {number} index
 */
function paintChild(child, r, mode, index) {
  const status = r.status ?? "pending";
  child.el.dataset.status = status;
  const head = h(
    "div",
    { class: "subagent-child-head" },
    h("span", { class: `subagent-icon ${status}`, text: ICONS[status] ?? "?", "aria-hidden": "true" }),
    mode === "chain" && r.step ? h("span", { class: "muted subagent-number", text: `Step ${r.step}:` }) : null,
    // Several tasks may go to one agent: the number tells them apart (as in the tool's result text).
    mode === "parallel" ? h("span", { class: "muted subagent-number", text: `Task ${index + 1}:` }) : null,
    h("span", { class: "subagent-agent", text: r.agent ?? "?" }),
    r.agentSource && r.agentSource !== "builtin" ? h("span", { class: "badge", text: r.agentSource }) : null,
    h("span", { class: "visually-hidden", text: ` ${status}` }),
    h("span", { class: "subagent-task muted", text: cut(r.task, 80) }),
  );
  /** @type {HTMLElement[]} */
  const parts = [head];
  const items = displayItems(r.messages);
  if (status === "running" || status === "pending") {
    const recent = items.slice(-RECENT_ITEMS);
    const list = h("ul", { class: "subagent-recent" });
    if (!recent.length)
      list.append(h("li", { class: "muted", text: status === "pending" ? "(waiting)" : "(running...)" }));
    for (const item of recent)
      list.append(
        h("li", {
          class: item.type === "toolCall" ? "mono small" : "",
          text: item.type === "toolCall" ? toolCallLine(item.name, item.args) : cut(item.text, 160),
        }),
      );
    parts.push(list);
  } else {
    const failed = status === "failed" || status === "aborted";
    if (failed && r.errorMessage)
      parts.push(h("div", { class: "subagent-error", role: "note", text: `Error: ${r.errorMessage}` }));
    const output = finalOutput(r.messages);
    if (output) parts.push(h("div", { class: "md subagent-output" }, renderMarkdown(output, { highlight: true })));
    else if (!failed) parts.push(h("div", { class: "muted", text: "(no output)" }));
  }
  const usage = formatUsage(r.usage, r.model);
  if (usage) parts.push(h("div", { class: "subagent-usage muted small", text: usage }));
  // The full transcript: rendered when opened (and again while open, when it grew).
  const count = r.messages?.length ?? 0;
  child.details.querySelector("summary").textContent = `Full transcript (${count} message${count === 1 ? "" : "s"})`;
  child.result = r;
  if (child.details.open) child.details.querySelector(".subagent-transcript-slot").replaceChildren(transcriptNode(r));
  else child.stale = true;
  child.el.replaceChildren(...parts, child.details);
}

/** @returns {Child} */
function makeChild() {
  const details = h(
    "details",
    { class: "subagent-transcript" },
    h("summary", {}),
    h("div", { class: "subagent-transcript-slot" }),
  );
  const child = { el: h("div", { class: "subagent-child" }), details, sig: null, result: null, stale: true };
  details.addEventListener("toggle", () => {
    if (details.open && child.result && child.stale) {
      child.stale = false;
      details.querySelector(".subagent-transcript-slot").replaceChildren(transcriptNode(child.result));
    }
  });
  return child;
}

// ---- the card ----

/** @param {Card} card */
function paint(card) {
  card.timer = null;
  card.paintedAt = performance.now();
  const { call } = card;
  const args = call.args ?? {};
  const source = call.result ?? call.partial ?? null;
  const details = source?.details && typeof source.details === "object" ? source.details : null;
  const finished = call.status === "done" || call.status === "error" || call.status === "interrupted";
  const results = Array.isArray(details?.results) ? details.results : [];
  const mode = details?.mode ?? callSummary(args).mode;
  card.root.dataset.mode = mode;
  card.root.dataset.finished = String(finished);
  card.progress.textContent = progressText(details, args, finished);
  if (!results.length) {
    card.list.replaceChildren(callPlan(args));
    card.children = [];
    const text = call.result ? textBlocks(call.result) : "";
    card.foot.replaceChildren(
      text
        ? h("pre", { class: "tool-pre", ...scrollRegion("Result"), text })
        : call.status === "interrupted"
          ? h("p", { class: "hint", text: "This call did not finish." })
          : "",
    );
    return;
  }
  if (!card.children.length) card.list.replaceChildren();
  results.forEach((r, i) => {
    let child = card.children[i];
    if (!child) {
      child = card.children[i] = makeChild();
      child.el.dataset.index = String(i);
      card.list.append(child.el);
    }
    const sig = childSig(r);
    if (sig !== child.sig) {
      child.sig = sig;
      paintChild(child, r, mode, i);
    }
  });
  for (let i = results.length; i < card.children.length; i += 1) card.children[i].el.remove();
  card.children.length = results.length;
  const total = formatUsage(sumUsage(results));
  /** @type {HTMLElement[]} */
  const parts = [];
  if (finished && total && results.length > 1)
    parts.push(h("div", { class: "subagent-total small", text: `Total: ${total}` }));
  if (finished && call.status === "error" && call.result) {
    const text = textBlocks(call.result);
    if (text && mode !== "parallel") parts.push(h("div", { class: "subagent-error", text: cut(text, 400) }));
  }
  card.foot.replaceChildren(...parts);
}

/** @param {Card} card */
function schedule(card) {
  const finished = card.call.status !== "running" && card.call.status !== "streaming";
  const since = performance.now() - (card.paintedAt ?? -Infinity);
  if (finished || since >= PAINT_INTERVAL_MS) {
    clearTimeout(card.timer);
    paint(card);
  } else if (!card.timer) {
    card.timer = setTimeout(() => paint(card), PAINT_INTERVAL_MS - since);
  }
}

/**
 * @param {string} key
 * @returns {Card}
 */
function cardFor(key) {
  let card = cards.get(key);
  if (!card) {
    const progress = h("div", { class: "subagent-progress", role: "status" });
    const list = h("div", { class: "subagent-children" });
    const foot = h("div", { class: "subagent-foot" });
    card = {
      root: h("div", { class: "subagent-card" }, progress, list, foot),
      progress,
      list,
      foot,
      children: [],
      timer: null,
      paintedAt: null,
      call: null,
    };
    cards.set(key, card);
    if (cards.size > MAX_CARDS) cards.delete(cards.keys().next().value);
  }
  return card;
}

registerToolRenderer("subagent", (/** @type {SubagentCall} */ call) => {
  const args = call.args && typeof call.args === "object" ? call.args : {};
  const key = call.id || JSON.stringify(args);
  const card = cardFor(key);
  card.call = call;
  schedule(card);
  const source = call.result ?? call.partial ?? null;
  const finished = call.status === "done" || call.status === "error" || call.status === "interrupted";
  const summary = callSummary(args).text;
  const progress = source?.details ? progressText(source.details, args, finished) : "";
  return {
    title: "subagent",
    summary: progress && callSummary(args).mode !== "single" ? progress : summary,
    body: card.root,
  };
});
