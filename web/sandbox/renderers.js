// @ts-check
// How the chat shows the calls of the workspace tools (read, write, edit, ls, grep, find) and
// of the javascript and python tools: the arguments (code highlighted), live output while the
// tool runs, and the result. Everything is built with DOM APIs and textContent: no text from a
// model or a tool is ever parsed as HTML.
//
//   renderToolCall({ toolName, args, result, isError, running }) -> HTMLElement | null
// `result` is the tool result ({content, details}) or, while running, the latest partial result.
// Clicking a file name dispatches "py-agent:open-file" ({detail: {path}}) on document.
// The cards of calls that changed files (write, edit, python, javascript) have an Undo button: it
// asks Python (py_agent/browser/workspace.py undo_change) to put the previous content back, and
// asks the user first when the file changed after the agent's change.
// Paths are drawn as names (web/ui/dom.js nameNode): isolated, their hidden characters shown.

import { confirmDialog } from "../ui/dialogs.js";
import { nameNode, nameText, visibleName, visibleText } from "../ui/dom.js";

/**
 * A tool's result ({content, details}) as the chat has it; `details` are the tool's own (Python's).
 * @typedef {object} ToolResult
 * @property {{ type: string, text?: string }[]} [content]
 * @property {Record<string, any>} [details]
 */
/**
 * A tool call as the chat's renderer hook passes it (web/ui/extensions.js).
 * @typedef {object} ToolCall
 * @property {string} name
 * @property {Record<string, any> | null} [args]
 * @property {string} status "streaming", "running", "done", "error" or "interrupted"
 * @property {ToolResult | null} [result]
 * @property {ToolResult | null} [partial] the latest partial result while the tool runs
 * @property {string} [id] the call's id (its Undo button needs it, with `sessionId`)
 * @property {string} [sessionId]
 */

export const TOOL_NAMES = ["read", "write", "edit", "ls", "grep", "find", "javascript", "python"];

