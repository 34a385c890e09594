// The workspace panel: the session's files, a preview of the selected one, downloads.
//
//   const preview = new WorkspacePreview(element, source);   // source: py_agent.browser.workspace.PreviewSource
//   preview.select("report.html");  preview.destroy();
//
// HTML, SVG and Markdown are shown ONLY inside sandboxed frames (preview.html in
// <iframe sandbox="allow-scripts">: opaque origin, no network, no page access); images as <img>
// from blob: URLs (SVG never as an image of the page); CSV as a table and text as text, both
// built with textContent. Nothing from a file is ever parsed as HTML in the page.
import { escapeHtml, markdownToHtml } from "./markdown.js";

const HERE = new URL("./", import.meta.url);
const IMAGE_TYPES = {
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp",
  bmp: "image/bmp", ico: "image/x-icon", avif: "image/avif",
};
const MAX_TABLE_ROWS = 1000;
const MAX_TEXT_CHARS = 2_000_000;

function extension(path) {
  const name = path.split("/").pop();
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

export function previewKind(path) {
  const ext = extension(path);
  if (ext === "html" || ext === "htm") return "html";
  if (ext === "svg") return "svg";
  if (ext === "md" || ext === "markdown") return "markdown";
  if (ext in IMAGE_TYPES) return "image";
  if (ext === "csv" || ext === "tsv") return "csv";
  return "text";
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
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
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
    title: `Preview of ${title}`,
    src: new URL("preview.html", HERE).href,
  });
  iframe.addEventListener("load", () => {
    iframe.contentWindow?.postMessage({ kind: "py-agent-preview", html, title }, "*");
  }, { once: true });
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

    this.countEl = el("span", { class: "pa-count" });
    this.zipButton = el("button", { type: "button", class: "pa-button", text: "Download all (.zip)", onclick: () => this.downloadAll() });
    this.list = el("ul", { class: "pa-files", "aria-label": "Workspace files" });
    this.viewTitle = el("span", { class: "pa-view-title" });
    this.downloadButton = el("button", { type: "button", class: "pa-button", text: "Download", onclick: () => this.downloadSelected() });
    this.downloadButton.disabled = true;
    this.content = el("div", { class: "pa-view-content" });
    this.root = el("section", { class: "pa-preview", "aria-label": title },
      el("header", { class: "pa-preview-header" }, el("h2", { text: title }), this.countEl, this.zipButton),
      el("div", { class: "pa-preview-body" },
        this.list,
        el("section", { class: "pa-view", "aria-live": "polite" },
          el("div", { class: "pa-view-header" }, this.viewTitle, this.downloadButton),
          this.content)));
    element.replaceChildren(this.root);
    this.unsubscribe = source.subscribe((json) => this._changed(JSON.parse(json)));
    this.refresh();
  }

  _changed(change) {
    if (change.kind === "write" && change.source && change.source !== "import") this.autoSelect = change.path;
    if (change.kind !== "write" || change.path === this.selected) this.dirtySelection = true;
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      const target = this.autoSelect;
      this.autoSelect = null;
      this.refresh(target);
    }, 80);
  }

  refresh(select = null) {
    this.files = JSON.parse(this.source.list());
    this.countEl.textContent = `${this.files.length} file${this.files.length === 1 ? "" : "s"}`;
    this.zipButton.disabled = this.files.length === 0;
    const items = this.files.map((file) => {
      const button = el("button", { type: "button", class: "pa-file", "data-path": file.path, onclick: () => this.select(file.path) },
        el("span", { class: "pa-file-name", text: file.path }),
        el("span", { class: "pa-file-size", text: formatSize(file.size) }));
      if (file.path === this.selected) button.setAttribute("aria-current", "true");
      return el("li", {}, button);
    });
    this.list.replaceChildren(...items);
    if (!this.files.length) this.list.append(el("li", { class: "pa-empty", text: "No files yet. Files the agent writes appear here." }));
    const stillThere = this.files.some((f) => f.path === this.selected);
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
    this.selected = path;
    this._clearUrls();
    for (const button of this.list.querySelectorAll(".pa-file")) {
      if (button.dataset.path === path) button.setAttribute("aria-current", "true");
      else button.removeAttribute("aria-current");
    }
    this.downloadButton.disabled = !path;
    this.viewTitle.textContent = path ?? "";
    if (!path) {
      this.content.replaceChildren(el("p", { class: "pa-hint", text: this.files.length ? "Select a file to preview it." : "" }));
      return;
    }
    const bytes = this.source.read(path);
    if (!bytes) {
      this.content.replaceChildren(el("p", { class: "pa-hint", text: "This file no longer exists." }));
      return;
    }
    this.content.replaceChildren(this.render(path, bytes));
    this.content.dataset.kind = previewKind(path);
  }

  render(path, bytes) {
    const kind = previewKind(path);
    if (kind === "image") {
      const url = URL.createObjectURL(new Blob([bytes], { type: IMAGE_TYPES[extension(path)] }));
      this.urls.push(url);
      return el("img", { class: "pa-image", src: url, alt: path });
    }
    const text = decodeText(bytes);
    if (text === null) {
      return el("p", { class: "pa-hint", text: `Binary file (${formatSize(bytes.length)}): no preview. Use Download.` });
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
        table.append(el("tbody", {}, ...shown.slice(1).map((row) => el("tr", {}, ...row.map((cell) => el("td", { text: cell }))))));
      }
      const wrap = el("div", { class: "pa-table-wrap" }, table);
      if (rows.length > MAX_TABLE_ROWS) wrap.append(el("p", { class: "pa-hint", text: `First ${MAX_TABLE_ROWS} rows shown.` }));
      return wrap;
    }
    const shownText = text.length > MAX_TEXT_CHARS ? `${text.slice(0, MAX_TEXT_CHARS)}\n…` : text;
    return el("pre", { class: "pa-text" }, el("code", { text: shownText }));
  }

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
    this.root.remove();
  }
}
