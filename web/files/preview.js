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
import { currentLimits } from "../attachments/limits.js";
import { escapeHtml, markdownToHtml } from "./markdown.js";
import { nameNode, visibleName, withNames } from "../ui/dom.js";
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
const MAX_TABLE_ROWS = 1000;
const MAX_TEXT_CHARS = 2_000_000;
const MAX_EDIT_BYTES = 1_000_000;

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
    this.list = el("ul", { class: "pa-files", "aria-label": "Workspace files" });
    this.viewTitle = el("span", { class: "pa-view-title" });
    this.editButton = this._button("Edit", () => this.edit());
    this.renameButton = this._button("Rename", () => this.showRename());
    this.deleteButton = this._button("Delete", () => this.showDelete());
    this.downloadButton = this._button("Download", () => this.downloadSelected());
    for (const button of [this.editButton, this.renameButton, this.deleteButton, this.downloadButton])
      button.disabled = true;
    this.content = el("div", { class: "pa-view-content" });
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
        el(
          "section",
          { class: "pa-view", "aria-live": "polite", "aria-label": "Selected file" },
          el(
            "div",
            { class: "pa-view-header" },
            this.viewTitle,
            el(
              "div",
              { class: "pa-actions" },
              this.editButton,
              this.renameButton,
              this.deleteButton,
              this.downloadButton,
            ),
          ),
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
    this.unsubscribe = source.subscribe((json) => this._changed(JSON.parse(json)));
    this.refresh();
  }

  _button(text, onclick) {
    return el("button", { type: "button", class: "pa-button", text, onclick });
  }

  _changed(change) {
    // The user's own changes select what they touched themselves; a tool's writes are followed.
    if (change.kind === "write" && change.source && !["import", "panel"].includes(change.source))
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

  refresh(select = null) {
    this.files = JSON.parse(this.source.list());
    this.countEl.textContent = `${this.files.length} file${this.files.length === 1 ? "" : "s"}`;
    this.zipButton.disabled = this.files.length === 0;
    const items = this.files.map((file) => {
      const button = el(
        "button",
        { type: "button", class: "pa-file", "data-path": file.path, onclick: () => this.select(file.path) },
        el("span", { class: "pa-file-name" }, nameNode(file.path)),
        el("span", { class: "pa-file-size", text: formatSize(file.size) }),
      );
      if (file.path === this.selected) button.setAttribute("aria-current", "true");
      return el("li", {}, button);
    });
    this.list.replaceChildren(...items);
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
    for (const button of this.list.querySelectorAll(".pa-file")) {
      if (button.dataset.path === path) button.setAttribute("aria-current", "true");
      else button.removeAttribute("aria-current");
    }
    for (const button of [this.editButton, this.renameButton, this.deleteButton, this.downloadButton])
      button.disabled = !path;
    this.viewTitle.replaceChildren(path ? nameNode(path) : "");
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
    this.root.remove();
  }
}
