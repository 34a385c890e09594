// @ts-check
// Attachments of the message box, on the page's main thread: what a file is, the limits, and the
// workers that do the work (image-worker.js: decode/scale/encode; extract-worker.js: document
// text; one of each, started on first use). Nothing heavy runs here: a file goes to a worker as a Blob and comes back as base64 and
// text. The limits (limits.js) and the message format are described in docs/attachments.md; Python
// checks them again when the message is built (py_agent/app/attachments.py).

import { LIMITS, currentLimits, mb } from "./limits.js";

export { LIMITS };

const IMAGE_TYPES = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  bmp: "image/bmp",
};
const DOC_TYPES = {
  pdf: ["pdf", "application/pdf"],
  docx: ["docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
  xlsx: ["xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
  csv: ["text", "text/csv"],
  tsv: ["text", "text/tab-separated-values"],
};
const TEXT_EXTENSIONS = new Set(
  (
    "txt md markdown rst json jsonl ndjson xml html htm css scss less js mjs cjs ts tsx jsx py pyi ipynb rb go rs java kt " +
    "kts swift c h cc cpp hpp cs m mm php pl lua r sql sh bash zsh fish ps1 bat yml yaml toml ini cfg conf env log " +
    "tex bib svg vue svelte dart scala clj ex exs erl hs ml fs gradle makefile dockerfile gitignore properties"
  ).split(" "),
);
const REFUSED = { doc: "application/msword", ppt: "application/vnd.ms-powerpoint", xls: "application/vnd.ms-excel" };

export const ACCEPT = [
  "image/png,image/jpeg,image/gif,image/webp,image/bmp",
  ".pdf,.docx,.xlsx,.csv,.tsv",
  ...[...TEXT_EXTENSIONS].map((e) => `.${e}`),
  "text/*",
].join(",");

function extension(name) {
  const base = name.toLowerCase().split("/").pop();
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot + 1) : base;
}

/** What a file is: { kind: "image"|"pdf"|"docx"|"xlsx"|"text", mimeType } or { error }. */
export function classify(file) {
  const name = file.name || "file";
  const ext = extension(name);
  const type = (file.type || "").toLowerCase();
  if (REFUSED[ext]) return { error: unsupported(name, type || REFUSED[ext]), mimeType: type || REFUSED[ext] };
  if (type === "image/svg+xml" || ext === "svg") return { kind: "text", mimeType: "image/svg+xml" };
  if (type.startsWith("image/") || IMAGE_TYPES[ext]) return { kind: "image", mimeType: type || IMAGE_TYPES[ext] };
  if (DOC_TYPES[ext]) return { kind: DOC_TYPES[ext][0], mimeType: DOC_TYPES[ext][1] };
  if (type === "application/pdf") return { kind: "pdf", mimeType: type };
  if (type.startsWith("text/") || TEXT_EXTENSIONS.has(ext) || type === "application/json" || type === "application/xml")
    return { kind: "text", mimeType: type || "text/plain" };
  return { error: unsupported(name, type || "unknown type"), mimeType: type || "application/octet-stream" };
}

export function unsupported(name, mime) {
  return `${name}: this file type isn't supported (${mime}). Attach images, PDF, DOCX, XLSX, CSV or text.`;
}

export function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MB`;
}

const FORMAT_LABEL = { pdf: "PDF", docx: "Word", xlsx: "Excel", text: "text" };

/**
 * One warm worker of a kind, doing one job at a time (its library stays loaded between files).
 * A job that outlives the time limit, or a large one, ends the worker; the next job starts a new one.
 */
class WorkerQueue {
  constructor(url) {
    this.url = url;
    this.worker = null;
    this.tail = Promise.resolve();
  }

  run(job, timeoutMs, tooLong) {
    const result = this.tail.then(() => this.runNow(job, timeoutMs, tooLong));
    this.tail = result.catch(() => {});
    return result;
  }

  runNow(job, timeoutMs, tooLong) {
    this.worker ??= new Worker(this.url, { type: "module", name: "py-agent attachments" });
    const worker = this.worker;
    return new Promise((resolve) => {
      const done = (answer) => {
        clearTimeout(timer);
        worker.removeEventListener("message", onMessage);
        worker.removeEventListener("error", onError);
        worker.removeEventListener("messageerror", onError);
        resolve(answer);
      };
      const stop = () => {
        worker.terminate();
        if (this.worker === worker) this.worker = null;
      };
      // Only the job's answer: pdf.js's worker module, imported into the extraction worker,
      // announces itself on the same port. After a large file the worker is ended (`release`):
      // the memory its libraries held for it goes at once, not at some later collection.
      const onMessage = (event) => {
        if (event.data?.id !== job.id) return;
        if (event.data.release) stop();
        done(event.data);
      };
      // The worker failed outside the job's own error handling (it could not start, an answer
      // could not be delivered, or it stopped): the file is reported, the worker replaced.
      const onError = (event) => {
        event.preventDefault?.();
        stop();
        const why = event.message ? ` (${String(event.message).replace(/^Uncaught\s+/, "")})` : "";
        done({ ok: false, error: `${job.name} couldn't be read: the reader stopped${why}.` });
      };
      const timer = setTimeout(() => {
        stop();
        done({ ok: false, error: tooLong });
      }, timeoutMs);
      worker.addEventListener("message", onMessage);
      worker.addEventListener("error", onError);
      worker.addEventListener("messageerror", onError);
      worker.postMessage(job);
    });
  }
}