/** @type {Record<string, Set<string>>} */
const KEYWORDS = {
  javascript: new Set(
    (
      "await async break case catch class const continue debugger default delete do else export extends " +
      "false finally for function if import in instanceof let new null of return static super switch this throw true try " +
      "typeof undefined var void while with yield"
    ).split(" "),
  ),
  python: new Set(
    (
      "False None True and as assert async await break class continue def del elif else except finally for " +
      "from global if import in is lambda match case nonlocal not or pass raise return try while with yield print self"
    ).split(" "),
  ),
};
/** @type {Record<string, RegExp>} */
const TOKEN = {
  javascript:
    /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|(`(?:\\[\s\S]|[^`\\])*`|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(\b\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?n?\b)|([A-Za-z_$][\w$]*)/g,
  python:
    /(#[^\n]*)|("""[\s\S]*?"""|'''[\s\S]*?'''|[rbfu]{0,2}"(?:\\.|[^"\\\n])*"|[rbfu]{0,2}'(?:\\.|[^'\\\n])*')|(\b\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?j?\b)|([A-Za-z_][\w]*)/g,
};
/** @type {Record<string, string>} */
const LANGUAGE_BY_EXTENSION = {
  js: "javascript",
  mjs: "javascript",
  ts: "javascript",
  json: "javascript",
  py: "python",
};

/**
 * A <code> element with the code's tokens in spans (keywords, strings, comments, numbers).
 * @param {string} code
 * @param {string | undefined} language "javascript" or "python"; any other: plain text
 * @returns {HTMLElement}
 */
export function highlight(code, language) {
  const codeEl = document.createElement("code");
  const pattern = TOKEN[language];
  if (!pattern) {
    codeEl.textContent = code;
    return codeEl;
  }
  codeEl.className = `language-${language}`;
  let last = 0;
  for (const match of code.matchAll(pattern)) {
    const [text, comment, string, number, word] = match;
    let kind = null;
    if (comment) kind = "comment";
    else if (string) kind = "string";
    else if (number) kind = "number";
    else if (word && KEYWORDS[language].has(word)) kind = "keyword";
    if (!kind) continue;
    if (match.index > last) codeEl.append(code.slice(last, match.index));
    const span = document.createElement("span");
    span.className = `tok-${kind}`;
    span.textContent = text;
    codeEl.append(span);
    last = match.index + text.length;
  }
  if (last < code.length) codeEl.append(code.slice(last));
  return codeEl;
}

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * @param {ToolResult | null} result
 * @returns {string}
 */
function resultText(result) {
  const content = result?.content ?? [];
  return content
    .filter((c) => c && c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

/**
 * @param {string} path
 * @param {number} [size]
 */
function fileChip(path, size) {
  const button = el("button", "pa-chip");
  button.append(nameNode(path), size === undefined ? "" : ` · ${size} B`);
  button.type = "button";
  button.title = `Show ${nameText(path)} in the workspace panel`;
  button.addEventListener("click", () =>
    document.dispatchEvent(new CustomEvent("py-agent:open-file", { detail: { path } })),
  );
  return button;
}

// A box that may scroll: focusable (keyboard users scroll it) and named.
/**
 * @template {HTMLElement} E
 * @param {E} node
 * @param {string} label
 * @returns {E}
 */
function scrollable(node, label) {
  node.tabIndex = 0;
  node.setAttribute("role", "group");
  node.setAttribute("aria-label", label);
  return node;
}

/**
 * @param {unknown} code
 * @param {string | undefined} language
 */
function codeBlock(code, language) {
  const pre = scrollable(el("pre", "pa-code"), language ? `${language} code` : "Code");
  pre.append(highlight(String(code ?? ""), language));
  return pre;
}

// Added and removed lines keep their "+" and "-" marks (not told apart by colour alone).
/** @param {unknown} diff */
function diffBlock(diff) {
  const pre = scrollable(el("pre", "pa-diff"), "Changes (+ added lines, - removed lines)");
  for (const line of String(diff).split("\n")) {
    const kind = line.startsWith("+") ? "added" : line.startsWith("-") ? "removed" : "context";
    pre.append(el("span", `pa-diff-${kind}`, `${line}\n`));
  }
  return pre;
}

/**
 * A card's summary: text and paths (drawn as names), in a span.
 * @param {...(string | Node)} parts
 */
function line(...parts) {
  const span = document.createElement("span");
  span.append(...parts);
  return span;
}

/**
 * @param {unknown} path
 * @param {string} missing what stands for no path
 * @returns {string | HTMLElement}
 */
function pathNode(path, missing) {
  return path === undefined || path === null || path === "" ? missing : nameNode(String(path));
}

// A code run without a title is summed up by its first line of code (the card's state word says
// whether it runs or ran).
/**
 * @param {unknown} code
 * @returns {string}
 */
function firstCodeLine(code) {
  const line = String(code ?? "")
    .split("\n")
    .find((l) => l.trim() && !l.trim().startsWith("#") && !l.trim().startsWith("//"));
  return line ? line.trim() : "";
}

/**
 * @param {string} toolName
 * @param {Record<string, any>} a the call's arguments
 * @returns {[string, string | HTMLElement]} the card's title and summary
 */
function summaryOf(toolName, a) {
  switch (toolName) {
    case "read": {
      const range =
        a.offset !== undefined || a.limit !== undefined
          ? `:${a.offset ?? 1}${a.limit !== undefined ? `-${(a.offset ?? 1) + a.limit - 1}` : ""}`
          : "";
      return [`read`, line(pathNode(a.path, "…"), range)];
    }
    case "write":
      return ["write", line(pathNode(a.path, "…"))];
    case "edit":
      return ["edit", line(pathNode(a.path, "…"))];
    case "ls":
      return ["ls", line(pathNode(a.path, "."))];
    case "grep":
      return [
        "grep",
        line(`/${visibleName(a.pattern ?? "")}/ in `, pathNode(a.path, "."), a.glob ? ` (${visibleName(a.glob)})` : ""),
      ];
    case "find":
      return ["find", line(`${visibleName(a.pattern ?? "")} in `, pathNode(a.path, "."))];
    case "javascript":
      return ["JavaScript", a.title || firstCodeLine(a.code)];
    case "python":
      return ["Python", a.title || firstCodeLine(a.code)];
    default:
      return [toolName, ""];
  }
}

/**
 * The parts of a tool call's card, for the chat's renderer hook (web/ui/extensions.js):
 * call = {name, args, status: "streaming"|"running"|"done"|"error"|"interrupted", result, partial}
 * -> {title, summary, body} (null for tools this module does not render).
 * @param {ToolCall} call
 * @returns {{ title: string, summary: string | HTMLElement, body?: HTMLElement } | null}
 */
export function renderToolParts({ name, args, status, result, partial, id, sessionId }) {
  if (!TOOL_NAMES.includes(name)) return null;
  const a = args ?? {};
  const isError = status === "error";
  const running = status === "running" || status === "streaming";
  const shown = result ?? partial ?? null;
  const [title, summary] = summaryOf(name, a);
  const body = el("div", "pa-tool-body");
  if (name === "javascript" || name === "python") {
    body.append(codeBlock(a.code, name));
  } else if (name === "write" && shown?.details?.diff && shown.details.created === false && !isError) {
    body.append(diffBlock(shown.details.diff));
  } else if (name === "write" && typeof a.content === "string") {
    if (shown?.details?.created && !isError) body.append(el("p", "pa-hint", "New file."));
    else if (shown?.details?.replacedBinary) body.append(el("p", "pa-hint", "Replaced a binary file."));
    else if (shown?.details?.diffOmitted) body.append(el("p", "pa-hint", "The change is too large to show as a diff."));
    body.append(codeBlock(a.content, LANGUAGE_BY_EXTENSION[String(a.path).split(".").pop()]));
  } else if (name === "edit" && shown?.details?.diff && !isError) {
    body.append(diffBlock(shown.details.diff));
  } else if (name === "edit" && Array.isArray(a.edits)) {
    for (const edit of a.edits) body.append(diffBlock(`-${edit?.oldText ?? ""}\n+${edit?.newText ?? ""}`));
  }
  // Outputs list paths (ls, find, grep) and quote files: their hidden characters are shown.
  const output = visibleText(resultText(shown));
  const quiet = name === "edit" && !isError; // its diff says it; write's result says what was written
  if ((output && !quiet) || running) {
    body.append(
      scrollable(
        el(
          "pre",
          `pa-output${isError ? " pa-output-error" : ""}`,
          output || (status === "streaming" ? "Preparing…" : "Running…"),
        ),
        isError ? "Error" : "Output",
      ),
    );
  } else if (status === "interrupted") {
    body.append(el("p", "pa-hint", "This tool call did not finish."));
  }
  const files = shown?.details?.files;
  const touched = Array.isArray(files) ? files.map((f) => f.path) : [];
  if (!isError && !running && (name === "write" || name === "edit") && a.path) touched.push(a.path);
  if (touched.length) {
    const chips = el("div", "pa-chips");
    for (const path of [...new Set(touched)]) chips.append(fileChip(path));
    body.append(chips);
  }
  const changed = name === "write" || name === "edit" || touched.length || shown?.details?.deleted?.length;
  if (changed && !running && status !== "streaming" && id && sessionId) body.append(undoControl(sessionId, id));
  return { title, summary, body };
}

/** @type {any} */
let workspacePython = null; // py_agent.browser.workspace, imported once (a proxy per paint would pile up)

/** @returns {Promise<any>} the Pyodide proxy of py_agent.browser.workspace */
async function workspaceModule() {
  const { pyodide } = await window.pyAgent.ready;
  workspacePython ??= pyodide.pyimport("py_agent.browser.workspace");
  return workspacePython;
}

// Asked at every paint: at once when the session's workspace is open in Python, else once it is.
/**
 * @param {string} sessionId
 * @param {string} id
 * @returns {string} "unknown" until Python can tell, else Python's undo_state
 */
function undoState(sessionId, id) {
  const pyodide = window.pyAgent?.pyodide;
  if (!pyodide) return "unknown";
  try {
    workspacePython ??= pyodide.pyimport("py_agent.browser.workspace");
    return String(workspacePython.undo_state(sessionId, id));
  } catch {
    return "unknown";
  }
}

/**
 * The Undo button of a call that changed files (nothing when it changed none kept for undo).
 * @param {string} sessionId
 * @param {string} id
 */
function undoControl(sessionId, id) {
  const box = el("div", "pa-undo");
  const state = undoState(sessionId, id);
  if (state === "unknown") {
    workspaceModule()
      .then((python) => python.load_undo_state(sessionId, id))
      .then((known) => fillUndo(box, sessionId, id, String(known)))
      .catch((error) => console.warn("py-agent: could not tell whether a change can be undone", error));
  } else fillUndo(box, sessionId, id, state);
  return box;
}

/**
 * @param {HTMLElement} box
 * @param {string} sessionId
 * @param {string} id
 * @param {string} state Python's undo_state
 */
function fillUndo(box, sessionId, id, state) {
  const note = el("span", "pa-undo-note");
  note.setAttribute("role", "status");
  if (state === "none") return;
  if (state === "undone") {
    note.textContent = "Undone.";
    box.append(note);
    return;
  }
  const button = el("button", "pa-undo-button", "Undo");
  button.type = "button";
  button.title = "Put back the files as they were before this change";
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const python = await workspaceModule();
      let answer = JSON.parse(await python.undo_change(sessionId, id, false));
      if (answer.status === "confirm") {
        const go = await confirmDialog(answer.message, {
          title: "Undo the agent's change?",
          confirmLabel: "Undo anyway",
          danger: true,
        });
        if (!go) {
          note.textContent = "Not undone.";
          button.disabled = false;
          return;
        }
        answer = JSON.parse(await python.undo_change(sessionId, id, true));
      }
      note.textContent = answer.message;
      if (answer.status === "done" || answer.status === "none") button.remove();
      else button.disabled = false;
    } catch (error) {
      note.textContent = `The change could not be undone: ${error?.message ?? error}`;
      button.disabled = false;
    }
  });
  box.append(button, note);
}

/**
 * A whole card (a <details>) for one tool call, or null for tools this module does not render.
 * @param {{ toolName: string, args?: Record<string, any> | null, result?: ToolResult | null, isError?: boolean, running?: boolean }} call
 */
export function renderToolCall({ toolName, args, result, isError = false, running = false }) {
  const status = running ? "running" : isError ? "error" : "done";
  const parts = renderToolParts({
    name: toolName,
    args,
    status,
    result: running ? null : result,
    partial: running ? result : null,
  });
  if (!parts) return null;
  const card = el("details", `pa-tool pa-tool-${toolName}`);
  card.dataset.status = status;
  card.open = running || isError || toolName === "javascript" || toolName === "python";
  const head = el("summary", "pa-tool-head");
  const mark = el("span", "pa-tool-status", running ? "⋯" : isError ? "✗" : "✓");
  mark.setAttribute("aria-label", status);
  const summary = el("span", "pa-tool-title");
  summary.append(parts.summary);
  head.append(mark, el("strong", "pa-tool-name", parts.title), " ", summary);
  card.append(head, parts.body);
  return card;
}
