// @ts-check
// The workspace panel: the session's files, a preview of the selected one, and what the user does
// with them: upload files and whole folders (pickers, or drag-and-drop onto the panel), new file,
// rename, delete, download one or all (zip).
//
//   const preview = new WorkspacePreview(element, source);   // source: py_agent.browser.workspace.PreviewSource
//   preview.select("report.html");  preview.destroy();
//
// Changes go through `source` (Python), which keeps the files in IndexedDB; a change that fails
// (storage full, a file over the limit, a name taken) is reported in the panel and changes nothing
// else: the other files of an upload are still added, and a form keeps what was typed.
// An upload's name the workspace cannot hold is kept under its safe name (shown beside it) or
// refused with the reason (py_agent/tools/workspace.py safe_path); a name already taken asks:
// replace, keep both or skip, for one file or all. Names are drawn with nameNode (web/ui/dom.js).
//
// HTML, SVG and Markdown are shown ONLY inside sandboxed frames (preview.html in
// <iframe sandbox="allow-scripts">: opaque origin, no network, no page access); images as <img>
// from blob: URLs (SVG never as an image of the page); CSV as a table and text as text, both
// built with textContent. Nothing from a file is ever parsed as HTML in the page.
import { Refusal, checkPixels, imageSize, uploadRefusal } from "../attachments/inspect.js";
import { PendingAttachment } from "../attachments/attachments.js";
import { currentLimits } from "../attachments/limits.js";
import { escapeHtml, markdownToHtml } from "./markdown.js";
import { nameNode, nameText, scrollRegion, visibleName, withNames } from "../ui/dom.js";
import { createDialog, showModal } from "../ui/dialogs.js";

const HERE = new URL("./", import.meta.url);
const IMAGE_TYPES = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  bmp: "image/bmp",
  ico: "image/x-icon",
  avif: "image/avif",
};
// Documents shown as the attachments read them (web/attachments/attachments.js): the text a chip sends.
const DOCUMENT_TYPES = {
  pdf: "application/pdf",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
};
const PAGE_SCALE_MAX = 2; // a page's canvas: at most twice the CSS pixels (sharp, bounded memory)
const MAX_TABLE_ROWS = 1000;
const MAX_TEXT_CHARS = 2_000_000;
const MAX_EDIT_BYTES = 1_000_000;
const LIST_WIDTH_KEY = "py-agent.files.listWidth";
const LIST_MIN = 140;
const LIST_MAX = 640;
const LIST_DEFAULT = 240;