const imageWorker = new WorkerQueue(new URL("./image-worker.js", import.meta.url));
const extractWorker = new WorkerQueue(new URL("./extract-worker.js", import.meta.url));

let nextId = 1;

/**
 * One attachment of the message box. `status`: "working" | "ready" | "error"; once ready,
 * `toPayload()` is what the `send` command gets (py_agent/app/attachments.py Attachment).
 */
export class PendingAttachment {
  constructor(file, limits = currentLimits()) {
    this.limits = limits;
    this.id = `att${nextId++}`;
    this.file = file;
    this.name = file.name || "file";
    this.size = file.size;
    const kind = classify(file);
    this.kind = kind.kind ?? null;
    this.mimeType = kind.mimeType;
    this.status = "working";
    this.error = kind.error ?? null;
    this.thumbUrl = null;
    this.payload = null;
    this.notice = null; // what was left out (a limit), shown on the chip
    if (!this.error && file.size > limits.maxFileMb * 1024 * 1024)
      this.error = `${this.name} is ${mb(file.size)} MB; the limit is ${limits.maxFileMb} MB.`;
    if (this.error) this.status = "error";
    this.done = this.error ? Promise.resolve(this) : this.process();
  }

  get isImage() {
    return this.kind === "image";
  }

  async process() {
    const tooLong = `Reading ${this.name} took too long.`;
    const job = { id: this.id, kind: this.kind, file: this.file, name: this.name, limits: this.limits };
    const worker = this.kind === "image" ? imageWorker : extractWorker;
    const result = await worker.run(
      this.kind === "image" ? { ...job, mimeType: this.mimeType } : job,
      this.limits.timeoutMs,
      tooLong,
    );
    if (this.removed) return this;
    if (!result.ok) {
      this.status = "error";
      this.error = result.error;
      return this;
    }
    if (this.kind === "image") {
      this.thumbUrl = result.thumb ? URL.createObjectURL(result.thumb) : null;
      this.payload = {
        name: this.name,
        mimeType: this.mimeType,
        size: this.size,
        kind: "image",
        image: {
          data: result.data,
          mimeType: result.mimeType,
          width: result.width,
          height: result.height,
          originalWidth: result.originalWidth,
          originalHeight: result.originalHeight,
          resized: result.resized,
        },
      };
    } else {
      this.payload = {
        name: this.name,
        mimeType: this.mimeType,
        size: this.size,
        kind: "document",
        text: result.text,
        truncated: result.truncated,
        fullText: result.fullText,
        textIsFile: result.textIsFile,
        pages: result.pages,
      };
      this.notice = result.notice ?? null;
      this.format = FORMAT_LABEL[this.kind];
      this.chars = (result.fullText ?? result.text).length;
    }
    this.bytes = result.bytes;
    this.status = "ready";
    return this;
  }

  /** What the `send` command gets (the original bytes decoded to a base64 string only now). */
  toPayload() {
    return { ...this.payload, bytes: new TextDecoder().decode(this.bytes) };
  }

  dispose() {
    this.removed = true;
    this.bytes = null;
    if (this.thumbUrl) URL.revokeObjectURL(this.thumbUrl);
  }
}

/** A File holding pasted text, offered as an attachment when the paste is very long. */
export function pastedTextFile(text) {
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-");
  return new File([text], `pasted-${stamp}.txt`, { type: "text/plain" });
}