function extension(path) {
  const name = path.split("/").pop();
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

/** The files as a tree: {children: [folder | {file}]}, a folder {name, path, files (a count),
 * children}; children in the order of their paths (a folder's key is its name and "/"), so the
 * tree lists the files in the order `files` has them when sorted. */
export function fileTree(files) {
  const root = { path: "", files: 0, children: [], byName: new Map() };
  for (const file of files) {
    const parts = file.path.split("/");
    let node = root;
    node.files += 1;
    for (const [index, name] of parts.slice(0, -1).entries()) {
      let next = node.byName.get(name);
      if (!next) {
        next = { name, path: parts.slice(0, index + 1).join("/"), files: 0, children: [], byName: new Map() };
        node.byName.set(name, next);
        node.children.push(next);
      }
      node = next;
      node.files += 1;
    }
    node.children.push({ file, key: parts.at(-1) });
  }
  const sort = (node) => {
    const key = (child) => (child.file ? child.key : `${child.name}/`);
    node.children.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    for (const child of node.children) if (child.files) sort(child);
  };
  sort(root);
  return root;
}

/** A path drawn so that it wraps only after a "/": each part a name (nameNode), a <wbr> after each "/". */
export function pathParts(path) {
  const out = [];
  for (const part of path.split(/(?<=\/)/)) if (part) out.push(nameNode(part), el("wbr"));
  return out;
}

/** A file name whose middle gives way (an ellipsis) when it does not fit; its end (the extension
 * and a few letters) always shows. */
function middleName(name) {
  const chars = Array.from(name);
  const cut = Math.max(0, chars.length - 8);
  return [
    el("span", { class: "pa-name-head" }, nameNode(chars.slice(0, cut).join(""))),
    el("span", { class: "pa-name-tail" }, nameNode(chars.slice(cut).join(""))),
  ];
}

export function previewKind(path) {
  const ext = extension(path);
  if (ext === "html" || ext === "htm") return "html";
  if (ext === "svg") return "svg";
  if (ext === "md" || ext === "markdown") return "markdown";
  if (ext in IMAGE_TYPES) return "image";
  if (ext === "csv" || ext === "tsv") return "csv";
  if (ext in DOCUMENT_TYPES) return "document";
  return "text";
}

/** "Added 3 files, replaced 5, skipped 2." (and how many were not added) */
export function uploadSummary({ added, replaced, skipped }, failed = 0) {
  const parts = [`Added ${added} file${added === 1 ? "" : "s"}`];
  if (replaced) parts.push(`replaced ${replaced}`);
  if (skipped) parts.push(`skipped ${skipped}`);
  return `${parts.join(", ")}${failed ? `; ${failed} not added` : ""}.`;
}

function formatSize(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "style")
      node.style.cssText = value; // CSSOM: the page's CSP refuses style attributes
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

/** A File's workspace path: its path inside a picked folder, else its name. */
function pickedPath(file) {
  return file.webkitRelativePath || file.name;
}

function hasFiles(dataTransfer) {
  return [...(dataTransfer?.types ?? [])].includes("Files");
}

function entryFile(entry) {
  return new Promise((resolve, reject) => entry.file(resolve, reject));
}

function readEntries(reader) {
  return new Promise((resolve, reject) => reader.readEntries(resolve, reject));
}

/**
 * The files of a drop, folders walked (DataTransferItem.webkitGetAsEntry), as [{path, file}].
 * The entries are taken synchronously, while the drop event is being handled: the browser
 * empties the DataTransfer afterwards.
 */
export function droppedFiles(dataTransfer) {
  const items = [...(dataTransfer?.items ?? [])].filter((item) => item.kind === "file");
  const entries = items.map((item) => item.webkitGetAsEntry?.() ?? null);
  if (!entries.length || entries.some((entry) => !entry)) {
    const files = [...(dataTransfer?.files ?? [])];
    return Promise.resolve(files.map((file) => ({ path: file.name, file })));
  }
  return (async () => {
    const out = [];
    const walk = async (entry) => {
      if (entry.isFile) {
        out.push({ path: entry.fullPath.replace(/^\/+/, ""), file: await entryFile(entry) });
      } else if (entry.isDirectory) {
        const reader = entry.createReader();
        for (;;) {
          const batch = await readEntries(reader); // at most 100 at a time: read until empty
          if (!batch.length) break;
          for (const child of batch) await walk(child);
        }
      }
    };
    for (const entry of entries) await walk(entry);
    return out;
  })();
}

function decodeText(bytes) {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** RFC 4180 CSV (or TSV) rows; stops after `limit` rows. */
export function parseCsv(text, delimiter = ",", limit = MAX_TABLE_ROWS + 1) {
  const rows = [];
  let row = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length && rows.length < limit; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === "") quoted = true;
    else if (c === delimiter) {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  if ((field || row.length) && rows.length < limit) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** A document for the sandboxed preview frame. */
export function frameDocument(kind, text, title) {
  if (kind === "html") return text;
  const style = `<style>
    :root { color-scheme: light dark; }
    body { font: 15px/1.55 system-ui, sans-serif; margin: 0; padding: 16px 20px; max-width: 860px; }
    pre { background: #8881; padding: 10px; overflow: auto; border-radius: 6px; }
    code { font: 13px/1.45 ui-monospace, monospace; }
    table { border-collapse: collapse; } th, td { border: 1px solid #8886; padding: 4px 8px; }
    img { max-width: 100%; } blockquote { border-left: 3px solid #8886; margin-left: 0; padding-left: 12px; }
    body.svg { display: flex; align-items: center; justify-content: center; height: 100vh; box-sizing: border-box; max-width: none; }
    body.svg svg { max-width: 100%; max-height: 100%; }
  </style>`;
  const head = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>${style}</head>`;
  if (kind === "svg") return `${head}<body class="svg">${text}</body></html>`;
  return `${head}<body>${markdownToHtml(text)}</body></html>`;
}

/** A sandboxed frame showing `html`: preview.html, which renders it in a nested srcdoc frame. */
export function sandboxedPreviewFrame(html, title) {
  const iframe = el("iframe", {
    class: "pa-preview-frame",
    sandbox: "allow-scripts",
    referrerpolicy: "no-referrer",
    title: `Preview of ${visibleName(title)}`,
    src: new URL("preview.html", HERE).href,
  });
  iframe.addEventListener(
    "load",
    () => {
      iframe.contentWindow?.postMessage({ kind: "py-agent-preview", html, title }, "*");
    },
    { once: true },
  );
  return iframe;
}

export function downloadBytes(bytes, name, type = "application/octet-stream") {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const link = el("a", { href: url, download: name });
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

export class WorkspacePreview {
  constructor(element, source, { title = "Workspace", zipName = "workspace.zip" } = {}) {
    this.element = element;
    this.source = source;
    this.zipName = zipName;
    this.selected = null;
    this.urls = [];
    this.pending = null;
    this.files = [];
    this.busy = false;

    this.fileInput = el("input", {
      type: "file",
      multiple: "",
      hidden: "",
      onchange: () => this._picked(this.fileInput),
    });
    this.folderInput = el("input", {
      type: "file",
      multiple: "",
      webkitdirectory: "",
      hidden: "",
      onchange: () => this._picked(this.folderInput),
    });
    this.countEl = el("span", { class: "pa-count" });
    this.uploadButton = this._button("Upload files", () => this.fileInput.click());
    this.folderButton = this._button("Upload folder", () => this.folderInput.click());
    this.newButton = this._button("New file", () => this.showNewFile());
    this.zipButton = this._button("Download all (.zip)", () => this.downloadAll());
    this.status = el("p", { class: "pa-status", role: "status", "aria-live": "polite" });
    this.errors = el("div", { class: "pa-errors", role: "alert" });
    this.form = el("div", { class: "pa-form-slot" });
    this.folded = new Set(); // folder paths the user folded (the tree starts unfolded)
    this.focusKey = null;
    this.list = el("ul", {
      class: "pa-files",
      role: "tree",
      "aria-label": "Workspace files",
      onclick: (event) => this._treeClick(event),
      onkeydown: (event) => this._treeKey(event),
    });
    this.viewTitle = el("span", { class: "pa-view-title" });
    this.editButton = this._button("Edit", () => this.edit());
    this.renameButton = this._button("Rename", () => this.showRename());
    this.deleteButton = this._button("Delete", () => this.showDelete());
    this.downloadButton = this._button("Download", () => this.downloadSelected());
    for (const button of [this.editButton, this.renameButton, this.deleteButton, this.downloadButton])
      button.disabled = true;
    this.content = el("div", { class: "pa-view-content", ...scrollRegion("Preview") });
    this.viewActions = el(
      "div",
      { class: "pa-actions pa-view-actions", id: `pa-view-actions-${Math.random().toString(36).slice(2, 8)}` },
      this.editButton,
      this.renameButton,
      this.deleteButton,
      this.downloadButton,
    );
    // A narrow panel folds the file's actions behind one button (a disclosure: the same buttons).
    this.moreButton = el("button", {
      type: "button",
      class: "pa-button pa-more",
      text: "More actions",
      "aria-expanded": "false",
      "aria-controls": this.viewActions.id,
      onclick: () => this._more(this.moreButton.getAttribute("aria-expanded") !== "true"),
    });
    this.viewActions.addEventListener("click", (event) => {
      if (event.target.closest("button")) this._more(false);
    });
    this.viewActions.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.viewActions.classList.contains("pa-open")) {
        event.stopPropagation();
        this._more(false);
        this.moreButton.focus();
      }
    });
    this.resizer = el("div", {
      class: "pa-resizer",
      role: "separator",
      tabindex: "0",
      "aria-orientation": "vertical",
      "aria-label": "Width of the file list",
      "aria-valuemin": String(LIST_MIN),
      "aria-valuemax": String(LIST_MAX),
      onkeydown: (event) => this._resizeKey(event),
      onpointerdown: (event) => this._resizeStart(event),
    });
    this.dropHint = el("div", {
      class: "pa-drop-hint",
      "aria-hidden": "true",
      text: "Drop files or folders to add them",
    });
    this.root = el(
      "section",
      { class: "pa-preview", "aria-label": title },
      el(
        "header",
        { class: "pa-preview-header" },
        el("h2", { text: title }),
        this.countEl,
        el("div", { class: "pa-actions" }, this.uploadButton, this.folderButton, this.newButton, this.zipButton),
      ),
      this.fileInput,
      this.folderInput,
      this.status,
      this.errors,
      this.form,
      el(
        "div",
        { class: "pa-preview-body" },
        this.list,
        this.resizer,
        el(
          "section",
          { class: "pa-view", "aria-live": "polite", "aria-label": "Selected file" },
          el("div", { class: "pa-view-header" }, this.viewTitle, this.moreButton, this.viewActions),
          this.content,
        ),
      ),
      this.dropHint,
    );
    this._dragDepth = 0;
    this.root.addEventListener("dragenter", (event) => this._drag(event, 1));
    this.root.addEventListener("dragover", (event) => this._drag(event, 0));
    this.root.addEventListener("dragleave", (event) => this._drag(event, -1));
    this.root.addEventListener("drop", (event) => this._drop(event));
    element.replaceChildren(this.root);
    this._setListWidth(Number(localStorage.getItem(LIST_WIDTH_KEY)) || LIST_DEFAULT, false);
    this.unsubscribe = source.subscribe((json) => this._changed(JSON.parse(json)));
    this.refresh();
  }

  _more(open) {
    this.moreButton.setAttribute("aria-expanded", String(open));
    this.viewActions.classList.toggle("pa-open", open);
  }

  // ---- the list's width: a drag handle (or its arrow keys), remembered in localStorage ----

  _setListWidth(width, save = true) {
    // At most 60% of the panel's body (files.css caps it there too), so the value said is the width seen.
    const room = this.list.parentElement.clientWidth;
    const max = room ? Math.max(LIST_MIN, Math.min(LIST_MAX, Math.floor(room * 0.6))) : LIST_MAX;
    const value = Math.round(Math.min(max, Math.max(LIST_MIN, width)));
    this.resizer.setAttribute("aria-valuemax", String(max));
    this.listWidth = value;
    this.root.style.setProperty("--pa-list-w", `${value}px`);
    this.resizer.setAttribute("aria-valuenow", String(value));
    this.resizer.setAttribute("aria-valuetext", `${value} pixels`);
    if (save) {
      try {
        localStorage.setItem(LIST_WIDTH_KEY, String(value));
      } catch {
        // Storage refused (private mode, full): the width holds until the page is reloaded.
      }
    }
  }

  _resizeKey(event) {
    const step = event.shiftKey ? 64 : 16;
    const to = {
      ArrowLeft: this.listWidth - step,
      ArrowRight: this.listWidth + step,
      Home: LIST_MIN,
      End: LIST_MAX,
    }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    this._setListWidth(to);
  }

  _resizeStart(event) {
    if (event.button !== 0) return;
    event.preventDefault();
    const left = this.list.getBoundingClientRect().left;
    this.resizer.setPointerCapture?.(event.pointerId);
    this.resizer.focus();
    const move = (moved) => this._setListWidth(moved.clientX - left);
    const end = () => {
      this.resizer.removeEventListener("pointermove", move);
      this.resizer.removeEventListener("pointerup", end);
      this.resizer.removeEventListener("pointercancel", end);
    };
    this.resizer.addEventListener("pointermove", move);
    this.resizer.addEventListener("pointerup", end);
    this.resizer.addEventListener("pointercancel", end);
  }

  _button(text, onclick) {
    return el("button", { type: "button", class: "pa-button", text, onclick });
  }

  _changed(change) {
    // The user's own changes select what they touched themselves; a tool's writes are followed.
    if (change.kind === "write" && change.source && !["import", "panel", "outside"].includes(change.source))
      this.autoSelect = change.path;
    if (change.kind !== "write" || change.path === this.selected) this.dirtySelection = true;
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      const target = this.autoSelect;
      this.autoSelect = null;
      this.refresh(target);
    }, 80);
  }

  /** The tree's items (WAI-ARIA tree pattern): folders first by name order, each with its count. */
  _treeItems(node, level) {
    const items = [];
    for (const child of node.children) {
      if (child.files) {
        const folded = this.folded.has(child.path);
        const group = el("ul", { role: "group" }, ...this._treeItems(child, level + 1));
        group.hidden = folded;
        items.push(
          el(
            "li",
            {
              role: "treeitem",
              class: "pa-folder",
              "aria-expanded": String(!folded),
              "aria-level": String(level),
              "data-key": `d:${child.path}`,
              "data-folder": child.path,
              tabindex: "-1",
              title: nameText(child.path),
            },
            el(
              "div",
              { class: "pa-row", style: `--pa-depth: ${level - 1}` },
              el("span", { class: "pa-twisty", "aria-hidden": "true" }),
              el("span", { class: "pa-folder-name" }, nameNode(child.name)),
              el("span", { class: "pa-folder-count", text: `${child.files} file${child.files === 1 ? "" : "s"}` }),
            ),
            group,
          ),
        );
        continue;
      }
      const file = child.file;
      const slash = file.path.lastIndexOf("/");
      const item = el(
        "li",
        {
          role: "treeitem",
          class: "pa-file",
          "aria-level": String(level),
          "aria-selected": String(file.path === this.selected),
          "data-key": `f:${file.path}`,
          "data-path": file.path,
          tabindex: "-1",
          title: nameText(file.path),
        },
        el(
          "div",
          { class: "pa-row", style: `--pa-depth: ${level - 1}` },
          el(
            "span",
            { class: "pa-file-name" },
            // The folder part is there for screen readers, copying and the focused item; the tree
            // shows it by nesting. The name's end (its extension) is never elided: see middleName.
            el("span", { class: "pa-file-dir" }, ...pathParts(file.path.slice(0, slash + 1))),
            ...middleName(file.path.slice(slash + 1)),
          ),
          el("span", { class: "pa-file-size", text: formatSize(file.size) }),
        ),
      );
      if (file.path === this.selected) item.setAttribute("aria-current", "true");
      items.push(item);
    }
    return items;
  }

  /** The tree's visible items, in order. */
  _visibleItems() {
    return [...this.list.querySelectorAll('[role="treeitem"]')].filter((item) => {
      const folded = item.closest("ul[hidden]");
      return !folded || !this.list.contains(folded);
    });
  }

  /** One item of the tree takes Tab (roving tabindex); `focus` moves the focus to it. */
  _rove(item, focus = false) {
    item ??= this.list.querySelector('[aria-selected="true"]') ?? this._visibleItems()[0];
    if (!item) return;
    // An item in a folded folder: the folder takes Tab (only the tree's own groups count: the
    // whole panel may be hidden, a phone's closed sheet).
    for (let folded = item.closest("ul[hidden]"); folded && this.list.contains(folded); ) {
      item = folded.closest('[role="treeitem"]');
      folded = item.closest("ul[hidden]");
    }
    for (const other of this.list.querySelectorAll('[tabindex="0"]')) other.tabIndex = -1;
    item.tabIndex = 0;
    this.focusKey = item.dataset.key;
    if (focus) item.focus();
  }

  _fold(folder, open) {
    const path = folder.dataset.folder;
    if (open) this.folded.delete(path);
    else this.folded.add(path);
    folder.setAttribute("aria-expanded", String(open));
    folder.querySelector(":scope > ul").hidden = !open;
  }

  _treeClick(event) {
    const item = event.target.closest('[role="treeitem"]');
    if (!item || !this.list.contains(item)) return;
    this._rove(item, true);
    if (item.dataset.folder !== undefined) this._fold(item, item.getAttribute("aria-expanded") !== "true");
    else this.select(item.dataset.path);
  }

  _treeKey(event) {
    const item = event.target.closest('[role="treeitem"]');
    if (!item) return;
    const items = this._visibleItems();
    const at = items.indexOf(item);
    const folder = item.dataset.folder !== undefined;
    const open = item.getAttribute("aria-expanded") === "true";
    let next = null;
    switch (event.key) {
      case "ArrowDown":
        next = items[at + 1];
        break;
      case "ArrowUp":
        next = items[at - 1];
        break;
      case "Home":
        next = items[0];
        break;
      case "End":
        next = items.at(-1);
        break;
      case "ArrowRight":
        if (folder && !open) this._fold(item, true);
        else if (folder) next = item.querySelector('[role="treeitem"]');
        break;
      case "ArrowLeft":
        if (folder && open) this._fold(item, false);
        else next = item.parentElement.closest('[role="treeitem"]');
        break;
      case "Enter":
      case " ":
        if (folder) this._fold(item, !open);
        else this.select(item.dataset.path);
        break;
      default:
        return;
    }
    event.preventDefault();
    if (next) this._rove(next, true);
  }

  refresh(select = null) {
    this.files = JSON.parse(this.source.list());
    this.countEl.textContent = `${this.files.length} file${this.files.length === 1 ? "" : "s"}`;
    this.zipButton.disabled = this.files.length === 0;
    const hadFocus = this.list.contains(document.activeElement);
    this.list.replaceChildren(...this._treeItems(fileTree(this.files), 1));
    this.list.setAttribute("role", this.files.length ? "tree" : "list"); // the empty state is no tree
    this._rove(this.list.querySelector(`[data-key="${CSS.escape(this.focusKey ?? "")}"]`), hadFocus);
    if (!this.files.length) {
      this.list.append(
        el(
          "li",
          { class: "pa-empty" },
          el("p", { text: "No files yet. Add your own for the agent to work on, or let it write some." }),
          el(
            "div",
            { class: "pa-actions" },
            this._button("Upload files", () => this.fileInput.click()),
            this._button("Upload folder", () => this.folderInput.click()),
          ),
          el("p", { class: "pa-hint", text: "You can also drop files and folders here." }),
        ),
      );
    }
    const stillThere = this.files.some((f) => f.path === this.selected);
    if (this.editing && stillThere) {
      // Never replace what the user is typing: the editor stays until Save or Cancel.
      this.dirtySelection = false;
      return;
    }
    if (select && this.files.some((f) => f.path === select)) this.select(select);
    else if (!stillThere) this.select(null);
    else if (this.dirtySelection) this.select(this.selected);
    this.dirtySelection = false;
  }

  _clearUrls() {
    for (const url of this.urls) URL.revokeObjectURL(url);
    this.urls = [];
  }

  select(path) {
    if (path !== this.selected && this.form.dataset.for && this.form.dataset.for !== "new") this.closeForm();
    this.selected = path;
    this.editing = null;
    this._clearUrls();
    this._endDocument();
    for (const item of this.list.querySelectorAll(".pa-file")) {
      item.setAttribute("aria-selected", String(item.dataset.path === path));
      if (item.dataset.path === path) item.setAttribute("aria-current", "true");
      else item.removeAttribute("aria-current");
    }
    for (const button of [this.editButton, this.renameButton, this.deleteButton, this.downloadButton])
      button.disabled = !path;
    this.viewTitle.replaceChildren(...(path ? pathParts(path) : []));
    this.viewTitle.title = path ? nameText(path) : "";
    if (!path) {
      this.content.replaceChildren(
        el("p", { class: "pa-hint", text: this.files.length ? "Select a file to preview it." : "" }),
      );
      return;
    }
    const bytes = this.source.read(path);
    if (!bytes) {
      this.editButton.disabled = true;
      this.content.replaceChildren(el("p", { class: "pa-hint", text: "This file no longer exists." }));
      return;
    }
    this.editButton.disabled =
      bytes.length > MAX_EDIT_BYTES || previewKind(path) === "image" || decodeText(bytes) === null;
    this.content.replaceChildren(this.render(path, bytes));
    this.content.dataset.kind = previewKind(path);
  }

  /** Edit the selected text file in place; Save writes it, Cancel (or Esc) keeps the file as it was. */
  edit() {
    const path = this.selected;
    const bytes = path ? this.source.read(path) : null;
    const text = bytes ? decodeText(bytes) : null;
    if (text === null) return;
    const id = `pa-edit-${Math.random().toString(36).slice(2, 8)}`;
    const area = el("textarea", { id, class: "pa-editor", spellcheck: "false" });
    area.value = text;
    const save = el("button", { type: "submit", class: "pa-button pa-primary", text: "Save" });
    const cancel = this._button("Cancel", () => this.select(path));
    const error = el("p", { class: "pa-form-error", role: "alert" });
    const form = el(
      "form",
      { class: "pa-edit" },
      el("label", { for: id }, "Contents of ", nameNode(path)),
      area,
      el("div", { class: "pa-actions" }, save, cancel),
      error,
    );
    form.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        this.select(path);
        this.editButton.focus();
      }
    });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      save.disabled = true;
      try {
        const outcome = JSON.parse(await this.source.add(path, new TextEncoder().encode(area.value)));
        if (outcome.error) {
          error.replaceChildren(...withNames(outcome.error, [path]));
          return;
        }
        this._say("Saved ", nameNode(path), ".");
        this.select(path);
        this.editButton.focus();
      } catch (failure) {
        error.textContent = String(failure?.message ?? failure);
      } finally {
        save.disabled = false;
      }
    });
    this.editButton.disabled = true;
    this.editing = path;
    this.content.replaceChildren(form);
    area.focus();
  }

  /** A PDF's pages (drawn as they scroll into view, up to the attachments' page limit) and, for
   * PDF, DOCX and XLSX, the text a chip of this file would send: read by the attachments' worker. */
  _documentPreview(path, bytes) {
    const job = {};
    this.documentJob = job;
    const meta = el("p", { class: "pa-hint pa-doc-meta", text: "Reading the text…" });
    const code = el("code");
    const text = el(
      "section",
      { class: "pa-doc-text", "aria-label": "Text sent to the model" },
      el("h3", { text: "Text sent to the model" }),
      meta,
      el("pre", { class: "pa-text", ...scrollRegion("Text sent to the model") }, code),
    );
    const name = path.split("/").pop();
    const type = DOCUMENT_TYPES[extension(path)];
    const attachment = new PendingAttachment(new File([bytes], name, { type }));
    attachment.done.then((read) => {
      read.dispose();
      if (this.documentJob !== job) return;
      if (read.status === "error") {
        meta.textContent = read.error;
        return;
      }
      const sent = read.payload.text;
      const tokens = Math.ceil(sent.length / 4); // pi's estimate, as the composer's (web/ui/composer.js)
      meta.textContent = `${sent.length.toLocaleString("en")} characters, about ${tokens.toLocaleString("en")} tokens.${read.notice ? ` ${read.notice}` : ""}`;
      code.textContent = sent;
    });
    const parts = [text];
    if (type === DOCUMENT_TYPES.pdf) {
      const pages = el("div", { class: "pa-pages", role: "group", "aria-label": "Pages" });
      parts.unshift(pages);
      this._drawPages(pages, bytes, job).catch((error) => {
        if (this.documentJob === job)
          pages.replaceChildren(
            el("p", { class: "pa-hint", text: `The pages can't be shown: ${error?.message ?? error}` }),
          );
      });
    }
    return el("div", { class: "pa-doc" }, ...parts);
  }

  async _drawPages(host, bytes, job) {
    const pdfjs = await import("../vendor/pdf.min.js");
    pdfjs.GlobalWorkerOptions.workerSrc = new URL("../vendor/pdf.worker.min.js", import.meta.url).href;
    const doc = await pdfjs.getDocument({ data: bytes.slice(), isEvalSupported: false, verbosity: 0 }).promise;
    if (this.documentJob !== job) {
      doc.loadingTask.destroy();
      return;
    }
    job.doc = doc;
    const count = Math.min(doc.numPages, currentLimits().maxPages);
    const first = (await doc.getPage(1)).getViewport({ scale: 1 });
    const draw = async (canvas) => {
      const page = await doc.getPage(Number(canvas.dataset.page));
      const scale = Math.min(PAGE_SCALE_MAX, ((host.clientWidth || 600) * devicePixelRatio) / first.width);
      const viewport = page.getViewport({ scale });
      canvas.width = Math.floor(viewport.width);
      canvas.height = Math.floor(viewport.height);
      await page.render({ canvasContext: canvas.getContext("2d"), viewport }).promise;
      page.cleanup();
      canvas.dataset.drawn = "true";
    };
    // Pages are drawn as they come near the view: a long PDF costs only what is looked at.
    job.observer = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          job.observer.unobserve(entry.target);
          draw(entry.target).catch(() => {
            /** @type {HTMLCanvasElement} */ (entry.target).dataset.drawn = "failed";
          });
        }
      },
      { root: this.content, rootMargin: "600px 0px" },
    );
    for (let n = 1; n <= count; n++) {
      const canvas = el("canvas", {
        class: "pa-page",
        role: "img",
        "aria-label": `Page ${n} of ${doc.numPages}`,
        "data-page": String(n),
        style: `aspect-ratio: ${first.width} / ${first.height}`,
      });
      host.append(canvas);
      job.observer.observe(canvas);
    }
    if (count < doc.numPages)
      host.append(
        el("p", {
          class: "pa-hint",
          text: `The first ${count} of ${doc.numPages} pages (the attachments' page limit).`,
        }),
      );
  }

  _endDocument() {
    const job = this.documentJob;
    this.documentJob = null;
    job?.observer?.disconnect();
    job?.doc?.loadingTask.destroy();
  }

  render(path, bytes) {
    const kind = previewKind(path);
    if (kind === "image") {
      // An image a tool wrote is decoded by this page: not past the attachments' limit.
      const size = imageSize(bytes);
      try {
        if (size?.width && size.height) checkPixels(size, path, currentLimits());
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        return el("p", { class: "pa-hint", text: `No preview: ${error.message} Use Download.` });
      }
      const url = URL.createObjectURL(new Blob([bytes], { type: IMAGE_TYPES[extension(path)] }));
      this.urls.push(url);
      return el("img", { class: "pa-image", src: url, alt: visibleName(path) });
    }
    if (kind === "document") return this._documentPreview(path, bytes);
    const text = decodeText(bytes);
    if (text === null) {
      return el("p", {
        class: "pa-hint",
        text: `Binary file (${formatSize(bytes.length)}): no preview. Use Download.`,
      });
    }
    if (kind === "html" || kind === "svg" || kind === "markdown") {
      return sandboxedPreviewFrame(frameDocument(kind, text, path), path);
    }
    if (kind === "csv") {
      const rows = parseCsv(text, extension(path) === "tsv" ? "\t" : ",");
      const shown = rows.slice(0, MAX_TABLE_ROWS);
      const table = el("table", { class: "pa-table" });
      if (shown.length) {
        table.append(el("thead", {}, el("tr", {}, ...shown[0].map((cell) => el("th", { text: cell })))));
        table.append(
          el("tbody", {}, ...shown.slice(1).map((row) => el("tr", {}, ...row.map((cell) => el("td", { text: cell }))))),
        );
      }
      const wrap = el("div", { class: "pa-table-wrap" }, table);
      if (rows.length > MAX_TABLE_ROWS)
        wrap.append(el("p", { class: "pa-hint", text: `First ${MAX_TABLE_ROWS} rows shown.` }));
      return wrap;
    }
    const shownText = text.length > MAX_TEXT_CHARS ? `${text.slice(0, MAX_TEXT_CHARS)}\n…` : text;
    return el("pre", { class: "pa-text" }, el("code", { text: shownText }));
  }

  // ---- messages ----

  /** The status line: text and names (nodes). */
  _say(...parts) {
    this.status.replaceChildren(...parts);
  }

  /** What went wrong (and, with `renamed`, which names were changed): `problems` are lines, each a
   * string or nodes. */
  _report(title, problems, renamed = []) {
    if (!problems.length && !renamed.length) {
      this.errors.replaceChildren();
      return;
    }
    const dismiss = this._button("Dismiss", () => this.errors.replaceChildren());
    const list = (lines) => el("ul", {}, ...lines.map((line) => el("li", {}, ...[line].flat())));
    this.errors.replaceChildren(
      el(
        "div",
        { class: "pa-error" },
        ...(problems.length ? [el("p", { class: "pa-error-title", text: title }), list(problems)] : []),
        ...(renamed.length
          ? [
              el("p", {
                class: "pa-error-title",
                text:
                  renamed.length === 1
                    ? "One file was stored under another name:"
                    : `${renamed.length} files were stored under another name:`,
              }),
              list(renamed.map(([from, to, why]) => [nameNode(from), ` is stored as `, nameNode(to), ` (${why}).`])),
            ]
          : []),
        dismiss,
      ),
    );
  }

  // ---- upload ----

  _picked(input) {
    const picked = [...(input.files ?? [])].map((file) => ({ path: pickedPath(file), file }));
    input.value = "";
    this.upload(picked);
  }

  _drag(event, step) {
    if (!hasFiles(event.dataTransfer)) return;
    event.preventDefault();
    event.stopPropagation();
    if (event.type === "dragover") event.dataTransfer.dropEffect = "copy";
    this._dragDepth = Math.max(0, this._dragDepth + step);
    this.root.classList.toggle("pa-dropping", this._dragDepth > 0);
  }

  _drop(event) {
    event.preventDefault();
    event.stopPropagation();
    this._dragDepth = 0;
    this.root.classList.remove("pa-dropping");
    const pending = droppedFiles(event.dataTransfer);
    pending.then(
      (files) => this.upload(files),
      (error) => this._report("The dropped files could not be read.", [visibleName(error?.message ?? error)]),
    );
  }

  /** Add [{path, file}] to the workspace, one at a time; returns the paths written. */
  async upload(files) {
    if (!files.length) return [];
    const limits = JSON.parse(this.source.limits());
    const fileLimits = currentLimits(); // the attachments' limits: the same file gets the same answer
    const targets = files.map(({ path }) => JSON.parse(this.source.target(path)));
    const written = [];
    const counts = { added: 0, replaced: 0, skipped: 0 };
    const problems = [];
    const renamed = [];
    let forAll = null; // the choice made "for all" in the name-taken dialog
    this.busy = true;
    try {
      for (const [index, { path, file }] of files.entries()) {
        this._say(`Adding ${index + 1} of ${files.length}: `, nameNode(path), "…");
        const target = targets[index];
        if (target.error) {
          problems.push(withNames(target.error, [path]));
          continue;
        }
        if (file.size > limits.maxFileBytes) {
          problems.push([
            nameNode(path),
            ` was not added: ${formatSize(file.size)} is over the limit of ${formatSize(limits.maxFileBytes)} per file.`,
          ]);
          continue;
        }
        let destination = target.path;
        let choice = "add";
        if (this.source.exists(destination)) {
          if (forAll) choice = forAll;
          else {
            const others = targets.slice(index + 1).filter((t) => t.taken).length;
            const answer = await this._askTaken(destination, others);
            choice = answer.choice;
            if (answer.all) forAll = choice;
          }
          if (choice === "skip") {
            counts.skipped += 1;
            continue;
          }
          if (choice === "keep") destination = this.source.free_path(destination);
        }
        let bytes;
        try {
          const refused = await uploadRefusal(file, path, fileLimits);
          if (refused) {
            problems.push([nameNode(path), ` was not added: ${refused}`]);
            continue;
          }
          bytes = new Uint8Array(await file.arrayBuffer());
        } catch (error) {
          problems.push([nameNode(path), ` could not be read: ${visibleName(error?.message ?? error)}`]);
          continue;
        }
        try {
          const outcome = JSON.parse(await this.source.add(destination, bytes));
          if (outcome.error) {
            problems.push(withNames(outcome.error, [destination, path]));
            continue;
          }
          written.push(outcome.path);
          counts[choice === "replace" ? "replaced" : "added"] += 1;
          if (outcome.path !== path)
            renamed.push([
              path,
              outcome.path,
              outcome.path === target.path ? "its name can't be kept as it is" : "kept beside the file of that name",
            ]);
        } catch (error) {
          problems.push([nameNode(path), ` was not added: ${visibleName(error?.message ?? error)}`]);
        }
      }
    } finally {
      this.busy = false;
    }
    this._say(uploadSummary(counts, problems.length));
    this._report(
      problems.length === 1 ? "One file was not added:" : `${problems.length} files were not added:`,
      problems,
      renamed,
    );
    clearTimeout(this.pending);
    this.pending = null;
    this.refresh(written.length === 1 ? written[0] : null);
    return written;
  }

  /** A file's name is taken: replace it, keep both (the new one renamed) or skip; for this one or,
   * when `others` more are taken, for all. Escape skips this file. */
  async _askTaken(path, others) {
    const { dialog, body } = createDialog({ title: "This name is taken", className: "small-dialog pa-taken" });
    const textId = `pa-taken-${Math.random().toString(36).slice(2, 8)}`;
    const choose = (value, text, extra = "") =>
      el("button", { type: "button", class: `btn ${extra}`.trim(), text, onclick: () => dialog.close(value) });
    const replace = choose("replace", "Replace", "danger");
    const keep = choose("keep", "Keep both", "primary");
    const skip = choose("skip", "Skip", "ghost");
    const all = el("input", { type: "checkbox", class: "pa-taken-all" });
    body.append(
      el(
        "p",
        { id: textId },
        nameNode(path),
        " is already in the workspace. Replace it, keep both (the new file gets a number) or skip the new file?",
      ),
      others
        ? el(
            "label",
            { class: "pa-taken-all-label" },
            all,
            ` Do the same for the ${others} other file${others === 1 ? "" : "s"} whose names are taken`,
          )
        : "",
      el("div", { class: "dialog-actions" }, skip, keep, replace),
    );
    dialog.setAttribute("aria-describedby", textId);
    const answer = showModal(dialog);
    keep.focus();
    const value = await answer;
    dialog.remove();
    return { choice: ["replace", "keep", "skip"].includes(value) ? value : "skip", all: others > 0 && all.checked };
  }

  // ---- new file, rename, delete (inline forms: an error keeps the form and what was typed) ----

  closeForm() {
    const back = this.form._returnFocus;
    this.form.replaceChildren();
    delete this.form.dataset.for;
    if (back?.isConnected && !back.disabled) back.focus();
  }

  _openForm(kind, returnFocus, ...children) {
    const error = el("p", { class: "pa-form-error", role: "alert" });
    const form = el("form", { class: "pa-form" }, ...children, error);
    form.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        this.closeForm();
      }
    });
    this.form.replaceChildren(form);
    this.form.dataset.for = kind;
    this.form._returnFocus = returnFocus;
    return { form, error };
  }

  _nameForm(kind, label, value, submitText, returnFocus, run, then = null) {
    const id = `pa-${kind}-${Math.random().toString(36).slice(2, 8)}`;
    const input = el("input", { id, class: "pa-input", type: "text", autocomplete: "off", spellcheck: "false" });
    input.value = value;
    const submit = el("button", { type: "submit", class: "pa-button pa-primary", text: submitText });
    const cancel = this._button("Cancel", () => this.closeForm());
    const { form, error } = this._openForm(
      kind,
      returnFocus,
      el("label", { for: id }, ...[label].flat()),
      input,
      el("div", { class: "pa-actions" }, submit, cancel),
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!name) {
        error.textContent = "Type a name first.";
        return;
      }
      submit.disabled = true;
      try {
        const outcome = JSON.parse(await run(name));
        if (outcome.error) {
          error.replaceChildren(...withNames(outcome.error, [name, value]));
          input.focus();
          return;
        }
        this.closeForm();
        clearTimeout(this.pending);
        this.pending = null;
        this.refresh(outcome.path);
        then?.(outcome.path);
      } catch (failure) {
        error.textContent = String(failure?.message ?? failure);
      } finally {
        submit.disabled = false;
      }
    });
    input.focus();
    const dot = value.lastIndexOf(".");
    const slash = value.lastIndexOf("/");
    input.setSelectionRange(slash + 1, dot > slash + 1 ? dot : value.length);
  }

  showNewFile() {
    this._nameForm(
      "new",
      "New file name (folders with /)",
      "",
      "Create",
      this.newButton,
      (name) => this.source.create(name),
      () => this.edit(),
    );
  }

  showRename() {
    const path = this.selected;
    if (!path) return;
    this._nameForm("rename", ["New name for ", nameNode(path)], path, "Save name", this.renameButton, (name) =>
      this.source.rename(path, name),
    );
  }

  showDelete() {
    const path = this.selected;
    if (!path) return;
    const confirm = el("button", { type: "submit", class: "pa-button pa-danger", text: "Delete file" });
    const cancel = this._button("Cancel", () => this.closeForm());
    const { form, error } = this._openForm(
      "delete",
      this.deleteButton,
      el("p", {}, "Delete ", nameNode(path), "? This cannot be undone (Download keeps a copy)."),
      el("div", { class: "pa-actions" }, confirm, cancel),
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      confirm.disabled = true;
      try {
        const outcome = JSON.parse(await this.source.remove(path));
        if (outcome.error) {
          error.replaceChildren(...withNames(outcome.error, [path]));
          return;
        }
        this.form._returnFocus = this.newButton;
        this.closeForm();
        this._say("Deleted ", nameNode(path), ".");
        clearTimeout(this.pending);
        this.pending = null;
        this.refresh();
      } catch (failure) {
        error.textContent = String(failure?.message ?? failure);
      } finally {
        confirm.disabled = false;
      }
    });
    cancel.focus();
  }

  // ---- download ----

  downloadSelected() {
    if (!this.selected) return;
    const bytes = this.source.read(this.selected);
    if (bytes) downloadBytes(bytes, this.selected.split("/").pop());
  }

  downloadAll() {
    downloadBytes(this.source.zip(), this.zipName, "application/zip");
  }

  destroy() {
    clearTimeout(this.pending);
    this.unsubscribe?.();
    this.unsubscribe?.destroy?.();
    this._clearUrls();
    this._endDocument();
    this.root.remove();
  }
}
